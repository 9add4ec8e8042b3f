"""The grid under Ray (a local cluster of two CPUs): the same files as `run`, and a killed worker retried from its
shard without paying for any call twice. Ray is heavy on two shared cores, so these are the only Ray tests."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer

from bench.models.budget import Ledger
from bench.run.grid import GridSpec, run_grid
from bench.run.grid.spec import unit_id
from bench.run.grid.worker import PID_FILE
from bench.run.runner import run_arm
from tests.bench.models.test_paper_stack_e2e import plausible_responder, six_message_slice
from tests.bench.run_args import run_args

pytestmark = pytest.mark.slow


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file() and ".grid" not in p.parts}


def test_grid_under_ray_writes_the_files_run_writes_one_by_one(tmp_path: Path) -> None:
    arms = ("engram-jev", "engram-llm-decider")  # both replay every call from the shipped dev subset
    sequential = tmp_path / "sequential"
    for arm in arms:
        run_arm(
            arm,
            "dev",
            *run_args(
                results_root=sequential,
                update_committed=True,
                runs_root=tmp_path / "runs",
                cache_dir=tmp_path / "cache-sequential",
                progress=False,
                say=lambda line: None,
            ),
        )
    lines: list[str] = []
    report = run_grid(
        GridSpec(arms=arms, slices=("dev",), executor="ray", workers=2, out=tmp_path / "grid"),
        cache_dir=tmp_path / "cache-grid",
        runs_root=tmp_path / "runs",
        progress=False,
        say=lines.append,
    )
    assert report.ok and [r.status for r in report.units.values()] == ["ran", "ran"]
    assert sum(line.startswith("✓ ") for line in lines) == 2  # one line per finished unit

    expected, got = _files(sequential), _files(tmp_path / "grid")
    assert set(got) - {"grid-summary.md"} == set(expected)
    assert {name for name in expected if name.endswith(".json")} == {
        "offline/dev/engram-jev.json",
        "offline/dev/engram-llm-decider.json",
    }
    for name, path in expected.items():
        if name.endswith(".json"):
            mine, theirs = json.loads(got[name].read_text()), json.loads(path.read_text())
            assert mine.pop("timing") and theirs.pop("timing")
            assert mine == theirs, name
            assert mine["calls"]["misses"] == 0  # a complete cache: even the hit counts agree
        else:
            assert got[name].read_bytes() == path.read_bytes(), name  # key lists, trace sidecars

    again = run_grid(
        GridSpec(arms=arms, slices=("dev",), executor="ray", workers=2, out=tmp_path / "grid"),
        cache_dir=tmp_path / "cache-grid",
        progress=False,
        say=lines.append,
    )
    assert [r.status for r in again.units.values()] == ["skipped", "skipped"]  # same arm hash and commit


def test_a_killed_worker_is_retried_by_ray_and_replays_its_shard_without_a_repeated_paid_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shards = tmp_path / "shards"
    pid_file = shards / unit_id("mem0", "dev", 0) / PID_FILE
    killed: list[int] = []
    lock = threading.Lock()
    seen = {"messages": 0}

    def crash_once(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        """On the fourth Messages request, kill the worker that sent it before answering."""
        with lock:
            if path == MESSAGES:
                seen["messages"] += 1
                if seen["messages"] == 4 and not killed:
                    pid = int(pid_file.read_text())
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
        return plausible_responder(path, body)

    cache = tmp_path / "cache"
    with FakeModelServer(crash_once) as anthropic:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
        report = run_grid(
            GridSpec(arms=("mem0",), slices=("dev",), stack="paper", executor="ray", workers=2, out=tmp_path / "out"),
            slice_loader=lambda name: six_message_slice(),
            cache_dir=cache,
            runs_root=tmp_path / "runs",
            mode="live",
            assume_yes=True,
            progress=False,
            say=lambda line: None,
            shard_root=shards,
        )
        sent = anthropic.count(MESSAGES)
    assert len(killed) == 1
    unit = next(iter(report.units.values()))
    assert unit.status == "ran", unit.message
    assert int(pid_file.read_text()) != killed[0]  # Ray ran the unit again in a new worker
    billed = [r for r in Ledger(cache / "spend_ledger.jsonl").records() if r["usd"] > 0]
    assert len({r["key"] for r in billed}) == len(billed)  # no paid call was made twice
    # every Messages request was answered once and billed, except the one whose sender was killed mid-call
    assert sent == len(billed) + 1
    assert list((tmp_path / "out" / "paper" / "dev").glob("mem0__k*.json"))
