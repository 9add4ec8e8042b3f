"""The local executor retries a unit whose worker process died, in a fresh pool, and gives up past its retries."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from bench.run.grid.executors import BudgetArgs, LocalExecutor
from bench.run.grid.spec import Unit
from bench.run.grid.worker import UnitOutcome, UnitTask


def die_on_first_attempt(task: UnitTask) -> UnitOutcome:
    """Runs in a pool worker: the first attempt of each unit kills its own process, a later one succeeds."""
    attempts = Path(task.shard_root) / f"{task.unit.id}.attempts"
    with attempts.open("a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\n")
    if len(attempts.read_text(encoding="utf-8").split()) == 1 or task.unit.arm == "always-dies":
        os._exit(1)
    return UnitOutcome(task.unit.id, "ran", "", {}, task.shard_root, socket.gethostname(), os.getpid())


def _task(arm: str, root: Path) -> UnitTask:
    unit = Unit(arm, "dev", 0, (None,), "hash")
    return UnitTask(unit, {}, str(root), (), None, socket.gethostname(), "grid-test")


def test_a_dead_pool_worker_is_retried_in_a_fresh_pool_until_its_retries_run_out(tmp_path: Path) -> None:
    executor = LocalExecutor(workers=2, retries=2, target=die_on_first_attempt)
    executor.start(BudgetArgs(str(tmp_path / "ledger.jsonl"), "grid-test", 1.0, 1.0))
    try:
        for arm in ("first", "second", "always-dies"):
            executor.submit(_task(arm, tmp_path))
        outcomes: dict[str, UnitOutcome] = {}
        while executor.pending():
            outcomes.update({task.unit.arm: outcome for task, outcome in executor.next_outcomes()})
    finally:
        executor.close()
    assert outcomes["first"].status == outcomes["second"].status == "ran"
    assert outcomes["always-dies"].status == "failed" and "died on every attempt" in outcomes["always-dies"].message
    for arm in ("first", "second"):
        pids = (tmp_path / f"{arm}__dev__r0.attempts").read_text().split()
        assert len(pids) >= 2 and outcomes[arm].pid == int(pids[-1]) != int(pids[0])  # a new process ran it
    assert len((tmp_path / "always-dies__dev__r0.attempts").read_text().split()) == 3  # 1 + 2 retries
