"""One grid unit in a worker process: the unit the driver planned, run as it is, with the grid's shard, budget and a
private results tree.

The worker shares nothing with the driver but what the task carries and what it sends back:

- in: the unit as the run planner resolved it (its arm, slice and stack built, its request set by the driver), the
  result files it reads (a token-matched arm's sweep and reference), where its shard lives on this machine, the
  driver's cache folder (read when it is on this machine), and the link to the grid's budget service;
- out: every file the run wrote (result, key list, trace sidecar) as bytes, for the driver to write into its
  results tree, and, when the worker is on another machine, its shard's entries.

The run itself is `bench.run.runner.run_planned` (what `run_arm` does with each unit it planned, nothing planned
again) with the results tree of `run --update-committed` rooted in a fresh staging folder, so a grid's result is
the file `run` writes for the same unit. A user error (a refused spend, a
cache miss in replay) ends the unit with that one line; the shard is kept either way, so what was paid for stays.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import BenchError, BudgetExceeded, GridError
from bench.models.budget import RunLabels
from bench.models.gateway import Gateway, check_mode
from bench.run.grid.budget import BudgetLink, RemoteBudget
from bench.run.grid.shards import shard_cache, shard_lock, shard_texts
from bench.run.grid.units import Unit, replicate_root
from bench.run.request import RunRequest, RunServices
from bench.run.runner import run_planned

# Set in every worker whatever its machine's environment says: no model hub is ever reached from a grid worker.
WORKER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "MEM0_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    "TQDM_DISABLE": "1",  # no library progress bars from workers: the driver's one bar is the grid's
}


def worker_environment() -> None:
    """Called first in every worker process (the pool's initializer; the top of `run_unit` under Ray)."""
    os.environ.update(WORKER_ENV)


PID_FILE = "worker.pid"
RAN, REFUSED, FAILED, SKIPPED, BLOCKED = "ran", "refused", "failed", "skipped", "blocked"


@dataclass(frozen=True)
class UnitTask:
    unit: Unit  # its `planned` unit carries the request it runs under (run id, mode, tag, concurrency, replicate)
    inputs: dict[str, bytes] = field(repr=False)  # path relative to the grid's output root -> bytes
    shard_root: str  # this machine's folder of shards (the driver's when the worker shares its machine)
    read_caches: tuple[str, ...]  # caches read before the shard (the driver's local cache)
    budget: BudgetLink | None
    driver_host: str
    grid_id: str


@dataclass(frozen=True)
class UnitOutcome:
    unit_id: str
    status: str  # ran | refused | failed
    message: str
    files: dict[str, bytes] = field(repr=False)
    shard: str
    host: str
    pid: int
    shard_entries: list[str] | None = field(default=None, repr=False)  # only from another machine
    spent_usd: float = 0.0
    wall_s: float = 0.0


def run_unit(task: UnitTask) -> UnitOutcome:
    """Run one unit (called in a worker process by either executor)."""
    worker_environment()
    unit = task.unit
    started = time.perf_counter()
    shard = Path(task.shard_root) / unit.id
    host = socket.gethostname()
    with shard_lock(shard):
        (shard / PID_FILE).write_text(f"{os.getpid()}\n", encoding="utf-8")
        staging = Path(tempfile.mkdtemp(prefix=f"engram-grid-{unit.id}-"))
        budgets: list[RemoteBudget] = []
        try:
            tree = staging / "results"
            for relative, payload in task.inputs.items():
                target = tree / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(payload)

            def gateway(request: RunRequest, services: RunServices, run_id: str, arm: str, slice_name: str) -> Gateway:
                labels = RunLabels(run_id=f"{task.grid_id}:{run_id}", arm=arm, slice_name=slice_name)
                budget = RemoteBudget(task.budget, labels, unit.id) if task.budget is not None else None
                if budget is not None:
                    budgets.append(budget)
                return Gateway(
                    local=shard_cache(shard),
                    subsets=services.subsets,
                    mode=check_mode(request.mode),
                    strict=request.strict,
                    labels=labels,
                    budget=budget,
                    read_through=[Path(p) for p in task.read_caches],
                    replicate=request.replicate,
                )

            services = RunServices(  # the unit's own staging tree and shard gateway
                results_root=tree / replicate_root(unit.replicate) if unit.replicate else tree,
                runs_root=staging / "runs",
                progress=False,
                say=lambda line: None,
                gateway_factory=gateway,
            )
            status, message = RAN, ""
            try:
                if unit.planned is None:
                    raise GridError(f"{unit.label}: expected a unit planned by the grid, found one without a plan")
                run_planned(unit.planned, services)
            except BudgetExceeded as exc:
                status, message = REFUSED, str(exc)
            except BenchError as exc:
                status, message = FAILED, str(exc)
            except Exception as exc:  # a bug: reported with where it happened, the shard still merged
                where = traceback.extract_tb(exc.__traceback__)[-1]
                status, message = FAILED, f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})"
            files = {}
            if status == RAN:
                for path in sorted(tree.rglob("*")):
                    relative = path.relative_to(tree).as_posix()
                    if path.is_file() and relative not in task.inputs:
                        files[relative] = path.read_bytes()
            remote = host != task.driver_host
            return UnitOutcome(
                unit_id=unit.id,
                status=status,
                message=message.strip().splitlines()[0] if message.strip() else "",
                files=files,
                shard=str(shard),
                host=host,
                pid=os.getpid(),
                shard_entries=shard_texts(shard) if remote else None,
                spent_usd=sum(b.spent_usd for b in budgets),
                wall_s=round(time.perf_counter() - started, 3),
            )
        finally:
            shutil.rmtree(staging, ignore_errors=True)
