"""Time the whole paper build from results/v1 (numbers, tables, figures, article, appendix index) from a cold
start, into a temporary directory so the committed paper/ is untouched.

Prints wall and CPU seconds per phase. On this shared 2-core machine the wall time mostly measures the other
processes (the load average is printed too); CPU seconds are what the build itself costs.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    load = os.getloadavg()[0]
    marks = [("start", time.perf_counter(), cpu_seconds())]
    from bench.report.build import compute, write  # imports are part of what a build costs
    from bench.vocab import RESULTS_DIR

    marks.append(("imports", time.perf_counter(), cpu_seconds()))
    paper = compute(RESULTS_DIR, "v1")
    marks.append(("numbers and tables", time.perf_counter(), cpu_seconds()))
    with tempfile.TemporaryDirectory() as tmp:
        report = write(paper, Path(tmp) / "paper", appendix_dir=Path(tmp) / "appendix_e")
    marks.append(("figures, files, appendix", time.perf_counter(), cpu_seconds()))

    wall = marks[-1][1] - marks[0][1]
    cpu = marks[-1][2] - marks[0][2]
    print(f"paper build from results/v1: {len(report.written)} files, {len(paper.numbers)} numbers")
    for (_, w0, c0), (name, w1, c1) in zip(marks, marks[1:]):
        print(f"  {name:<26} wall {w1 - w0:5.1f} s   CPU {c1 - c0:5.1f} s")
    print(
        f"  {'total':<26} wall {wall:5.1f} s   CPU {cpu:5.1f} s   "
        f"(load average {load:.1f} on {os.cpu_count()} cores at start)"
    )
    print(f"  target under 10 s: CPU {'ok' if cpu < 10 else 'OVER'}, wall {'ok' if wall < 10 else 'OVER'}")


if __name__ == "__main__":
    main()
