"""Baseline `raw-turn-rag`: every turn embedded with MiniLM; a question gets the k most similar turns, with dates.

No extraction and no decisions, so it is the cheapest memory there is and writes cost nothing (embedding is
local). Turns are embedded as `<speaker>: <text>` (the speaker name is part of what a turn says) and shown as
`[<session date>] <speaker>: <text>`, ranked by cosine to the question; equal scores keep conversation order.

Embedding is deferred to the first retrieval after new turns arrive, in one batch, because MiniLM is much faster
per text in batches; the batches depend only on the slice and its checkpoints, so reruns embed identically.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bench.systems.base import RetrievedLines, Setting, System, WriteUsage, register_system, turn_store_stats
from bench.systems.full_context import render_turn

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion


@register_system("raw-turn-rag")
class RawTurnRagSystem(System):
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("show_dates", bool, True, "prefix each shown turn with its session date"),
    )
    MODEL_CALLS_PER_MESSAGE: ClassVar[Mapping[str, int] | None] = {}  # turns are embedded locally: no model call

    def __init__(self, settings: dict[str, Any], context: Any) -> None:
        super().__init__(settings, context)
        self._turns: list[SliceMessage] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def write(self, message: SliceMessage) -> WriteUsage:
        self._turns.append(message)
        return WriteUsage()

    def _embedded(self) -> np.ndarray:
        pending = self._turns[len(self._vectors) :]
        if pending:
            fresh = self.context.get_embedder().embed([f"{m.speaker}: {m.text}" for m in pending])
            self._vectors = fresh if len(self._vectors) == 0 else np.vstack([self._vectors, fresh])
        return self._vectors

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        if not self._turns:
            return RetrievedLines((), ())
        vectors = self._embedded()
        query = self.context.get_embedder().embed([question.question])[0]
        scores = vectors @ query
        # Stable sort on the negated score: ties keep conversation order, so the ranking is deterministic.
        limit = len(self._turns) if k is None else k
        order = np.argsort(-scores, kind="stable")[:limit]
        chosen = [self._turns[i] for i in order]
        lines = tuple(self._line(m) for m in chosen)
        return RetrievedLines(lines=lines, sources=tuple((m.id,) for m in chosen))

    def _line(self, turn: SliceMessage) -> str:
        return render_turn(turn) if self.settings["show_dates"] else f"{turn.speaker}: {turn.text}"

    def stats(self) -> dict[str, Any]:
        return turn_store_stats(len(self._turns))

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "embedder": self.context.get_embedder().name,
            "embedded_text": "<speaker>: <text>",
            "line_format": "[<session_date>] <speaker>: <text>",
        }
