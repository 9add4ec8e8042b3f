"""The offline provider's chat stand-in (imported when the role is built: it brings the gateway with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.models.clients.wrappers import OfflineLLM
from engram.deciders import RulesUpdateLLM

if TYPE_CHECKING:
    from engram import DecisionBackend


class RulesUpdateStandin(OfflineLLM):
    """OFFLINE STAND-IN for the chat model that answers mem0's update prompt (escalation, LLM decider): engram's
    `RulesUpdateLLM` over the rules decider. Its model id is the rules decider's own."""

    # Keyed under the rules decider's own version (no fixed key names): a revised decider must not replay the
    # answers an earlier version recorded.

    def __init__(self, gateway: Any, decider: DecisionBackend) -> None:
        super().__init__(gateway)
        self.inner = RulesUpdateLLM(decider)
        self.model = decider.model

    def respond(
        self, *, role: str, system: str | None, messages: list[dict], max_tokens: int, temperature: float | None
    ) -> str:
        return self.inner.complete(
            role=role,
            model=self.model,
            system=system,
            messages=messages,
            max_tokens=max_tokens,
            temperature=temperature,
        ).text
