"""Example baseline `recent-turns`: show the answer model the k most recent turns, whatever the question.

The README's "add a new baseline" walk-through: copy this file to `bench/systems/recent_turns.py` and
`recent-turns.toml` to `arms/`, then `engram-bench run recent-turns --slice dev`.
"""

from __future__ import annotations

from typing import Any

from bench.data.slices import SliceMessage, SliceQuestion
from bench.systems.base import RetrievedLines, Setting, System, WriteUsage, register_system


@register_system("recent-turns")
class RecentTurns(System):
    # Every key an arm may put in [settings], with its type and default; anything else is refused on load.
    SETTINGS = (Setting("show_dates", bool, True, "prefix each turn with its session date"),)

    def __init__(self, settings: dict[str, Any], context: Any) -> None:
        super().__init__(settings, context)
        self.turns: list[SliceMessage] = []

    def write(self, message: SliceMessage) -> WriteUsage:
        self.turns.append(message)
        return WriteUsage()  # no model call: zero cost, zero latency

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        recent = self.turns[-k:] if k else list(self.turns)
        date = (lambda m: f"[{m.session_date}] ") if self.settings["show_dates"] else (lambda m: "")
        return RetrievedLines(
            lines=tuple(f"{date(m)}{m.speaker}: {m.text}" for m in reversed(recent)),  # newest first
            sources=tuple((m.id,) for m in reversed(recent)),  # the turn each line came from
        )

    def stats(self) -> dict[str, Any]:
        n = len(self.turns)
        return {"stored": n, "active": n, "tentative": 0, "closes_by_reason": {}, "reopens": 0, "escalations": 0}
