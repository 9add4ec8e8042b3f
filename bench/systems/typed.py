"""The typed decision backend behind a stack's `decide` role, for every system that asks typed questions.

`rules-standin-v1` is engram's rules decider (an OFFLINE STAND-IN over MiniLM) reached through the gateway like a
model; `jev-*` is Jev through its client. Other decide models (an OpenAI-compatible logprob decider) are added here
when their provider exists, so engram and the turn reranker never disagree on what a model id means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError

if TYPE_CHECKING:
    from bench.gateway import Gateway
    from engram import DecisionBackend, Embedder

RULES_DECIDER = "rules-standin-v1"


@dataclass(frozen=True)
class TypedBackend:
    """The backend, and what must be closed with the system that uses it (a client's thread), if anything."""

    backend: DecisionBackend
    closer: Any | None = None


def typed_backend(model: str, gateway: Gateway, embedder: Embedder, who: str) -> TypedBackend:
    """The decision backend for `model`; `who` names the system in the error a wrong model gets."""
    if model == RULES_DECIDER:
        from bench.clients.wrappers import GatewayDecider
        from engram.deciders import RulesDecider

        return TypedBackend(GatewayDecider(RulesDecider(embedder), gateway))
    if model.startswith("jev-"):
        from bench.clients.jev import JevDecider

        jev = JevDecider(gateway, model)
        return TypedBackend(jev, closer=jev)
    raise ConfigError(
        f"models.decide: {who}'s typed questions run on {RULES_DECIDER!r} or a jev-* model, found {model!r}"
    )
