"""`turns-rerank` (the v3 paper's T0R): raw turns, a cosine shortlist, one typed relevance rerank, the top k.

Writes are the raw-turn-rag store (every turn kept and embedded, nothing extracted, nothing decided). A question
takes the `shortlist` turns closest by MiniLM cosine and sends ONE typed request to the stack's decide model through
the gateway: for each shortlisted turn, engram's `relevant_to_query` yes/no question with the turn (speaker, text,
session date) as its memory. The shown lines are the shortlist ordered by P(relevant), highest first (ties keep the
cosine order), cut at k; a k above the shortlist continues with the next turns by cosine.

The decide model is whatever the stack names: Jev on the paper stacks, engram's rules decider (an OFFLINE STAND-IN)
offline. A turn whose answer came back degraded sorts after every judged turn, in cosine order; if the whole request
fails the question is answered from the cosine order and the retrieval says so (`notes.degraded`). The ordering does
not depend on k, so the runner may sweep k from one retrieval.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.systems.base import RetrievedLines, Setting, register_system
from bench.systems.raw_turn_rag import RawTurnRagSystem
from engram import Ask, DecisionError
from engram.questions import RELEVANT_TO_QUERY, relevance_key

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion

# Rank of a degraded answer: below every probability, so judged turns always come first.
_UNJUDGED = -1.0


def relevance_asks(turns: list[SliceMessage]) -> list[Any]:
    """One `relevant_to_query` ask per turn, keyed by its shortlist position."""
    return [
        Ask(
            relevance_key(i),
            RELEVANT_TO_QUERY,
            {"memory": {"text": f"{m.speaker}: {m.text}", "valid_from": m.session_date, "valid_until": None}},
            m.id,
        )
        for i, m in enumerate(turns)
    ]


@register_system("turns-rerank")
class TurnsRerankSystem(RawTurnRagSystem):
    SETTINGS = (
        *RawTurnRagSystem.SETTINGS,
        Setting("shortlist", int, 30, "turns closest by cosine that the decide model judges for relevance"),
    )
    MODEL_CALLS_PER_MESSAGE = None  # one rerank request per question, its size set by the shortlist

    def __init__(self, settings: dict[str, Any], context: Any) -> None:
        super().__init__(settings, context)
        self.decider = context.hub.decider()  # the stack's decide model, from the provider registry

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        if not self._turns:
            return RetrievedLines((), ())
        vectors = self._embedded()
        cosine = vectors @ self.context.get_embedder().embed([question.question])[0]
        by_cosine = [int(i) for i in np.argsort(-cosine, kind="stable")]
        shortlist = by_cosine[: self.settings["shortlist"]]
        turns = [self._turns[i] for i in shortlist]
        asks = relevance_asks(turns)
        notes: dict[str, Any] = {"shortlist": len(shortlist)}
        try:
            answers = self.decider.ask({"query": question.question}, asks)
        except DecisionError:
            answers, notes["degraded"] = {}, True
        relevance = []
        for position in range(len(shortlist)):
            decision = answers.get(relevance_key(position))
            judged = decision is not None and not decision.fallback
            relevance.append(decision.p("yes") if decision is not None and judged else _UNJUDGED)
        # Sort on (−P(relevant), cosine position): the cosine order breaks ties, so the ranking is deterministic.
        order = sorted(range(len(shortlist)), key=lambda pos: (-relevance[pos], pos))
        ranked: list[tuple[int, float | None, str]] = [(shortlist[pos], relevance[pos], "rerank") for pos in order]
        ranked += [(i, None, "cosine") for i in by_cosine[len(shortlist) :]]
        chosen = ranked if k is None else ranked[:k]
        decisions = list(answers.values())
        lines = tuple(self._line(self._turns[i]) for i, _, _ in chosen)
        return RetrievedLines(
            lines=lines,
            sources=tuple((self._turns[i].id,) for i, _, _ in chosen),
            cost_usd=math.fsum(d.cost_usd for d in decisions),
            latency_ms=max((d.latency_ms for d in decisions), default=0.0),
            notes=notes,
            details=tuple(
                {
                    "turn": self._turns[i].id,
                    "cosine": float(cosine[i]),
                    "p_relevant": p if p != _UNJUDGED else None,
                    "found_by": how,
                }
                for i, p, how in chosen
            ),
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "decider": {"name": self.decider.name, "model": self.decider.model},
            "rerank_question": "relevant_to_query",
            "shortlist": self.settings["shortlist"],
        }

        super().close()
