"""The direct ("E2") write policy (outside the article; `Flags.policy = "direct"`): no belief. A confident,
current superseding answer about u* closes u* at once (closed_reason "superseded"); nothing reopens.
"""

from __future__ import annotations

from dataclasses import replace

from engram import _belief as belief
from engram._flags import Flags
from engram._store import Store
from engram._types import Decision, Fact, FactOutcome
from engram._write_state import ACTION_OF_RELATION, MessageRun, NewFact, all_decisions, insert
from engram.questions import SUPERSEDING


def write_direct(
    store: Store,
    run: MessageRun,
    fact: NewFact,
    stored: Fact,
    target: str | None,
    r_star: str,
    acted: bool,
    escalated: bool,
    temporal: Decision,
    flags: Flags,
) -> None:
    cands = fact.cands
    close = (
        target is not None
        and r_star in SUPERSEDING
        and acted
        and not stored.tentative
        and belief.temporal_gate(temporal, flags)
    )
    if close and target is not None:
        old = store.get(target)
        sibling = old.subject == stored.subject and old.predicate == stored.predicate
        if not belief.cardinality_gate(r_star, old.predicate, sibling, flags):
            store.log("blocked_cardinality", target, run.message.id, relation=r_star, by=stored.id)
            close = False
    if r_star in SUPERSEDING and not close:
        stored = replace(stored, tentative=True)
    insert(store, run, stored, fact.vector, all_decisions(fact))
    if close and target is not None:
        when = max(stored.valid_from, store.get(target).valid_from)
        if store.close(target, when, "superseded", stored.id):
            store.log("close", target, run.message.id, reason="superseded", by=stored.id)
            run.closes.append(target)
    linked = False
    if r_star == "duplicate" and acted and not stored.tentative and target is not None:
        store.link_same_as(target, stored.id, 1.0 if escalated else cands.relation[target].confidence, run.message.id)
        store.log("same_as", stored.id, run.message.id, other=target)
        linked = True
    action = "same_as" if linked else ACTION_OF_RELATION.get(r_star, "inserted")
    pi = cands.relation[target].confidence if target is not None and target in cands.relation else 1.0
    run.outcomes.append(
        FactOutcome(stored.text, stored.id, action, r_star, pi, target, escalated=escalated, tentative=stored.tentative)
    )
