"""The virtual clock: latency figures computed from *recorded* call latencies, never from the wall clock.

A cache hit returns at once but reports the latency the call was recorded with; the runner adds those figures up
along the critical path (calls made one after another add, concurrent calls count as their maximum). A replay
therefore reproduces write p50 and decision p50 exactly, on any machine, at any load.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

ReplayLatency = Literal["recorded", "sleep"]
REPLAY_LATENCY_CHOICES: tuple[str, ...] = ("recorded", "sleep")


def round_ms(ms: float) -> float:
    """Recorded latencies are kept to 0.1 ms: finer digits are timer noise and would make results diff."""
    return round(float(ms), 1)


def elapsed_ms(start: float, end: float) -> float:
    return round_ms((end - start) * 1000.0)


def critical_path_ms(groups: Iterable[Iterable[float]]) -> float:
    """Latency of a sequence of steps, each step a group of concurrent calls: sum over steps of the step's max.
    An empty step costs nothing."""
    return round_ms(sum(max(group, default=0.0) for group in (list(g) for g in groups)))


def p50_ms(values: Sequence[float]) -> float | None:
    """Median of per-message latencies; None when there is nothing to summarise (not 0, which would be a claim)."""
    if len(values) == 0:
        return None
    return round_ms(float(np.median(np.asarray(values, dtype=float))))


class VirtualClock:
    """Accumulates recorded latency along one critical path (e.g. one message's write)."""

    def __init__(self) -> None:
        self._ms = 0.0

    def sequential(self, *latencies_ms: float) -> None:
        self._ms += sum(latencies_ms)

    def concurrent(self, latencies_ms: Iterable[float]) -> None:
        self._ms += max(latencies_ms, default=0.0)

    @property
    def elapsed_ms(self) -> float:
        return round_ms(self._ms)


def replay_sleep(latency_ms: float, mode: ReplayLatency) -> None:
    """Opt-in comparison mode: make a hit take as long as the original call did."""
    if mode == "sleep" and latency_ms > 0:
        time.sleep(latency_ms / 1000.0)


async def areplay_sleep(latency_ms: float, mode: ReplayLatency) -> None:
    if mode == "sleep" and latency_ms > 0:
        await asyncio.sleep(latency_ms / 1000.0)
