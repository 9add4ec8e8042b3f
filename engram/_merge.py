"""Outcomes outside the article that change a stored fact's text instead of storing a new fact (the article keeps
duplicates as reversible same_as links and never merges text):

- union merge (`Flags.merge_policy = "union"`, the E1/E2 policy): a confident duplicate folds its words into the
  stored text;
- rewrite (`Flags.mem0_update = "rewrite"`, the original's reading of mem0's UPDATE): the stored fact takes the
  LLM's merged text.
The old text stays in the event log either way, so nothing is lost.
"""

from __future__ import annotations

import re

from engram._protocols import Embedder
from engram._store import Store
from engram._types import FactOutcome
from engram._write_state import ESCALATION_BACKEND, MessageRun, NewFact

_WORD = re.compile(r"[a-z0-9']+")


def union_text(kept: str, other: str) -> str:
    """Keep whichever word set contains the other, else join both."""
    kept_words, other_words = set(_WORD.findall(kept.lower())), set(_WORD.findall(other.lower()))
    if other_words <= kept_words:
        return kept
    if kept_words <= other_words:
        return other
    return f"{kept}; {other}"


def rewrite(store: Store, embedder: Embedder, run: MessageRun, fact: NewFact, target: str) -> None:
    """mem0's UPDATE as a rewrite: the stored fact takes the LLM's merged text; the old text stays in its history."""
    decision = fact.cands.relation[target]
    old = store.get(target).text
    new_text = decision.text or union_text(old, fact.draft.text)
    store.rewrite(target, new_text, embedder.embed([new_text])[0])
    store.log("rewrite", target, run.message.id, old_text=old, new_text=new_text)
    store.add_decisions(target, run.message.id, [*fact.fact_decisions, decision])
    escalated = decision.backend == ESCALATION_BACKEND
    run.outcomes.append(FactOutcome(fact.draft.text, target, "rewritten", "rewrite", 1.0, target, escalated=escalated))


def merge_duplicate(
    store: Store, embedder: Embedder, run: MessageRun, fact: NewFact, target: str, pi_star: float
) -> None:
    """The union policy: a confident duplicate folds its words into the stored text (old text logged)."""
    old = store.get(target).text
    merged = union_text(old, fact.draft.text)
    if merged != old:
        store.rewrite(target, merged, embedder.embed([merged])[0])
    store.log("merge", target, run.message.id, old_text=old, new_text=merged)
    store.add_decisions(target, run.message.id, [*fact.fact_decisions, fact.cands.relation[target]])
    run.outcomes.append(FactOutcome(fact.draft.text, target, "merged", "duplicate", pi_star, target))
