"""Per-message write time and per-question retrieval time of each system on the offline stack (wall clock).

Not a test: it prints figures for the README. Every system ingests the same first N dev-slice turns in a fresh run
folder with a fresh local cache (so every stand-in call is computed, as on a first run), then again from that cache
(a replay, as `make reproduce-dev` does), and answers retrieval for every dev question at k=20.

    .venv/bin/python scripts/bench_systems.py [--turns 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")

from bench.data.slices import load_slice
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.stacks import OFFLINE_STACK, build_stack
from bench.systems import SystemContext, build_system

SYSTEMS = (("raw-turn-rag", {}), ("full-context", {}), ("mem0", {}), ("engram", {"preset": "E2"}), ("engram", {}))


def _one_pass(name: str, settings: dict, root: Path, cache: Path, turns: int) -> tuple[float, list[float], float]:
    dev = load_slice("dev")
    context = SystemContext(
        stack=OFFLINE_STACK,
        models=build_stack(OFFLINE_STACK).models,
        gateway=Gateway(local=cache, subsets=[]),
        run_dir=root,
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )
    started = time.perf_counter()
    system = build_system(name, settings, context)
    construct = time.perf_counter() - started
    writes = []
    for message in dev.messages[:turns]:
        started = time.perf_counter()
        system.write(message)
        writes.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    for question in dev.questions:
        system.retrieve(question, 20)
    retrieve_ms = (time.perf_counter() - started) * 1000 / len(dev.questions)
    system.close()
    context.gateway.close()
    return construct, writes, retrieve_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    shared_minilm().embed(["warm up"])  # the model load is a one-off per process, not a per-message cost
    print(
        f"offline stack, first {args.turns} dev turns, wall clock on this machine "
        f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'system':<22}{'build s':>9}{'write p50 ms':>14}{'write mean ms':>15}{'replay p50 ms':>15}{'retrieve ms':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, settings) in enumerate(SYSTEMS):
            label = name + (f" ({settings['preset']})" if settings else "")
            cache = Path(tmp) / f"cache{index}"
            construct, writes, retrieve_ms = _one_pass(name, settings, Path(tmp) / f"first{index}", cache, args.turns)
            _, replays, _ = _one_pass(name, settings, Path(tmp) / f"replay{index}", cache, args.turns)
            print(
                f"{label:<22}{construct:>9.1f}{statistics.median(writes):>14.1f}{statistics.mean(writes):>15.1f}"
                f"{statistics.median(replays):>15.1f}{retrieve_ms:>13.1f}"
            )


if __name__ == "__main__":
    main()
