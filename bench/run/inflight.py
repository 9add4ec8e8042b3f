"""One bound per provider on the live calls of a whole run.

Each provider client bounds only its own calls, and a pooled slice's conversations each build their own clients for
ingestion while the answers share the run's pool: without a run-wide bound, three conversations ingesting beside the
answer pool could keep three or four times the stack's `concurrency` in flight. `InFlight` holds one semaphore per
provider of the stack, sized by the same knob as the answer pool (`calls_in_flight`: the provider's `concurrency`,
`--concurrency N` over it), and the runner's gateway taps make every live send take a slot for its duration.
A cache hit never reaches the live send, so it takes no slot; stand-in providers compute here and are not bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bench.models.provider import is_standin
from bench.models.stacks import Stack
from bench.run.planner import ANSWER_CONCURRENCY

Sent = TypeVar("Sent")
Reply = TypeVar("Reply")

_POLL_S = 0.005  # a slot waited for on an event loop: checked this often (model calls take 100x longer)


class InFlight:
    """At most `limit(provider)` live calls to each of a stack's providers at once, whichever thread, event loop or
    conversation sends them."""

    def __init__(self, stack: Stack, override: int | None = None) -> None:
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        for provider in stack.providers:
            if is_standin(provider):
                continue
            limit = override or stack.settings(provider).concurrency or ANSWER_CONCURRENCY
            self._slots[provider] = threading.BoundedSemaphore(limit)

    def bounded(self, provider: str, live: Callable[[Sent], Reply]) -> Callable[[Sent], Reply]:
        """`live` (the gateway's send of what the caches lack) holding one of `provider`'s slots while it runs."""
        slots = self._slots.get(provider)
        if slots is None:
            return live

        def send(missing: Sent) -> Reply:
            with slots:
                return live(missing)

        return send

    def abounded(self, provider: str, live: Callable[[Sent], Awaitable[Reply]]) -> Callable[[Sent], Awaitable[Reply]]:
        """`bounded` for a client's event loop. A slot held on another thread is waited for by polling, never by
        blocking the loop (its other calls may hold slots and need the loop to finish) and without borrowing the
        loop's worker threads (a live send may need them)."""
        slots = self._slots.get(provider)
        if slots is None:
            return live

        async def send(missing: Sent) -> Reply:
            while not slots.acquire(blocking=False):
                await asyncio.sleep(_POLL_S)
            try:
                return await live(missing)
            finally:
                slots.release()

        return send
