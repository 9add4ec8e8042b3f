"""The harness's own cost per model call: `full-context` on all of LoCoMo against a local server that answers at once.

The server (scripts/bench_concurrency.py's fake OpenAI-compatible server, a stand-in: it answers "fake answer", and a
verdict to a judge prompt) runs in its own process with no delay, so the run's wall time is the harness's own work:
start-up, loading the slice, the prompts of whole transcripts, keys, the cache, the token counts, the scores, the
files. The run is the real command line (`engram-bench run full-context --slice locomo`) in a fresh temporary cache,
runs and output folder (nothing committed changes).

The anchor, measured in the same invocation against the same server: the least a harness must do per call, done
by a bare loop for as many requests as the run sent, each body of the run's mean request size: the SHA-256 of the
body's canonical JSON (the cache key), a cache lookup and store (diskcache, as the harness's store), and the HTTP
round trip on one keep-alive connection with the reply parsed.

    ms per call = wall of the run / requests the server served
    ratio       = ms per call / anchor ms per call

    .venv/bin/python scripts/bench_call_overhead.py [--repo PATH ...] [--slice locomo]

`--repo` (repeatable) measures other checkouts' harness too (e.g. main before a change), each against the same
anchor. Several minutes on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import diskcache
from bench_concurrency import machine, serve, stack_file

HERE = Path(__file__).resolve().parents[1]


@dataclass
class Server:
    port: int
    served: object
    received: object
    process: multiprocessing.process.BaseProcess


def start_server() -> Server:
    ctx = multiprocessing.get_context("spawn")
    port, served, peak, received = ctx.Value("i", 0), ctx.Value("i", 0), ctx.Value("i", 0), ctx.Value("q", 0)
    process = ctx.Process(target=serve, args=(0.0, port, served, peak, received), daemon=True)
    process.start()
    while port.value == 0:
        time.sleep(0.02)
    return Server(port.value, served, received, process)


def run_once(repo: Path, server: Server, root: Path, slice_name: str) -> tuple[float, int, int]:
    """(wall seconds, requests served, request bytes) of one `run full-context` of `repo`'s harness."""
    here = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    stacks = here / "stacks"
    stacks.mkdir()
    for shipped in (repo / "stacks").glob("*.toml"):  # arms name the shipped stacks, so they stay available
        shutil.copy(shipped, stacks / shipped.name)
    (stacks / "bench-fake.toml").write_text(stack_file(server.port, 32), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENGRAM_"))}
    env |= {
        "PYTHONPATH": str(repo),
        "ENGRAM_STACKS_DIR": str(stacks),
        "ENGRAM_CACHE_DIR": str(here / "cache"),
        "ENGRAM_RUNS_DIR": str(here / "runs"),
        "ENGRAM_LEDGER": str(here / "ledger.jsonl"),
    }
    argv = [sys.executable, "-m", "bench", "--quiet", "run", "full-context", "--slice", slice_name]
    argv += ["--stack", "bench-fake", "--mode", "live", "--out", str(here / "out")]
    served, received = server.served.value, server.received.value  # type: ignore[attr-defined]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{repo}: the run failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return wall, server.served.value - served, server.received.value - received  # type: ignore[attr-defined]


def anchor(server: Server, root: Path, requests: int, body_bytes: int) -> float:
    """Seconds for `requests` bare calls: key, cache lookup and store, one HTTP round trip with the reply parsed."""
    filler = "x" * max(0, body_bytes - 200)
    store = diskcache.Cache(str(Path(tempfile.mkdtemp(prefix="anchor-", dir=root))), eviction_policy="none")
    connection = http.client.HTTPConnection("127.0.0.1", server.port)
    started = time.perf_counter()
    for i in range(requests):
        body = {"model": "fake-model", "messages": [{"role": "user", "content": f"{i} {filler}"}], "max_tokens": 9}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if store.get(key) is None:
            connection.request(
                "POST", "/v1/chat/completions", text.encode("utf-8"), {"Content-Type": "application/json"}
            )
            reply = json.loads(connection.getresponse().read())
            store.add(key, json.dumps(reply))
    elapsed = time.perf_counter() - started
    connection.close()
    store.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, action="append", default=[], help="another checkout to measure too")
    parser.add_argument("--slice", default="locomo")
    args = parser.parse_args()
    repos = [HERE, *(path.resolve() for path in args.repo)]
    cpu, load_before = machine()
    server = start_server()
    figures = []
    with tempfile.TemporaryDirectory(prefix="bench-call-overhead-") as folder:
        root = Path(folder)
        for repo in repos:
            figures.append((repo, *run_once(repo, server, root, args.slice)))
        requests = figures[0][2]
        mean_bytes = figures[0][3] // max(1, requests)
        anchor_s = anchor(server, root, requests, mean_bytes)
    server.process.terminate()
    server.process.join()
    _, load_after = machine()
    anchor_ms = 1000 * anchor_s / requests
    print(f"CPU: {cpu}; load average before {load_before}, after {load_after}")
    print(f"full-context on {args.slice} against a fake server answering at once (a stand-in)")
    print(f"anchor: {requests} bare calls of {mean_bytes:,} bytes (key, cache lookup and store, HTTP): "
          f"{anchor_s:.1f} s, {anchor_ms:.2f} ms per call")  # fmt: skip
    for repo, wall, served, _ in figures:
        per_call = 1000 * wall / served
        print(f"{repo}: {wall:.1f} s for {served} requests = {per_call:.2f} ms per call, "
              f"{per_call / anchor_ms:.2f}x the anchor")  # fmt: skip


if __name__ == "__main__":
    main()
