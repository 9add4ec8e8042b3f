"""What the memory protocol costs per request: the same small memory called in-process (the anchor) and through
the protocol (another process on 127.0.0.1, the harness's own client with its reply checks), in the same run.

Not a test: it prints figures for docs/performance.md. The memory is a word-overlap store (no model), so the figures
are the protocol's overhead, not a system's work: per write and per retrieve (k=10 over 300 turns), median of
--rounds rounds.

    .venv/bin/python scripts/bench_protocol.py [--writes 300] [--retrieves 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "systems"), str(REPO)]

from protocol_server import MemoryBackend, approx_tokens, serve  # noqa: E402

WORD = re.compile(r"[a-z0-9']{3,}")


class WordStore(MemoryBackend):
    """Turns per namespace, ranked by words shared with the question."""

    def __init__(self) -> None:
        self.turns: dict[str, list[dict[str, Any]]] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": "wordstore", "library": "none", "version": "0", "store": "a dict"}

    def reset(self, namespace: str) -> None:
        self.turns[namespace] = []

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        self.turns.setdefault(namespace, []).append({**message, "words": set(WORD.findall(message["text"].lower()))})
        return {"usage": {"calls": 0}, "stored": 1}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        asked = set(WORD.findall(question.lower()))
        ranked = sorted(self.turns.get(namespace, []), key=lambda t: -len(asked & t["words"]))[: k or None]
        lines = [{"text": f"{t['speaker']}: {t['text']}", "sources": [t["id"]]} for t in ranked]
        return {"lines": lines, "retrieved_tokens": approx_tokens([line["text"] for line in lines])}

    def stats(self, namespace: str) -> dict[str, Any]:
        return {"stored": len(self.turns.get(namespace, [])), "unit": "turn"}


def messages(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"B{i}:1", "speaker": "Rosalind", "date": "9 May, 2030", "timestamp": "2030-05-09T09:00:00",
         "text": f"On day {i} I walked {i % 7} miles along the canal and saw {i % 5} herons near lock {i % 11}."}
        for i in range(n)
    ]  # fmt: skip


def timed(calls: list[Any]) -> float:
    start = time.perf_counter()
    for call in calls:
        call()
    return (time.perf_counter() - start) / len(calls) * 1e6


def one_round(client: Any, args: argparse.Namespace) -> dict[str, float]:
    from bench.systems import wire

    turns = messages(args.writes)
    question = "How many herons near lock 3?"
    local = WordStore()
    local.reset("anchor")
    figures = {
        "write in-process": timed([lambda m=m: local.write("anchor", dict(m)) for m in turns]),
        "retrieve in-process": timed([lambda: local.retrieve("anchor", question, 10, {})] * args.retrieves),
    }
    client.reset("bench")
    written = {m["id"]: m["text"] for m in turns}

    def write(m: dict[str, Any]) -> None:
        wire.read_write(client.call("POST", "/write", {"namespace": "bench", **m}), "bench")

    def retrieve() -> None:
        body = {"namespace": "bench", "question": question, "k": 10}
        wire.read_retrieve(client.call("POST", "/retrieve", body), "bench", 10, written)

    figures["write via protocol"] = timed([lambda m=m: write(m) for m in turns])
    figures["retrieve via protocol"] = timed([retrieve] * args.retrieves)
    return figures


def cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--retrieves", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the server half of this script
    args = parser.parse_args()
    if args.serve is not None:
        serve(WordStore(), args.serve)
        return
    from bench.systems.http_system import ProtocolClient
    from bench.systems.process import ServerProcess, free_port

    port = free_port()
    import tempfile

    with tempfile.TemporaryDirectory() as logs:
        server = ServerProcess(
            [sys.executable, __file__, "--serve", str(port)], label="wordstore", log_dir=Path(logs), env={}, cwd=None
        )
        client = ProtocolClient(f"http://127.0.0.1:{port}", "wordstore", 30.0, server)
        try:
            server.wait_ready(lambda: client.call("GET", "/health"), 30.0)
            rounds = [one_round(client, args) for _ in range(args.rounds)]
        finally:
            client.close()
            server.stop()
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"CPU: {cpu()}; load average {load}; {args.writes} writes, {args.retrieves} retrieves, {args.rounds} rounds")
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    for name, value in medians.items():
        print(f"  {name:<24} {value:9.1f} us per call")
    for what in ("write", "retrieve"):
        inside, outside = medians[f"{what} in-process"], medians[f"{what} via protocol"]
        print(
            f"  {what}: protocol adds {outside - inside:.0f} us per call ({outside / inside:.1f}x the in-process call)"
        )


if __name__ == "__main__":
    main()
