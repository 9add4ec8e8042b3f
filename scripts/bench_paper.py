"""Time the whole paper build from results/v1 (numbers, tables, figures, article, appendix index), in this process
from a cold start, into a temporary directory so the committed paper/ is untouched. Prints wall and CPU seconds
(CPU is the fairer figure on a shared machine) and the machine's load average at the start."""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

started_wall = time.perf_counter()
load_at_start = os.getloadavg()[0]

from bench.report.build import RESULTS_ROOT, build  # noqa: E402  (imports are part of what a build costs)

imported_wall = time.perf_counter()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp)
    report = build(RESULTS_ROOT, "v1", out / "paper", appendix_dir=out / "appendix_e")
finished_wall = time.perf_counter()

print(f"paper build from results/v1: {len(report.written)} files")
print(f"  wall {finished_wall - started_wall:.1f} s (imports {imported_wall - started_wall:.1f} s), "
      f"CPU {cpu_seconds():.1f} s, load average at start {load_at_start:.1f} on {os.cpu_count()} cores")
print(f"  target: under 10 s -> {'ok' if finished_wall - started_wall < 10 else 'OVER'}")
