"""Anthropic's Messages API behind the gateway: engram's `LLM` protocol, token counting, and raw message calls.

The installed SDK's `messages.create()` has no temperature/top_p/top_k parameters, so every field beyond `model`,
`max_tokens` and `messages` travels in `extra_body`: the body we key on is exactly the JSON that is sent. The SDK's
own retries are off; `bench.models.clients.retry` is the one policy. The key comes from $ANTHROPIC_API_KEY and the base
URL from $ANTHROPIC_BASE_URL (the tests point it at a local server), read only when a call must go out.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

import anthropic

from bench.models.cache import CallRequest
from bench.models.clients.loop import LoopThread
from bench.models.clients.retry import RetryPolicy
from bench.models.clients.sdk import SDKClient
from bench.models.gateway import CallResult, Gateway, LiveResponse
from bench.models.providers.anthropic.errors import (
    AnthropicRateLimited,
    AnthropicRefused,
    AnthropicUnavailable,
    sdk_failure,
)
from engram import Completion

PROVIDER = "anthropic"
EXTRACTION_MODEL = "claude-haiku-4-5"
ANSWER_MODEL = "claude-sonnet-4-6"  # answers, judge, escalation, LLM decider
SENT_AS_PARAMETERS = ("model", "max_tokens", "messages")
COUNT_TOKENS_FIELDS = ("system", "tools", "thinking", "tool_choice", "output_config")


def message_text(body: Mapping[str, Any]) -> str:
    """The reply's text: its text blocks joined (thinking and tool blocks are not part of the answer)."""
    return "".join(block.get("text", "") for block in body.get("content", []) if block.get("type") == "text")


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int, int]:
    """Input tokens include cache reads and writes (all billed at the input price here, as in v1)."""
    usage = usage or {}
    input_tokens = sum(
        int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    return input_tokens, int(usage.get("output_tokens") or 0)


class AnthropicLLM(SDKClient):
    """`engram.LLM` over the Messages API, through the gateway, with bounded concurrency."""

    def __init__(
        self,
        gateway: Gateway,
        timeout_s: float = 120.0,
        max_concurrency: int = 4,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        self.gateway = gateway
        self.timeout_s = timeout_s
        self.retry = retry
        self.http_statuses: dict[str, int] = {}
        self._max_concurrency = max_concurrency
        self._loop = LoopThread("anthropic-client")
        self._client: anthropic.AsyncAnthropic | None = None
        self._semaphore: asyncio.Semaphore | None = None

    # -- engram's LLM protocol ---------------------------------------------------------------------------------

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        return self._loop.run(
            self.acomplete(
                role=role, model=model, system=system, messages=messages, max_tokens=max_tokens, temperature=temperature
            )
        )

    async def acomplete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
        if system is not None:
            body["system"] = system
        if temperature is not None:
            body["temperature"] = temperature
        result = await self.amessage(body, purpose=role)
        return Completion(
            text=message_text(result.body),
            model=result.model,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            cached=result.cached,
        )

    # -- raw calls (structured output, thinking, tools: any Messages API body) ---------------------------------

    def message(self, body: Mapping[str, Any], purpose: str, replicate: int = 0) -> CallResult:
        return self._loop.run(self.amessage(body, purpose, replicate))

    async def amessage(self, body: Mapping[str, Any], purpose: str, replicate: int = 0) -> CallResult:
        request = CallRequest(PROVIDER, "messages", str(body["model"]), dict(body), purpose, replicate)
        return await self.gateway.acall(request, lambda r: self._loop.run_async(self._send_message(r)))

    def count_tokens(self, model: str, messages: list[dict], system: str | None = None) -> int:
        return self._loop.run(self.acount_tokens(model, messages, system))

    async def acount_tokens(self, model: str, messages: list[dict], system: str | None = None) -> int:
        body: dict[str, Any] = {"model": model, "messages": messages}
        if system is not None:
            body["system"] = system
        request = CallRequest(PROVIDER, "count_tokens", model, body, "count_tokens")
        result = await self.gateway.acall(request, lambda r: self._loop.run_async(self._send_count(r)))
        return int(result.body["input_tokens"])

    # -- the wire ----------------------------------------------------------------------------------------------

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            api_key = os.environ.get("ANTHROPIC_API_KEY")
            if not api_key:
                raise AnthropicRefused(
                    "environment ANTHROPIC_API_KEY: expected a key to call Anthropic live, found none"
                )
            # base_url None lets the SDK read $ANTHROPIC_BASE_URL; max_retries=0 leaves retrying to our policy.
            self._client = anthropic.AsyncAnthropic(
                api_key=api_key, base_url=os.environ.get("ANTHROPIC_BASE_URL"), max_retries=0, timeout=self.timeout_s
            )
            self._semaphore = asyncio.Semaphore(self._max_concurrency)
        return self._client

    async def _send_message(self, request: CallRequest) -> LiveResponse:
        client = self._sdk()
        params = {k: request.body[k] for k in SENT_AS_PARAMETERS}
        extra = {k: v for k, v in request.body.items() if k not in SENT_AS_PARAMETERS}
        reply, latency = await self._with_retries(
            request, lambda: client.messages.create(**params, extra_body=extra or None)
        )
        body = reply.model_dump(mode="json")
        input_tokens, output_tokens = usage_tokens(body.get("usage"))
        return LiveResponse(
            body=body,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=str(body.get("model") or request.model),
            latency_ms=latency,
        )

    async def _send_count(self, request: CallRequest) -> LiveResponse:
        client = self._sdk()
        extra = {k: v for k, v in request.body.items() if k not in ("model", "messages")}
        reply, latency = await self._with_retries(
            request,
            lambda: client.messages.count_tokens(
                model=request.body["model"], messages=request.body["messages"], extra_body=extra or None
            ),
        )
        return LiveResponse(
            body={"input_tokens": int(reply.input_tokens)}, model=request.model, cost_usd=0.0, latency_ms=latency
        )

    async def _with_retries(self, request: CallRequest, send: Any) -> tuple[Any, float]:
        where = f"anthropic {request.endpoint} ({request.model}, {request.purpose})"

        async def attempt() -> Any:
            try:
                reply = await send()
            except Exception as exc:
                mapped = sdk_failure(exc, where)
                if mapped is None:
                    raise
                outcome, error = mapped
                if outcome is not None:
                    self._count(outcome)
                raise error from None
            self._count("200")
            return reply

        return await self._run_retried(attempt, where, AnthropicUnavailable, AnthropicRateLimited)


class AnthropicTokenCounter:
    """`TokenCounter` on the paper stack: Anthropic's count endpoint (free, cached like every call)."""

    def __init__(self, llm: AnthropicLLM, model: str = ANSWER_MODEL) -> None:
        self.llm = llm
        self.model = model
        self.name = f"anthropic-count:{model}"

    def count(self, text: str) -> int:
        return self.llm.count_tokens(self.model, [{"role": "user", "content": text}])
