"""A private event loop on a daemon thread, so the synchronous engram protocols (`ask`, `complete`) can drive
async HTTP clients whether or not the caller is itself inside an event loop.

HTTP clients, semaphores and rate limiters are bound to the loop they were created in; keeping one loop per client
object (the original harness's "one client per event loop" rule) means they are created once and reused.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run to completion on the private loop and return its result (blocking the calling thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    async def run_async(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine that must run on the private loop, from any loop (including the private one)."""
        if asyncio.get_running_loop() is self.loop:
            return await coroutine
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def close(self) -> None:
        with self._lock:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None
