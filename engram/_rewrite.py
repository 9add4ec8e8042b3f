"""mem0's UPDATE kept as a rewrite (outside the article; `Flags.mem0_update = "rewrite"`, the original's reading):
the stored fact takes the LLM's merged text instead of a new fact being stored, and no belief changes. The old text
stays in the event log, so nothing is lost.
"""

from __future__ import annotations

from engram._merge import union_text
from engram._protocols import Embedder
from engram._store import Store
from engram._types import FactOutcome
from engram._write_state import ESCALATION_BACKEND, MessageRun, NewFact


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
