"""How many model calls a run keeps in flight: one knob, the stack file's provider `concurrency`.

A run answers its questions on one thread pool of this size (shared by the conversations of a pooled slice, which
run side by side), and the answer side's provider clients get the same bound, so `--concurrency N` (run, grid)
changes both together. A stack that declares no concurrency keeps the harness's old six questions at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bench.models.stacks import ProviderSettings, Stack

ANSWER_CONCURRENCY = 6  # the original harness answered six questions at a time; a stack without a bound keeps it


def calls_in_flight(stack: Stack, override: int | None = None) -> int:
    """`override` (--concurrency N) when given; else the smallest `concurrency` a provider of the stack's roles
    declares (the tightest provider bounds the run); else ANSWER_CONCURRENCY."""
    if override is not None:
        return override
    declared = [c for p in stack.providers if (c := stack.settings(p).concurrency) is not None]
    return min(declared) if declared else ANSWER_CONCURRENCY


def with_concurrency(stack: Stack, override: int | None) -> Callable[[str], ProviderSettings]:
    """The stack's provider settings, each provider's `concurrency` replaced by `override` when one is given."""
    if override is None:
        return stack.settings
    return lambda provider: replace(stack.settings(provider), concurrency=override)
