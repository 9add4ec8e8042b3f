"""The degraded path (outside the article): the fact's decision request failed as a whole, so nothing is known
about it. The fact is kept, tentative, with the extractor's hints and an undecided belief; nothing else changes."""

from __future__ import annotations

from collections.abc import Sequence

from engram import config
from engram._store import Store
from engram._types import Ask, Decision, Fact, FactOutcome
from engram._write_state import MessageRun, NewFact, insert
from engram.questions import EDGE_TYPES, FALLBACK_EDGE


def write_degraded(
    store: Store, run: MessageRun, fact: NewFact, fact_asks: Sequence[Ask], backend: str, model: str
) -> None:
    message, draft = run.message, fact.draft
    decisions = [
        Decision.degraded(a.question, backend=backend, model=model, target=None, error="decision request failed")
        for a in fact_asks
    ]
    stored = Fact(
        id=fact.fact_id,
        text=draft.text,
        subject=fact.subject,
        predicate=draft.predicate_hint if draft.predicate_hint in EDGE_TYPES else FALLBACK_EDGE,
        object=fact.object,
        kind=draft.kind_hint,
        durability=draft.durability_hint,
        sensitivity="none",
        temporal_status="current",
        valid_from=draft.valid_from or message.when,
        valid_until=None,
        belief=config.INITIAL_TENTATIVE_BELIEF,
        tentative=True,
        confidence=0.0,
        closed_reason=None,
        closed_by=None,
        source_message_id=message.id,
        source_text=draft.source_text or message.text,
        said_at=message.when,
        seq=store.next_seq(),
    )
    insert(store, run, stored, fact.vector, decisions)
    run.outcomes.append(FactOutcome(draft.text, fact.fact_id, "fallback", "new", 0.0, None, tentative=True))
