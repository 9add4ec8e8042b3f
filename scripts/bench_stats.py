"""Benchmark: the 10,000-draw conversation-cluster bootstrap over 610 paired questions (target: under 0.5 s).

Synthetic paired differences with the held-out layout (4 conversations of 81, 152, 199 and 178 questions); the
timing does not depend on the values. Prints the median of several runs after one warm-up, plus the item bootstrap
and the calibration bootstrap for reference.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

from bench.analysis.stats import cluster_bootstrap, item_bootstrap

HELDOUT_SIZES = {"conv-30": 81, "conv-41": 152, "conv-42": 199, "conv-43": 178}
TARGET_S = 0.5
REPEATS = 7


def _median_seconds(run: Callable[[], object]) -> float:
    run()  # warm-up: imports, allocator
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    clusters = np.repeat(list(HELDOUT_SIZES), list(HELDOUT_SIZES.values()))
    d = rng.choice([-1.0, 0.0, 1.0], size=clusters.size, p=[0.1, 0.7, 0.2])
    clustered = _median_seconds(lambda: cluster_bootstrap(d, clusters, draws=10_000, seed=1))
    unclustered = _median_seconds(lambda: item_bootstrap(d, draws=10_000, seed=1))
    scores = rng.random(50)
    calibration = _median_seconds(lambda: item_bootstrap(scores, draws=10_000, seed=1))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, numpy {np.__version__}")
    print(
        f"cluster bootstrap, 10,000 draws, {clusters.size} questions, G=4: {clustered:.3f} s "
        f"(median of {REPEATS}; target < {TARGET_S} s) {'OK' if clustered < TARGET_S else 'TOO SLOW'}"
    )
    print(f"item bootstrap, 10,000 draws, {clusters.size} questions: {unclustered:.3f} s")
    print(f"item bootstrap, 10,000 draws, 50 calibration items: {calibration:.3f} s")


if __name__ == "__main__":
    main()
