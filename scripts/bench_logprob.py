"""The logprob decider against a real local server (llama.cpp's server with SmolLM2-135M, the `local` extra): what it
costs per typed question beyond the server's own time, and how busy a run keeps the server.

1. Overhead per question. The six fact questions of dev's first messages are asked one at a time through the
   decider, in record mode on a fresh cache. The anchor, measured in the same run, is the server's own time: the
   round trip the client measured around each HTTP call (what the cache records as the call's latency). The
   overhead is everything else the decider spends on a question: the prompt, the body, the cache key, the lookup
   and the write, reading the tokens back into a decision. The same questions are then replayed from the cache,
   where the server's time is zero and the decider's whole time per question is its overhead. Beside the wall
   times, the harness process's CPU time per question (every thread), which a loaded machine does not inflate.
2. Requests in flight. `engram` runs on stacks/local.toml in record mode, as the local-server test runs it (dev's
   first messages, --limit 2, the rules extractor: `bench.models.local_server.rules_extraction_arms`), through a gateway
   that counts the requests between their hand-over to the client and their reply (outstanding: waiting for one
   of the client's `concurrency` slots, from the stack file, or on the wire; on the wire = min(outstanding, slots),
   since every role of the local stack shares the one client): the most at once, the time-weighted means while
   any is out, and the share of the run's wall time with at least one in flight (the rest is the harness working
   while the server waits).

    .venv/bin/python scripts/bench_logprob.py [--questions 60] [--messages 6] [--skip-run]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.data.slices import load_slice
from bench.models.gateway import CallRequest, Gateway, LiveResponse
from bench.models.local_server import first_messages, llama_server, rules_extraction_arms, unavailable_reason
from bench.models.providers.openai.client import OpenAIChat
from bench.models.providers.openai.logprob import LogprobDecider
from bench.models.stacks import load_stack_spec
from bench.run.request import RunRequest, RunServices
from bench.run.runner import run_arm
from engram import Ask
from engram.questions import FACT_QUESTIONS


def fact_states(count: int) -> list[dict[str, Any]]:
    """One write-path state per dev message (the message itself as the new fact, as a stand-in for an extracted
    fact: the prompt's size is what matters here, not what the fact says)."""
    messages = load_slice("dev").messages
    return [
        {"new_fact": {"text": m.text, "subject": m.speaker, "object": ""}, "source_message": m.text}
        for m in messages[:count]
    ]


def overhead(base_url: str, model: str, questions: int, cache_dir: Path) -> dict[str, float]:
    """Per question: the decider's wall time, the server's recorded time, and both again on replay (ms)."""
    asks = [Ask(q.id, q) for q in FACT_QUESTIONS]
    states = fact_states(-(-questions // len(asks)))
    pairs = [(state, ask) for state in states for ask in asks][:questions]
    results: dict[str, float] = {}
    for mode in ("record", "replay"):
        gateway = Gateway.from_env(mode=mode, run_id=f"bench-logprob-{mode}", cache_dir=cache_dir)
        chat = OpenAIChat(gateway, base_url, max_concurrency=1)
        decider = LogprobDecider(chat, model)
        walls, server, cpu = [], [], []
        try:
            for state, ask in pairs:
                started, cpu_started = time.perf_counter(), time.process_time()
                decision = decider.ask(state, [ask])[ask.key]
                walls.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
                server.append(decision.latency_ms if mode == "record" else 0.0)
        finally:
            decider.close()
            chat.close()
            gateway.close()
        results[f"{mode}_wall_ms"] = statistics.fmean(walls)
        results[f"{mode}_server_ms"] = statistics.fmean(server)
        results[f"{mode}_overhead_ms"] = statistics.fmean(w - s for w, s in zip(walls, server))
        results[f"{mode}_overhead_p50_ms"] = statistics.median(w - s for w, s in zip(walls, server))
        # CPU time of this process (every thread: the decider, the gateway, the SDK and HTTP client), which a
        # loaded machine's scheduling waits do not inflate; the server is another process.
        results[f"{mode}_cpu_ms"] = statistics.fmean(cpu)
    return results


class InFlight:
    """Counts requests between send and reply, and integrates the count over time."""

    def __init__(self, bound: int = 1) -> None:
        self._lock = threading.Lock()
        self.bound = bound  # the client's semaphore: at most this many of the outstanding requests are on the wire
        self.wire_area = 0.0  # request-seconds on the wire: min(outstanding, bound) integrated over time
        self.now = 0
        self.peak = 0
        self.sent = 0
        self._since = time.perf_counter()
        self.area = 0.0  # request-seconds in flight
        self.busy = 0.0  # seconds with at least one request in flight

    def _advance(self) -> None:
        now = time.perf_counter()
        elapsed = now - self._since
        self.area += self.now * elapsed
        self.wire_area += min(self.now, self.bound) * elapsed
        self.busy += elapsed if self.now else 0.0
        self._since = now

    def enter(self) -> None:
        with self._lock:
            self._advance()
            self.now += 1
            self.sent += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self._lock:
            self._advance()
            self.now -= 1


class CountingGateway(Gateway):
    """A gateway whose live calls are counted while they are in flight (cache hits never reach the server)."""

    counter = InFlight()

    def call_batch(self, requests: Sequence[CallRequest], live: Callable[..., Sequence[LiveResponse]]) -> Any:
        def counted(missing: list[CallRequest]) -> Sequence[LiveResponse]:
            for _ in missing:
                self.counter.enter()
            try:
                return live(missing)
            finally:
                for _ in missing:
                    self.counter.leave()

        return super().call_batch(requests, counted)

    async def acall_batch(self, requests: Sequence[CallRequest], live: Callable[..., Any]) -> Any:
        async def counted(missing: list[CallRequest]) -> Sequence[LiveResponse]:
            for _ in missing:
                self.counter.enter()
            try:
                return await live(missing)
            finally:
                for _ in missing:
                    self.counter.leave()

        return await super().acall_batch(requests, counted)


def in_flight(cache_dir: Path, runs: Path, messages: int, concurrency: int) -> dict[str, float]:
    def factory(request: RunRequest, services: RunServices, run_id: str, arm: str, slice_name: str) -> Gateway:
        return CountingGateway.from_env(
            mode="record", run_id=run_id, arm=arm, slice_name=slice_name, cache_dir=cache_dir
        )

    request = RunRequest(
        stack="local",
        limit=2,
        out=runs / "out",
        assume_yes=True,
        mode="record",
        arms_dir=rules_extraction_arms(runs / "arms", ("engram",)),
    )
    services = RunServices(
        runs_root=runs,
        progress=False,
        subsets=(),
        cache_dir=cache_dir,
        gateway_factory=factory,
        slice_loader=lambda name: first_messages(name, messages),
    )
    counter = CountingGateway.counter
    counter.bound = concurrency
    started = time.perf_counter()
    run_arm("engram", "dev", request, services)
    wall = time.perf_counter() - started
    counter._advance()
    return {
        "wall_s": wall,
        "requests": counter.sent,
        "peak": counter.peak,
        "mean_in_flight_while_calling": counter.area / counter.busy if counter.busy else 0.0,
        "mean_on_wire_while_calling": counter.wire_area / counter.busy if counter.busy else 0.0,
        "busy_share_of_run": counter.busy / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=60, help="typed questions asked one by one (default 60)")
    parser.add_argument("--messages", type=int, default=6, help="dev messages the engram run ingests (default 6)")
    parser.add_argument("--skip-run", action="store_true", help="only the overhead figures, not the engram run")
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason is not None:
        print(f"bench_logprob: {reason}", file=sys.stderr)
        return 2
    spec = load_stack_spec("local")
    concurrency = spec.settings("openai").concurrency
    print(
        f"bench_logprob  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  python {platform.python_version()}  {platform.machine()}"
    )
    with tempfile.TemporaryDirectory() as tmp, llama_server(log=Path(tmp) / "server.log") as server:
        figures = overhead(server.base_url, server.model, args.questions, Path(tmp) / "cache-overhead")
        print(f"1. overhead per typed question, {args.questions} questions asked one at a time ({server.model})")
        print(f"   server's own time (anchor)      {figures['record_server_ms']:9.2f} ms")
        print(f"   decider, recording              {figures['record_wall_ms']:9.2f} ms")
        print(
            f"   overhead beyond the server      {figures['record_overhead_ms']:9.3f} ms mean, "
            f"{figures['record_overhead_p50_ms']:.3f} ms median  "
            f"({figures['record_overhead_ms'] / figures['record_server_ms']:.2%} of the server's time)"
        )
        print(f"   harness CPU per question        {figures['record_cpu_ms']:9.3f} ms (this process, every thread)")
        print(
            f"   decider, replayed (no server)   {figures['replay_wall_ms']:9.3f} ms wall, {figures['replay_cpu_ms']:.3f} ms CPU"
        )
        ok = figures["record_overhead_ms"] < 1.0
        print(f"   target < 1 ms: {'met' if ok else 'NOT met'}")
        if not args.skip_run:
            os.environ["OPENAI_BASE_URL"] = server.base_url
            flight = in_flight(Path(tmp) / "cache-run", Path(tmp) / "runs", args.messages, concurrency or 1)
            print(
                f"2. engram on dev's first {args.messages} messages, --limit 2, stacks/local.toml "
                f"(openai concurrency = {concurrency})"
            )
            print(f"   {flight['requests']} requests in {flight['wall_s']:.0f} s")
            print(
                f"   most outstanding at once        {flight['peak']} (handed to the client; on the wire at most {concurrency})"
            )
            print(f"   mean outstanding while any is   {flight['mean_in_flight_while_calling']:.2f}")
            print(f"   mean on the wire while any is   {flight['mean_on_wire_while_calling']:.2f} (of {concurrency})")
            print(f"   share of the run with >= 1      {flight['busy_share_of_run']:.1%}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
