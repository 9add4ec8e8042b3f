"""Echo-recall: a toy memory system that shows the answer model the last few turns, verbatim.

A worked example of adding a system (docs/examples/README.md). This one module is the whole system: a `System`
subclass with the settings it accepts. Either copy it into `bench/systems/` (the `@register_system` decorator
registers it; the package's modules are discovered), or ship it in your own package and declare it under the entry
point group `engram_bench.systems` (pyproject.toml beside this file): an installed package needs no change here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from bench.data.slices import SliceMessage, SliceQuestion
from bench.systems import RetrievedLines, Setting, System, SystemContext, WriteUsage, register_system
from bench.systems.base import turn_store_stats


@register_system("echo-recall")
class EchoRecall(System):
    """Keeps every turn; shows the latest `window` of them for any question."""

    SETTINGS: ClassVar[tuple[Setting, ...]] = (Setting("window", int, 4, "how many of the latest turns to show"),)
    MODEL_CALLS_PER_MESSAGE: ClassVar[Mapping[str, int] | None] = {}  # writing calls no model

    def __init__(self, settings: Mapping[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)
        self.turns: list[SliceMessage] = []

    def write(self, message: SliceMessage) -> WriteUsage:
        self.turns.append(message)
        return WriteUsage()

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        shown = self.turns[-self.settings["window"] :]
        return RetrievedLines(
            lines=tuple(f"{m.speaker}: {m.text}" for m in shown),
            sources=tuple((m.id,) for m in shown),  # which turns each line came from: evidence recall uses it
        )

    def stats(self) -> dict[str, Any]:
        return turn_store_stats(len(self.turns))
