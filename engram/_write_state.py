"""What the write path carries while it writes one message: the message's bookkeeping, the fact being written, its
candidates and the answers about them. Shared by the article's path (`engram._write`) and the arms outside the
article (`engram._direct`, `engram._merge`, `engram._rewrite`, `engram._degraded`, `engram._escalation`,
`engram._llm_decider`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram._store import Store
from engram._types import Decision, ExtractedFact, Fact, FactOutcome, Message, Usage
from engram.questions import FALLBACK_EDGE, PLAN_RELATIONS

REWRITE = "rewrite"  # mem0's UPDATE kept as a text rewrite: not a relation of R
ESCALATION_BACKEND = "llm_escalation"  # the backend name on an escalated verdict
LLM_DECIDER_BACKEND = "llm_decider"  # the backend name on the LLM decider's verdict

ACTION_OF_RELATION = {
    "new": "inserted",
    "duplicate": "inserted",
    "refinement": "refined",
    "update": "updated",
    "contradiction": "contradicted",
    "negates": "negated",
}


@dataclass
class MessageRun:
    """One message's bookkeeping: what it stored, closed and reopened, and the usage of every decision call."""

    message: Message
    upcoming: Message | None = None  # the next message, when the caller named it (`Engram.add_many`)
    fact_ids: list[str] = field(default_factory=list)
    outcomes: list[FactOutcome] = field(default_factory=list)
    closes: list[str] = field(default_factory=list)
    reopens: list[str] = field(default_factory=list)
    escalations: int = 0
    decision_usage: list[Usage] = field(default_factory=list)
    belief_snapshot: dict[str, float] = field(default_factory=dict)  # beliefs before the message (lost-update replay)


@dataclass
class Candidates:
    """C(f) and the answers about each candidate, by candidate id, in the order they were asked."""

    ids: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)  # candidate id -> i of relation_to_candidate__i
    relation: dict[str, Decision] = field(default_factory=dict)
    plan: dict[str, Decision] = field(default_factory=dict)
    llm_new: Decision | None = None  # the LLM decider's "new" about no candidate in particular

    def add(self, fact_id: str) -> int:
        self.index[fact_id] = len(self.ids)
        self.ids.append(fact_id)
        return self.index[fact_id]


@dataclass
class NewFact:
    """The extracted fact being written: its draft, id, vector, the decision state and the answers so far."""

    draft: ExtractedFact
    fact_id: str
    subject: str
    object: str
    vector: np.ndarray
    scores: np.ndarray  # s_cos(f, u) for every stored u, by store row
    state: dict[str, Any]
    cands: Candidates = field(default_factory=Candidates)
    fact_decisions: list[Decision] = field(default_factory=list)
    relation: str = FALLBACK_EDGE  # rel(f), once the first request answered edge_type
    decider_failed: bool = False  # the LLM-decider arm's call failed: the fact stays tentative
    # set when `scores` came from a batched product (`Store.scores_few`): each pick makes its rows exact first
    exact_for: np.ndarray | None = None


def ref(fact: Fact) -> dict[str, Any]:
    """A stored fact as the decision questions see it."""
    return {
        "text": fact.text,
        "subject": fact.subject,
        "object": fact.object,
        "valid_from": fact.valid_from.date().isoformat(),
    }


def is_plan(fact: Fact) -> bool:
    return fact.predicate in PLAN_RELATIONS or fact.temporal_status == "planned"


def insert(store: Store, run: MessageRun, fact: Fact, vector: np.ndarray, decisions: Sequence[Decision]) -> None:
    """Store a new fact with its vector and the decisions that shaped it."""
    store.add_facts([fact], np.asarray(vector, dtype=np.float32)[None, :])
    store.add_decisions(fact.id, run.message.id, decisions)
    store.log("insert", fact.id, run.message.id, belief=fact.belief, tentative=fact.tentative)
    run.fact_ids.append(fact.id)


def all_decisions(fact: NewFact) -> list[Decision]:
    """The fact questions' answers, then every relation and plan answer about its candidates."""
    return [*fact.fact_decisions, *fact.cands.relation.values(), *fact.cands.plan.values()]
