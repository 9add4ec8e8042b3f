"""What the Anthropic (its SDK) and OpenAI-compatible (bench.models.clients.http1) clients share: a count of HTTP
outcomes, one run of the retry policy under the client's concurrency bound with its wall time, and closing the wire
client on its private loop.

Each client keeps its own wire set-up and its own reading of a reply (errors differ per wire); only the plumbing
around them lives here, so a retry or concurrency fix is made once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bench.models.clients.loop import LoopThread
from bench.models.clients.retry import RetriesExhausted, RetryPolicy
from bench.models.clock import round_ms

T = TypeVar("T")


class SDKClient:
    retry: RetryPolicy
    http_statuses: dict[str, int]
    _client: Any
    _semaphore: asyncio.Semaphore | None
    _loop: LoopThread

    async def _run_retried(
        self,
        attempt: Callable[[], Awaitable[T]],
        where: str,
        unavailable: Callable[[str], Exception],
        rate_limited: Callable[[str], Exception],
    ) -> tuple[T, float]:
        """`attempt` under the retry policy and the concurrency bound: (its result, wall ms including waits); a
        call that exhausts its retries becomes `unavailable("<where>: unavailable, <why>")`, or `rate_limited(...)`
        when every attempt was answered 429."""
        assert self._semaphore is not None
        async with self._semaphore:
            started = time.perf_counter()
            try:
                result = await self.retry.run(attempt, self._count)
            except RetriesExhausted as exc:
                kind = rate_limited if exc.rate_limited else unavailable
                raise kind(f"{where}: unavailable, {exc}") from None
            return result, round_ms((time.perf_counter() - started) * 1000)

    def _count(self, outcome: str) -> None:
        self.http_statuses[outcome] = self.http_statuses.get(outcome, 0) + 1

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            self._loop.run(client.close())
        self._loop.close()
