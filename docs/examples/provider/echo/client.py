"""The echo provider's chat model (engram's `LLM` protocol): every call is a gateway call, keyed on its whole body,
so it is cached and replayed like a paid model's; the "server" is a function here."""

from __future__ import annotations

from typing import Any

from bench.models.cache import CallRequest
from bench.models.gateway import Gateway, LiveResponse
from echo.errors import refused_when_empty
from engram import Completion

PROVIDER = "echo"


def echo_reply(messages: list[dict[str, Any]]) -> str:
    """The last non-empty line of the last user message."""
    text = next(str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user")
    return [line for line in text.splitlines() if line.strip()][-1].strip()


class EchoChat:
    def __init__(self, gateway: Gateway, model: str) -> None:
        self.gateway = gateway
        self.model = model

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict[str, Any]],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        body = {"model": model, "system": system, "messages": messages, "max_tokens": max_tokens}
        refused_when_empty(messages, f"echo chat ({model}, {role})")
        request = CallRequest(PROVIDER, "chat", model, body, role)

        def live(_: CallRequest) -> LiveResponse:
            reply = echo_reply(messages)
            # Token counts as a real server would report them; priced by the stack file's prices ($0 here).
            return LiveResponse(
                body={"text": reply}, input_tokens=len(str(messages).split()), output_tokens=len(reply.split())
            )

        result = self.gateway.call(request, live)
        return Completion(
            text=str(result.body["text"]),
            model=result.model,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            cached=result.cached,
        )

    def close(self) -> None:
        """Nothing to release (a real client closes its HTTP session here)."""
