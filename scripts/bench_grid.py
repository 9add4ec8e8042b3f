"""Wall time of four offline units: one by one with `engram-bench run` (the anchor) vs `engram-bench grid` on Ray
and on the local process pool, on this machine; plus Ray's own start-up.

Every mode starts from its own empty local cache (the shipped subsets are read by all), so each computes the same
stand-in calls. Prints ratios against the anchor measured in the same run; nothing is asserted.

    .venv/bin/python scripts/bench_grid.py [--arms raw-turn-rag,full-context,engram,engram-reranking-off]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_ARMS = "raw-turn-rag,full-context,engram,engram-reranking-off"


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_grid: {' '.join(argv[:4])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def ray_startup(workers: int) -> float:
    code = (
        "import time; t = time.perf_counter(); import ray; "
        f"ray.init(num_cpus={workers}, include_dashboard=False, logging_level='ERROR'); "
        "print(time.perf_counter() - t); ray.shutdown()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default=DEFAULT_ARMS, help="four (or more) arms, run on the dev slice")
    parser.add_argument("--slice", default="dev")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    arms = args.arms.split(",")
    engram_bench = str(BIN / "engram-bench")
    with tempfile.TemporaryDirectory(prefix="bench-grid-") as scratch:
        root = Path(scratch)

        def env(mode: str) -> dict[str, str]:
            return {
                **os.environ,
                "ENGRAM_CACHE_DIR": str(root / mode / "cache"),
                "ENGRAM_RUNS_DIR": str(root / mode / "runs"),
            }

        load_before = os.getloadavg()[0]
        sequential = 0.0
        for arm in arms:
            out = root / "sequential" / "out" / arm
            sequential += timed(
                [engram_bench, "run", arm, "--slice", args.slice, "--out", str(out), "--quiet"], env("sequential")
            )
        grid = [engram_bench, "grid", *[f"--arm={a}" for a in arms], "--slice", args.slice, "--quiet"]
        grid += ["--workers", str(args.workers)]
        on_ray = timed([*grid, "--executor", "ray", "--out", str(root / "ray" / "out")], env("ray"))
        on_pool = timed([*grid, "--executor", "local", "--out", str(root / "local" / "out")], env("local"))
        startup = ray_startup(args.workers)
        load_after = os.getloadavg()[0]

    units = f"{len(arms)} offline units ({', '.join(arms)} on {args.slice})"
    print(
        f"{units}, {args.workers} workers, {os.cpu_count()} cores, load average {load_before:.1f} -> {load_after:.1f}"
    )
    print(f"  one by one with `run` (anchor): {sequential:7.1f} s")
    print(f"  grid --executor ray:            {on_ray:7.1f} s   speed-up {sequential / on_ray:.2f}x")
    print(f"  grid --executor local:          {on_pool:7.1f} s   speed-up {sequential / on_pool:.2f}x")
    print(f"  ray.init(num_cpus={args.workers}) alone:     {startup:7.1f} s")


if __name__ == "__main__":
    main()
