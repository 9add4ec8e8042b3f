"""How long does the engram arm take on LongMemEval, next to the cheapest arm? `raw-turn-rag` (the anchor: every
turn embedded once with MiniLM, no extraction) and `engram` (the rules stand-ins' extraction and decisions on every
turn) on the same LongMemEval slice, offline, each the real command line in a fresh temporary cache, runs and output
folder, one after the other in the same invocation. Each question is its own haystack, so both print seconds per
question as well as the wall time and the ratio engram / anchor.

    .venv/bin/python scripts/bench_longmemeval.py [--slice longmemeval:oracle] [--arm engram]

The whole oracle split (500 questions, 10,960 turns) takes hours on a shared 2-core machine; `--slice
longmemeval:oracle/sample` (12 questions, two of each type) takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_concurrency import machine  # the CPU model and load average, as every script reports them

REPO = Path(__file__).resolve().parents[1]
ANCHOR = "raw-turn-rag"


def measure(root: Path, arm: str, slice_name: str) -> tuple[float, int]:
    """(wall seconds of `engram-bench run ARM --slice SLICE --stack offline`, questions answered)."""
    here = root / arm
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env |= {"ENGRAM_CACHE_DIR": str(here / "cache"), "ENGRAM_RUNS_DIR": str(here / "runs")}
    argv = [sys.executable, "-m", "bench", "--quiet", "run", arm, "--slice", slice_name, "--stack", "offline"]
    argv += ["--out", str(here / "out")]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{arm} failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    # an arm answering at several k (engram: 3 and 20) writes one file per k, all on the same questions
    written = sorted((here / "out").glob("*.json"))
    if not written:
        raise SystemExit(f"{arm} wrote no result file in {here / 'out'}")
    return wall, len(json.loads(written[0].read_text(encoding="utf-8"))["answers"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice", default="longmemeval:oracle")
    parser.add_argument("--arm", default="engram")
    args = parser.parse_args()
    cpu, load_before = machine()
    with tempfile.TemporaryDirectory(prefix="bench-longmemeval-") as folder:
        root = Path(folder)
        anchor_wall, anchor_n = measure(root, ANCHOR, args.slice)
        wall, n = measure(root, args.arm, args.slice)
    _, load_after = machine()
    print(f"CPU: {cpu} ({os.cpu_count()} cores seen); load average before {load_before}, after {load_after}")
    print(f"{ANCHOR} on {args.slice} (anchor): {anchor_wall:.0f} s for {anchor_n} questions, "
          f"{anchor_wall / anchor_n:.1f} s per question")  # fmt: skip
    print(f"{args.arm} on {args.slice}: {wall:.0f} s for {n} questions, {wall / n:.1f} s per question")
    print(f"ratio {args.arm} / {ANCHOR}: {wall / anchor_wall:.2f}")


if __name__ == "__main__":
    main()
