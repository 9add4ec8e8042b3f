"""Escalation: r* <- L(f, u*) when r* is superseding and pi* < theta_esc (the article's second zone), and how an
LLM's mem0-style verdict becomes a relation.

mem0's update prompt answers ADD / UPDATE / DELETE / NONE. DELETE maps to `contradiction`, ADD to `new`, NONE to
`duplicate`. UPDATE has no counterpart in R: with `Flags.mem0_update = "update"` (the article, whose r* is always in
R) it becomes `update`, so the new fact is stored and the old one loses belief like after any superseding answer;
with "rewrite" (the original) the stored fact's text is replaced by the LLM's merged text (`engram._merge`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from engram import config
from engram._exceptions import LLMError
from engram._flags import Flags
from engram._protocols import LLM
from engram._store import Store
from engram._types import Decision, Usage
from engram._write_state import ESCALATION_BACKEND, REWRITE, MessageRun, NewFact
from engram.deciders._llm import mem0_update_decision
from engram.questions import SUPERSEDING


@dataclass(frozen=True)
class Escalation:
    """An LLM's verdict on (new fact, u*): contradiction | rewrite | new | duplicate, with the merged text for a
    rewrite and the usage of the call."""

    relation: str
    text: str | None
    usage: Usage


class Escalator(Protocol):
    model: str

    def judge(self, existing: str, new: str) -> Escalation: ...


@dataclass
class Mem0UpdateEscalator:
    """Escalation with mem0's update-memory prompt on an LLM (the article's L(f, u*)); the prompt call and its
    event mapping live in `engram.deciders`, shared with the LLM-decider arm."""

    llm: LLM
    model: str = config.LLM_MODEL

    def judge(self, existing: str, new: str) -> Escalation:
        outcome = mem0_update_decision(self.llm, self.model, [existing], new)
        completion = outcome.completion
        usage = (
            completion.usage("escalate", "llm")
            if completion is not None
            else Usage(role="escalate", backend="llm", model=self.model)
        )
        return Escalation(relation=outcome.relation, text=outcome.text, usage=usage)


def as_relation(decision: Decision, flags: Flags) -> Decision:
    """An LLM verdict with mem0's UPDATE, as the flag says: `update` (in R) or left a `rewrite`."""
    if decision.chosen != REWRITE or flags.mem0_update == REWRITE:
        return decision
    options = tuple(o for o in decision.options if o != REWRITE)
    return replace(decision, options=options, probs={"update": 1.0}, chosen="update", text=None)


def should_escalate(target: str | None, r_star: str, pi_star: float, flags: Flags, escalator: object) -> bool:
    """escalate, r* <- L(f, u*), if r* in S and pi* < theta_esc"""
    return (
        target is not None
        and r_star in SUPERSEDING
        and pi_star < config.THETA_ESC
        and flags.escalate
        and escalator is not None
    )


def escalate(
    store: Store, run: MessageRun, fact: NewFact, target: str, escalator: Escalator, flags: Flags
) -> tuple[bool, bool]:
    """Ask L(f, u*); its answer replaces the typed answer about u*, at p = 1. Returns (escalated, failed)."""
    run.escalations += 1
    try:
        verdict = escalator.judge(store.get(target).text, fact.draft.text)
    except LLMError as exc:
        store.log("escalation_failed", target, run.message.id, error=str(exc))
        fact.cands.relation.pop(target, None)  # both facts stay as they are
        return False, True
    run.decision_usage.append(verdict.usage)
    previous = fact.cands.relation[target]
    decision = Decision(
        question=previous.question,
        options=(*previous.options, REWRITE),
        probs={verdict.relation: 1.0},
        chosen=verdict.relation,
        confidence=1.0,
        backend=ESCALATION_BACKEND,
        model=escalator.model,
        latency_ms=verdict.usage.latency_ms,
        cost_usd=verdict.usage.cost_usd,
        target=target,
        text=verdict.text,
    )
    fact.cands.relation[target] = as_relation(decision, flags)
    store.log(
        "escalation", target, run.message.id, typed=previous.chosen, typed_p=previous.confidence, llm=verdict.relation
    )
    return True, False
