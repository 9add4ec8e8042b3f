"""Baseline `full-context`: no memory at all; the answer model sees every turn said before the question.

This bounds what retrieval can add: it is the most context the answer model could be given. Each turn is one line,
`[<session date>] <speaker>: <text>`, in conversation order. k is ignored (recorded as `k_ignored` in every
retrieval), and the line count grows with the conversation, so token figures are large by design. Writing costs
nothing: no model is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from bench.systems.base import RetrievedLines, System, WriteUsage, register_system, turn_store_stats

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion


def render_turn(message: SliceMessage) -> str:
    """One conversation turn as a dated line (shared with raw-turn-rag so both baselines show turns alike)."""
    return f"[{message.session_date}] {message.speaker}: {message.text}"


@register_system("full-context")
class FullContextSystem(System):
    """Keeps the transcript; shows all of it for every question."""

    MODEL_CALLS_PER_MESSAGE: ClassVar[Mapping[str, int] | None] = {}  # writing keeps the turn: no model call

    def __init__(self, settings: dict[str, Any], context: Any) -> None:
        super().__init__(settings, context)
        self._turns: list[SliceMessage] = []

    def write(self, message: SliceMessage) -> WriteUsage:
        self._turns.append(message)
        return WriteUsage()

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        # Questions are asked at checkpoints, after the checkpoint session's last turn: every stored turn precedes
        # the question.
        return RetrievedLines(
            lines=tuple(render_turn(m) for m in self._turns),
            sources=tuple((m.id,) for m in self._turns),
            notes={"k_ignored": True},
        )

    def stats(self) -> dict[str, Any]:
        return turn_store_stats(len(self._turns))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "line_format": "[<session_date>] <speaker>: <text>", "k": "ignored"}
