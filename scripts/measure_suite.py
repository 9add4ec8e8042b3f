"""Where the test suite's time goes: CPU seconds per test, per pytest-xdist worker, and in all.

    .venv/bin/python scripts/measure_suite.py                      # `make test`'s selection: -m "not slow", -n 2
    .venv/bin/python scripts/measure_suite.py --top 40 -- -m slow tests/bench/systems

Runs pytest once with this file loaded as a plugin, which records for every test the CPU its process and the
children it waited for used (resource.getrusage), and the wall time, from setup to teardown. On a shared machine the
wall time of a test says more about the other sessions than about the test; its CPU seconds do not, so tests are
ranked by CPU. The anchor, measured in the same invocation: collecting the same tests in one process (every xdist
worker pays it before its first test). Prints the CPU model and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RECORDS_ENV = "MEASURE_SUITE_RECORDS"  # the folder each test process writes its records to

_started: dict[str, tuple[float, float]] = {}
_records: list[tuple[str, float, float]] = []
_running_tests_here = [True]  # False in xdist's controller, which hears of every test its workers run


def pytest_configure(config: Any) -> None:
    is_worker = "PYTEST_XDIST_WORKER" in os.environ
    _running_tests_here[0] = is_worker or not getattr(config.option, "numprocesses", None)


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if not _running_tests_here[0]:
        return
    _started[nodeid] = (_cpu_seconds(), time.monotonic())


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if not _running_tests_here[0]:
        return
    cpu, wall = _started.pop(nodeid)
    _records.append((nodeid, _cpu_seconds() - cpu, time.monotonic() - wall))


def pytest_sessionfinish(session: Any) -> None:
    folder = os.environ.get(RECORDS_ENV)
    if folder and _records:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder, f"{worker}.json").write_text(json.dumps(_records))


def machine() -> tuple[str, str]:
    model = "unknown CPU"
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    return model, " ".join(f"{x:.2f}" for x in os.getloadavg())


def _timed(argv: list[str], env: dict[str, str]) -> tuple[int, float, float]:
    """Exit code, wall seconds and CPU seconds (the process tree it waited for) of one command."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    code = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, time.monotonic() - start, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25, help="how many of the most expensive tests to list")
    parser.add_argument("pytest_args", nargs="*", help='pytest\'s arguments (default: -m "not slow" -n 2)')
    args = parser.parse_args()
    selection = args.pytest_args or ["-m", "not slow", "-n", "2", "--dist", "worksteal"]
    model, load_before = machine()
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    with tempfile.TemporaryDirectory(prefix="measure-suite-") as records:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO / "scripts"), str(REPO), os.environ.get("PYTHONPATH", "")]),
            RECORDS_ENV: records,
        }
        _, collect_wall, collect_cpu = _timed([*pytest, "--collect-only", "-q", *_one_process(selection)], env)
        code, wall, cpu = _timed([*pytest, "-p", "measure_suite", *selection], env)
        per_worker = {path.stem: json.loads(path.read_text()) for path in sorted(Path(records).glob("*.json"))}
    _, load_after = machine()
    _report(per_worker, args.top)
    print(f"\n{model}, {os.cpu_count()} cores, load average {load_before} before / {load_after} after")
    print(f"pytest {' '.join(selection)}: exit {code}, {wall:.1f} s wall, {cpu:.1f} CPU-s (its whole process tree)")
    print(f"anchor, collecting the same tests in one process: {collect_wall:.1f} s wall, {collect_cpu:.1f} CPU-s")


def _one_process(argv: list[str]) -> list[str]:
    """The pytest arguments without xdist's -n and --dist (and their values): the anchor collects in one process."""
    kept, skip_next = [], False
    for arg in argv:
        if skip_next:
            skip_next = False
        elif arg in ("-n", "--dist"):
            skip_next = True
        elif not arg.startswith(("--dist=", "--numprocesses")):
            kept.append(arg)
    return kept


def _report(per_worker: dict[str, list[tuple[str, float, float]]], top: int) -> None:
    rows = [(name, cpu, wall) for records in per_worker.values() for name, cpu, wall in records]
    print(f"{len(rows)} tests, {sum(cpu for _, cpu, _ in rows):.1f} CPU-s in tests")
    for worker, records in per_worker.items():
        cpu, wall = sum(r[1] for r in records), sum(r[2] for r in records)
        print(f"  {worker}: {len(records)} tests, {cpu:.1f} CPU-s, {wall:.1f} s")
    print(f"\nthe {top} most expensive tests (CPU-s, wall s):")
    for name, cpu, wall in sorted(rows, key=lambda row: -row[1])[:top]:
        print(f"{cpu:7.1f} {wall:7.1f}  {name}")
    by_file: dict[str, float] = defaultdict(float)
    for name, cpu, _ in rows:
        by_file[name.split("::")[0]] += cpu
    print(f"\nthe {top} most expensive files (CPU-s):")
    for name, cpu in sorted(by_file.items(), key=lambda item: -item[1])[:top]:
        print(f"{cpu:7.1f}  {name}")


if __name__ == "__main__":
    main()
