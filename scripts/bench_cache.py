"""Cache performance figures for the README: get/put latency (p50, p99) at 1k, 10k and 100k entries, and replay
throughput through the whole gateway (key hashing, lookup, checksum verification) in calls per second.

One local store is filled step by step; at each size the last 1,000 puts are timed one by one (the rest go in
bulk), then 1,000 random gets.
Entries look like a real answer call (about 1 KB of response JSON). Runs in a temporary folder; about a minute.

    .venv/bin/python scripts/bench_cache.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import platform
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.models.cache import CacheEntry, CallRequest, LocalStore, write_subset
from bench.models.gateway import Gateway, LiveResponse

SAMPLE = 1000
REPLAY_CALLS = 5000


def request_for(n: int) -> CallRequest:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "temperature": 0.0,
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": f"Question {n}: where did Caroline move in May 2023?"}],
    }
    return CallRequest("anthropic", "messages", "claude-sonnet-4-6", body, "answer")


def entry_for(n: int) -> CacheEntry:
    reply = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": f"Boston, in May 2023 (#{n}). " + "x" * 800}],
        "usage": {"input_tokens": 212, "output_tokens": 9},
    }
    return CacheEntry(
        key=request_for(n).key(),
        provider="anthropic",
        endpoint="messages",
        model="claude-sonnet-4-6",
        purpose="answer",
        replicate=0,
        body=reply,
        input_tokens=212,
        output_tokens=9,
        cost_usd=0.000771,
        latency_ms=812.4,
        recorded_at="2026-12-02T00:00:00+00:00",
    )


def percentiles_ms(samples_ns: list[int]) -> tuple[float, float]:
    values = np.asarray(samples_ns, dtype=float) / 1e6
    return float(np.percentile(values, 50)), float(np.percentile(values, 99))


def fill(store: LocalStore, start: int, stop: int) -> list[int]:
    """Add entries start..stop-1; return the put latencies of the last SAMPLE of them (ns), each a lone `add()`
    as the gateway does it. The entries before them go in bulk (the fill is setup, not what is measured)."""
    timed: list[int] = []
    bulk_stop = max(start, stop - SAMPLE)
    store.add_many(entry_for(n) for n in range(start, bulk_stop))
    for n in range(bulk_stop, stop):
        entry = entry_for(n)
        began = time.perf_counter_ns()
        store.add(entry)
        timed.append(time.perf_counter_ns() - began)
    return timed


def time_gets(store: LocalStore, size: int, rng: random.Random) -> list[int]:
    keys = [request_for(rng.randrange(size)).key() for _ in range(SAMPLE)]
    timed = []
    for key in keys:
        began = time.perf_counter_ns()
        assert store.get(key) is not None
        timed.append(time.perf_counter_ns() - began)
    return timed


def replay_throughput(directory: Path, size: int, rng: random.Random, subset: Path | None = None) -> float:
    gateway = Gateway(
        local=None if subset else directory, subsets=[subset] if subset else [], mode="replay", environ={}
    )
    requests = [request_for(rng.randrange(size)) for _ in range(REPLAY_CALLS)]

    def never(_: CallRequest) -> LiveResponse:
        raise AssertionError("replay benchmark: every call must be a hit")

    began = time.perf_counter()
    for request in requests:
        gateway.call(request, never)
    elapsed = time.perf_counter() - began
    gateway.close()
    return REPLAY_CALLS / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    rng = random.Random(7)
    print(
        f"# bench_cache.py  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {platform.machine()} "
        f"{platform.python_implementation()} {platform.python_version()}  cpus={__import__('os').cpu_count()}"
    )
    print(
        f"{'entries':>8}  {'put p50 ms':>10}  {'put p99 ms':>10}  {'get p50 ms':>10}  {'get p99 ms':>10}  "
        f"{'replay calls/s':>14}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        directory = Path(tmp) / "local"
        store = LocalStore(directory)
        filled = 0
        for size in sorted(args.sizes):
            puts = fill(store, filled, size)
            filled = size
            gets = time_gets(store, size, rng)
            put50, put99 = percentiles_ms(puts)
            get50, get99 = percentiles_ms(gets)
            rate = replay_throughput(directory, size, rng)
            print(f"{size:>8}  {put50:>10.3f}  {put99:>10.3f}  {get50:>10.3f}  {get99:>10.3f}  {rate:>14.0f}")
        subset_dir = Path(tmp) / "subset"
        write_subset((store.get(request_for(n).key()) for n in range(min(10_000, filled))), subset_dir, source="bench")
        store.close()
        began = time.perf_counter()
        rate = replay_throughput(directory, min(10_000, filled), rng, subset=subset_dir)
        print(
            f"shipped subset of {min(10_000, filled)} entries: opened and verified, replay {rate:.0f} calls/s "
            f"(total {time.perf_counter() - began:.1f} s incl. load)"
        )


if __name__ == "__main__":
    main()
