"""The union merge (outside the article; `Flags.merge_policy = "union"`, the E1/E2 policy): a confident duplicate
folds its words into the stored text instead of being stored as a new fact. The article keeps duplicates as
reversible same_as links and never merges text. The old text stays in the event log, so nothing is lost.
"""

from __future__ import annotations

import re

from engram._protocols import Embedder
from engram._store import Store
from engram._types import FactOutcome
from engram._write_state import MessageRun, NewFact

_WORD = re.compile(r"[a-z0-9']+")


def union_text(kept: str, other: str) -> str:
    """Keep whichever word set contains the other, else join both."""
    kept_words, other_words = set(_WORD.findall(kept.lower())), set(_WORD.findall(other.lower()))
    if other_words <= kept_words:
        return kept
    if kept_words <= other_words:
        return other
    return f"{kept}; {other}"


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
