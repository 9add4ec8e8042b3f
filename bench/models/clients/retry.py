"""The one retry policy for live providers: up to 3 attempts; retry on 429/500/502/503/504/
529, timeouts and connection errors; wait `Retry-After` (capped at 5 s) or 0.25·2^attempt s; any other error fails at
once. Both clients use it, so the Anthropic SDK's own retries are switched off."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


class RetryableFailure(Exception):
    """One failed attempt that may succeed if tried again."""

    def __init__(self, outcome: str, retry_after: str | None = None) -> None:
        super().__init__(outcome)
        self.outcome = outcome  # "429", "503", "timeout", "connection"
        self.retry_after = retry_after


class RetriesExhausted(Exception):
    def __init__(self, attempts: int, outcomes: list[str]) -> None:
        super().__init__(f"{attempts} attempts failed ({', '.join(outcomes)})")
        self.outcomes = outcomes

    @property
    def rate_limited(self) -> bool:
        """Every attempt was refused for its rate (429): a different remedy (slow down) from an outage."""
        return bool(self.outcomes) and all(outcome == "429" for outcome in self.outcomes)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header; HTTP dates and junk count as absent."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    max_retry_after_s: float = 5.0
    base_backoff_s: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    def delay_s(self, attempt: int, retry_after: str | None) -> float:
        """Wait before retry number `attempt + 1` (attempt counts from 0)."""
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return min(asked, self.max_retry_after_s)
        return self.base_backoff_s * 2**attempt

    async def run(self, attempt: Callable[[], Awaitable[T]], on_outcome: Callable[[str], None] = lambda _: None) -> T:
        outcomes: list[str] = []
        for number in range(self.attempts):
            try:
                return await attempt()
            except RetryableFailure as failure:
                outcomes.append(failure.outcome)
                on_outcome(failure.outcome)
                if number + 1 < self.attempts:
                    await self.sleep(self.delay_s(number, failure.retry_after))
        raise RetriesExhausted(self.attempts, outcomes)
