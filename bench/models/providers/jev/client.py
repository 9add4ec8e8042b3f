"""TypeSafe Jev behind the gateway: engram's `DecisionBackend` for the paper stack.

Wire: `POST {TYPESAFE_URL}/v1/systemone`, `Authorization: Bearer $TYPESAFE_API_KEY`,
body `{"model", "state", "questions": {ask key: payload}}`; the response holds `answers`, `usage.input_tokens` and
an `x-typesafe-request-id` header. Each answer is checked by engram's `validate_answer` (the one copy of the
wire rules and their tolerances).

Caching is per question: key body `{"state", "question": payload}` (the ask key and target are not part of it), so a
partly cached request sends only its missing questions, in one HTTP request. The cache stores what Jev returned for
each question (its raw answer, or its absence); the answer is validated every time it is read, so a malformed answer
replays as the same fallback it was live.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx

from bench.models.budget import call_cost_usd
from bench.models.cache import CallRequest
from bench.models.clients.loop import LoopThread
from bench.models.clients.retry import RetriesExhausted, RetryableFailure, RetryPolicy
from bench.models.clock import round_ms
from bench.models.gateway import CallResult, Gateway, LiveResponse
from bench.models.providers.jev.errors import (
    JevMalformedReply,
    JevRateLimited,
    JevRefused,
    JevUnavailable,
    status_failure,
    transport_failure,
)
from bench.models.redact import quoted
from engram import Ask, Decision, MalformedAnswer, validate_answer

DEFAULT_URL = "https://api.typesafe.ai"
DEFAULT_MODEL = "jev-1.13.0"
PROVIDER, ENDPOINT = "jev", "systemone"


def decision_from_result(ask: Ask, result: CallResult) -> Decision:
    """Rebuild the decision for this ask from a (cached or fresh) per-question result."""
    answer = result.body.get("answer")
    common: dict[str, Any] = {
        "backend": "jev",
        "model": result.model,
        "target": ask.target,
        "latency_ms": result.latency_ms,
        "cost_usd": result.cost_usd,
    }
    if answer is None:
        return Decision.degraded(ask.question, error="jev returned no answer for this question", **common)
    try:
        probs, chosen = validate_answer(ask.question, answer)
    except MalformedAnswer as exc:
        return Decision.degraded(ask.question, error=f"malformed jev answer: {exc}", **common)
    return Decision.from_probs(ask.question, probs, chosen=chosen, **common)


class RateLimiter:
    """Spaces request starts at least 1/rps apart (client-side pacing; created inside the client's loop)."""

    def __init__(
        self,
        per_second: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._interval = 1.0 / per_second if per_second > 0 else 0.0
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            now = self._clock()
            if self._next > now:
                await self._sleep(self._next - now)
                now = self._next
            self._next = now + self._interval


class JevDecider:
    """`DecisionBackend` over Jev. The API key is read from $TYPESAFE_API_KEY only when a call must go out."""

    name = "jev"

    def __init__(
        self,
        gateway: Gateway,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        timeout_s: float = 2.0,
        requests_per_second: float = 15.0,
        max_concurrency: int = 8,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        self.gateway = gateway
        self.model = model
        self.base_url = (base_url or os.environ.get("TYPESAFE_URL") or DEFAULT_URL).rstrip("/")
        self.timeout_s = timeout_s
        self.retry = retry
        self.http_statuses: Counter[str] = Counter()  # "200", "429", "timeout" ...: what the wire did
        self._rps = requests_per_second
        self._max_concurrency = max_concurrency
        self._loop = LoopThread("jev-client")
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._limiter: RateLimiter | None = None

    # -- DecisionBackend ---------------------------------------------------------------------------------------

    def ask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        return self._loop.run(self.aask(state, asks))

    async def aask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        if not asks:
            return {}
        requests = [self.request_for(state, ask) for ask in asks]
        wire_keys = {request.key(): ask.key for request, ask in zip(requests, asks)}

        async def live(missing: list[CallRequest]) -> list[LiveResponse]:
            questions = {wire_keys[r.key()]: r.body["question"] for r in missing}
            return await self._loop.run_async(self._send(state, questions, [wire_keys[r.key()] for r in missing]))

        results = await self.gateway.acall_batch(requests, live)
        return {ask.key: decision_from_result(ask, result) for ask, result in zip(asks, results)}

    def request_for(self, state: dict, ask: Ask) -> CallRequest:
        return CallRequest(PROVIDER, ENDPOINT, self.model, {"state": state, "question": ask.payload()}, "decide")

    # -- the wire ----------------------------------------------------------------------------------------------

    def _ensure_client(self) -> None:
        if self._client is None:
            # HTTP/2 as the original client used (negotiated over TLS; plain-HTTP test servers get HTTP/1.1).
            self._client = httpx.AsyncClient(timeout=self.timeout_s, http2=True)
            self._semaphore = asyncio.Semaphore(self._max_concurrency)
            self._limiter = RateLimiter(self._rps)

    async def _send(self, state: dict, questions: dict[str, Any], order: list[str]) -> list[LiveResponse]:
        api_key = os.environ.get("TYPESAFE_API_KEY")
        if not api_key:
            raise JevRefused("environment TYPESAFE_API_KEY: expected a key to call Jev live, found none")
        self._ensure_client()
        assert self._client and self._semaphore and self._limiter
        payload = {"model": self.model, "state": state, "questions": questions}
        headers = {"Authorization": f"Bearer {api_key}"}
        async with self._semaphore:
            await self._limiter.wait()
            started = time.perf_counter()  # after pacing: latency includes retries, not local queueing
            try:
                response = await self.retry.run(lambda: self._attempt(payload, headers), self._count)
            except RetriesExhausted as exc:
                kind = JevRateLimited if exc.rate_limited else JevUnavailable
                raise kind(f"jev {self.base_url}/v1/systemone: unavailable, {exc}") from None
            latency = round_ms((time.perf_counter() - started) * 1000)
        self._count(str(response.status_code))
        return self._split(response, order, latency)

    async def _attempt(self, payload: dict, headers: dict[str, str]) -> httpx.Response:
        assert self._client is not None
        try:
            response = await self._client.post(f"{self.base_url}/v1/systemone", json=payload, headers=headers)
        except Exception as exc:
            retry = transport_failure(exc)
            if retry is None:
                raise
            raise retry from None
        failure = status_failure(response, f"jev {self.base_url}/v1/systemone", self.model)
        if failure is not None:
            if not isinstance(failure, RetryableFailure):
                self._count(str(response.status_code))  # a retried status is counted by the retry policy
            raise failure
        return response

    def _split(self, response: httpx.Response, order: list[str], latency_ms: float) -> list[LiveResponse]:
        """One LiveResponse per question, each carrying its raw answer and an equal share of the cost."""
        try:
            data = response.json()
            answers = data.get("answers") or {}
            input_tokens = int((data.get("usage") or {}).get("input_tokens", 0))
        except (ValueError, AttributeError, TypeError):
            raise JevMalformedReply(
                f"jev {self.base_url}/v1/systemone: expected a JSON body with answers, found {quoted(response.text)}"
            ) from None
        model = str(data.get("model") or self.model)
        request_id = response.headers.get("x-typesafe-request-id")
        share = call_cost_usd(PROVIDER, self.model, input_tokens, 0) / len(order)
        return [
            LiveResponse(
                body={
                    "answer": answers.get(key) if isinstance(answers, Mapping) else None,
                    "request_id": request_id,
                    "request_questions": len(order),
                },
                input_tokens=round(input_tokens / len(order)),
                output_tokens=0,
                model=model,
                cost_usd=share,
                latency_ms=latency_ms,
            )
            for key in order
        ]

    def _count(self, outcome: str) -> None:
        self.http_statuses[outcome] += 1

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            self._loop.run(client.aclose())
        self._loop.close()
