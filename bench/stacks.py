"""Stacks: which model (or offline stand-in) serves each role of a run.

Every arm runs on a stack. The `paper` stack is the article's: claude-haiku-4-5 extracts, claude-sonnet-4-6 answers,
judges and escalates, jev-1.13.0 decides; it needs API keys, or a cache that already holds its calls. The `offline`
stack needs no key at all: every role is served by a local stand-in (engram's rules extractor and rules decider, an
extractive answerer, a lexical judge, a local token counter). Stand-ins go through the gateway and the cache exactly
like real models (provider "offline"), and they are labelled as stand-ins wherever a result or table shows them:
their numbers are NOT the paper's numbers.

An arm may override roles (`[models]` in its TOML, for the paper stack; `[models.offline]` for the offline stack);
an offline override must still name a stand-in, so an offline run can never reach a paid provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.errors import ConfigError

STACK_NAMES = ("paper", "offline")  # the stacks a run can use
# Stacks whose results are imported, never run here: "paper-v3" is the v3 paper's stack (gpt-4o-mini answers and
# judging), imported under results/v3/. A result file may name any stack in RESULT_STACK_NAMES.
PAPER_V3_STACK = "paper-v3"
IMPORTED_STACK_NAMES = (PAPER_V3_STACK,)
RESULT_STACK_NAMES = (*STACK_NAMES, *IMPORTED_STACK_NAMES)
# The stack of a run that names none, whatever keys the environment holds: a key never chooses to spend money.
DEFAULT_STACK = "offline"
ROLES = ("extract", "decide", "escalate", "answer", "judge", "count_tokens")

OFFLINE_LABEL = "offline stand-ins — not the paper's numbers"
PAPER_LABEL = "paper stack (claude-haiku-4-5 / claude-sonnet-4-6 / jev-1.13.0)"

# The article's models per role.
PAPER_MODELS: dict[str, str] = {
    "extract": "claude-haiku-4-5",
    "decide": "jev-1.13.0",
    "escalate": "claude-sonnet-4-6",
    "answer": "claude-sonnet-4-6",
    "judge": "claude-sonnet-4-6",
    "count_tokens": "claude-sonnet-4-6",
}

# Local stand-ins; each model id says it is a stand-in so no table can mistake it for a real model.
OFFLINE_MODELS: dict[str, str] = {
    "extract": "rules-extractor-standin-v1",
    "decide": "rules-standin-v1",
    "escalate": "rules-standin-v1",
    "answer": "extractive-answerer-standin-v1",
    "judge": "lexical-judge-standin-v1",
    "count_tokens": "local-token-counter-standin-v1",
}

# Which provider serves a model id; the gateway keys and routes by provider.
_PROVIDER_PREFIXES = (("claude-", "anthropic"), ("jev-", "jev"))


def provider_of(model: str) -> str:
    """ "anthropic" | "jev" | "offline" for a model id (stand-ins carry "standin" in their id)."""
    if "standin" in model:
        return "offline"
    for prefix, provider in _PROVIDER_PREFIXES:
        if model.startswith(prefix):
            return provider
    raise ConfigError(
        f"models: unknown model {model!r}; expected a claude-* or jev-* model, or an offline *-standin-* id"
    )


@dataclass(frozen=True)
class Stack:
    """The model behind every role for one run."""

    name: str
    models: dict[str, str]

    @property
    def standins(self) -> list[str]:
        """Roles served by an offline stand-in (listed in every result)."""
        return sorted(role for role, model in self.models.items() if provider_of(model) == "offline")

    @property
    def label(self) -> str:
        return OFFLINE_LABEL if self.standins else PAPER_LABEL

    @property
    def needs_keys(self) -> bool:
        return any(provider_of(model) != "offline" for model in self.models.values())


def build_stack(name: str, overrides: Mapping[str, str] | None = None) -> Stack:
    """The stack `name` with an arm's role overrides applied (see `Arm.models_for`)."""
    if name not in STACK_NAMES:
        raise ConfigError(f"--stack: expected one of {', '.join(STACK_NAMES)}, found {name!r}")
    models = dict(PAPER_MODELS if name == "paper" else OFFLINE_MODELS)
    for role, model in (overrides or {}).items():
        if role not in ROLES:
            raise ConfigError(f"models.{role}: expected a role among {', '.join(ROLES)}, found {role!r}")
        if name == "offline" and provider_of(model) != "offline":
            raise ConfigError(
                f"models.offline.{role}: the offline stack only takes stand-ins (*-standin-*), found {model!r}"
            )
        provider_of(model)  # refuses unknown model ids early, before any ingestion
        models[role] = model
    return Stack(name=name, models=models)
