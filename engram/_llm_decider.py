"""The LLM-decider arm (outside the article): instead of one typed relation question per candidate, one LLM call per
extracted fact judges the new fact against all its candidates at once (`engram.deciders.LLMRelationDecider`).
Its verdict is certain (p = 1) and about at most one candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from engram._escalation import as_relation
from engram._flags import Flags
from engram._store import Store
from engram._types import Decision, Usage
from engram._write_state import MessageRun, NewFact


class RelationDecider(Protocol):
    """The LLM-decider arm's shape: `decide(new, [(id, text)])` returns a verdict with `.decision` (a certain
    Decision about at most one candidate, `.target`) and `.text` (the merged text of a rewrite);
    `.verdict.completion`, when present, carries the call's usage."""

    name: str
    model: str

    def decide(self, new: str, candidates: Sequence[tuple[str, str]]) -> Any: ...


def ask_relation_decider(
    store: Store, run: MessageRun, fact: NewFact, relation_decider: RelationDecider, flags: Flags
) -> bool:
    """One call with every candidate; its verdict joins the candidates' answers. False when the call failed (the
    fact is then kept tentative)."""
    cands = fact.cands
    verdict = relation_decider.decide(fact.draft.text, [(i, store.get(i).text) for i in cands.ids])
    decision: Decision = verdict.decision
    completion = getattr(getattr(verdict, "verdict", None), "completion", None)
    if completion is not None or decision.fallback:
        run.decision_usage.append(
            Usage(
                role="decide",
                backend=relation_decider.name,
                model=relation_decider.model,
                cost_usd=decision.cost_usd,
                latency_ms=decision.latency_ms,
                input_tokens=getattr(completion, "input_tokens", 0),
                output_tokens=getattr(completion, "output_tokens", 0),
                cached=bool(getattr(completion, "cached", False)),
            )
        )
    if decision.fallback:
        store.log("llm_decider_failed", None, run.message.id, error=decision.error)
        return False
    if decision.target is not None:
        cands.relation[decision.target] = as_relation(replace(decision, text=getattr(verdict, "text", None)), flags)
    else:
        cands.llm_new = decision
    return True
