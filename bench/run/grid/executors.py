"""Where a grid's units run: a local process pool (default) or Ray (a local cluster, or one at `--address`).

Both take `UnitTask`s and give back `UnitOutcome`s, and both retry a unit whose worker process died: Ray by its own
task retries (`max_retries`), the pool by starting a fresh process for the slot that lost it. Both
start the grid's one budget service: a Ray actor pinned to the driver's node, or a multiprocessing manager.
"""

from __future__ import annotations

import multiprocessing
import socket
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.managers import BaseManager
from typing import Any
from urllib.parse import urlsplit

from bench.errors import GridError
from bench.registry import Registry
from bench.run.grid.budget import BudgetLink, BudgetService
from bench.run.grid.worker import FAILED, UnitOutcome, UnitTask, run_unit, worker_environment

ADDRESS_TIMEOUT_S = 5.0
RAY_EXTRA_HINT = "install the [ray] extra: .venv/bin/pip install -c requirements.lock -e '.[ray]'"

#: executor name -> factory(workers=, retries=, address=) -> Executor (each registered below, in this module; the grid
#: spec imports this registry to check an executor's name)
EXECUTORS: Registry[Callable[..., Any]] = Registry(
    "executor", hint="a factory in bench/run/grid/executors.py decorated @EXECUTORS.register(NAME)"
)


@dataclass(frozen=True)
class BudgetArgs:
    ledger_path: str
    grid_id: str
    limit_usd: float
    total_limit_usd: float


class Executor:
    """The interface: start (may refuse with a GridError before anything runs), submit, collect, close."""

    name = "executor"
    retries = 0

    def start(self, budget: BudgetArgs) -> BudgetLink:
        raise NotImplementedError

    def submit(self, task: UnitTask) -> None:
        raise NotImplementedError

    def pending(self) -> int:
        raise NotImplementedError

    def next_outcomes(self) -> list[tuple[UnitTask, UnitOutcome]]:
        """Block until at least one submitted unit has ended (ran, refused, failed or died past its retries)."""
        raise NotImplementedError

    def release_unit(self, unit_id: str) -> None:
        """Give back any budget a unit's dead worker still held."""

    def close(self) -> None:
        raise NotImplementedError


def died(task: UnitTask, reason: str) -> UnitOutcome:
    """The outcome of a unit whose worker died on every attempt."""
    return UnitOutcome(
        unit_id=task.unit.id,
        status=FAILED,
        message=f"the worker died on every attempt ({reason})",
        files={},
        shard=f"{task.shard_root}/{task.unit.id}",
        host=socket.gethostname(),
        pid=0,
    )


# ------------------------------------------------------------------------------------------------ process pool


class _Manager(BaseManager):
    pass


_Manager.register("BudgetService", BudgetService)


class LocalExecutor(Executor):
    """`workers` slots, each a pool of one spawned process (a fresh interpreter, as a Ray worker is) that is reused
    from unit to unit. One process per slot means a process that dies broke only its own slot, so exactly the unit
    it ran is retried (in a fresh process), and the others run on."""

    name = "local"

    def __init__(self, workers: int, retries: int, target: Callable[[UnitTask], UnitOutcome] = run_unit) -> None:
        self.workers = workers
        self.retries = retries
        self._target = target  # what each worker runs (`run_unit`; a test passes one that dies)
        self._context = multiprocessing.get_context("spawn")
        self._slots: list[ProcessPoolExecutor | None] = [None] * workers
        self._queue: deque[UnitTask] = deque()
        self._running: dict[Future[UnitOutcome], tuple[int, UnitTask]] = {}
        self._attempts: dict[str, int] = {}
        self._manager: _Manager | None = None
        self._service: Any = None

    def start(self, budget: BudgetArgs) -> BudgetLink:
        self._manager = _Manager(ctx=self._context)
        self._manager.start()
        self._service = self._manager.BudgetService(  # type: ignore[attr-defined]
            budget.ledger_path, budget.grid_id, budget.limit_usd, budget.total_limit_usd
        )
        return BudgetLink("manager", self._service)

    def submit(self, task: UnitTask) -> None:
        self._queue.append(task)
        self._fill()

    def _fill(self) -> None:
        busy = {slot for slot, _ in self._running.values()}
        for slot in range(self.workers):
            if not self._queue:
                return
            if slot in busy:
                continue
            pool = self._slots[slot]
            if pool is None:
                pool = ProcessPoolExecutor(max_workers=1, mp_context=self._context, initializer=worker_environment)
                self._slots[slot] = pool
            task = self._queue.popleft()
            self._attempts[task.unit.id] = self._attempts.get(task.unit.id, 0) + 1
            self._running[pool.submit(self._target, task)] = (slot, task)

    def pending(self) -> int:
        return len(self._queue) + len(self._running)

    def next_outcomes(self) -> list[tuple[UnitTask, UnitOutcome]]:
        done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
        ended: list[tuple[UnitTask, UnitOutcome]] = []
        for future in done:
            slot, task = self._running.pop(future)
            try:
                ended.append((task, future.result()))
            except BrokenProcessPool as exc:  # the slot's process died while it ran this unit
                broken = self._slots[slot]
                if broken is not None:
                    broken.shutdown(wait=False, cancel_futures=True)
                self._slots[slot] = None
                self.release_unit(task.unit.id)
                if self._attempts[task.unit.id] <= self.retries:
                    self._queue.appendleft(task)
                else:
                    ended.append((task, died(task, f"{type(exc).__name__}: {exc}")))
        self._fill()
        return ended

    def release_unit(self, unit_id: str) -> None:
        if self._service is not None:
            self._service.release_unit(unit_id)

    def close(self) -> None:
        for slot, pool in enumerate(self._slots):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            self._slots[slot] = None
        if self._manager is not None:
            self._manager.shutdown()
            self._manager = None


# ---------------------------------------------------------------------------------------------------------- Ray


def check_address(address: str) -> None:
    """A Ray address must answer before the grid starts: one TCP connection within a few seconds, else a
    GridError (nothing has run). `auto` (a cluster started on this machine by `ray start`) is Ray's to find."""
    if address == "auto":
        return
    split = urlsplit(address if "://" in address else f"ray-gcs://{address}")
    try:
        host, port = split.hostname, split.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise GridError(f"--address: expected host:port, ray://host:port or auto, found {address!r}")
    try:
        with socket.create_connection((host, port), timeout=ADDRESS_TIMEOUT_S):
            pass
    except OSError as exc:
        raise GridError(
            f"--address {address}: expected a Ray cluster answering there, found none within "
            f"{ADDRESS_TIMEOUT_S:.0f} s ({exc.strerror or exc}); nothing was run"
        ) from None


def import_ray() -> Any:
    try:
        # local import: ray is the optional ray extra; its absence is refused in one line below
        import ray
    except ImportError:
        raise GridError(f"--executor ray: expected the ray package, found it not installed; {RAY_EXTRA_HINT}") from None
    return ray


class RayExecutor(Executor):
    """Units as Ray tasks (one CPU each, retried by Ray when their worker dies); the budget as an actor."""

    name = "ray"

    def __init__(self, workers: int, retries: int, address: str | None) -> None:
        self.workers = workers
        self.retries = retries
        self.address = address
        self._ray: Any = None
        self._remote: Any = None
        self._actor: Any = None
        self._refs: dict[Any, UnitTask] = {}
        self.started_cluster = False

    def check(self) -> None:
        """What can be checked before anything is written: Ray is installed and the address answers."""
        self._ray = import_ray()
        if self.address is not None:
            check_address(self.address)

    def start(self, budget: BudgetArgs) -> BudgetLink:
        ray = self._ray or import_ray()
        self._ray = ray
        try:
            if self.address is None:
                ray.init(
                    num_cpus=self.workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level="ERROR",
                    ignore_reinit_error=True,
                )
                self.started_cluster = True
            else:
                ray.init(address=self.address, log_to_driver=False, logging_level="ERROR", ignore_reinit_error=True)
        except Exception as exc:  # Ray's own errors are many; each is one line here
            where = self.address or "a local cluster"
            raise GridError(f"--executor ray: expected Ray to start on {where}, found: {_first_line(exc)}") from None
        # local import: ray is the optional ray extra, which the base install lacks
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self._actor = (
            ray.remote(BudgetService)
            .options(num_cpus=0, scheduling_strategy=here)
            .remote(budget.ledger_path, budget.grid_id, budget.limit_usd, budget.total_limit_usd)
        )
        self._remote = ray.remote(num_cpus=1, max_retries=self.retries, retry_exceptions=False)(run_unit)
        return BudgetLink("ray", self._actor)

    def submit(self, task: UnitTask) -> None:
        self._refs[self._remote.remote(task)] = task

    def pending(self) -> int:
        return len(self._refs)

    def next_outcomes(self) -> list[tuple[UnitTask, UnitOutcome]]:
        ray = self._ray
        ready, _ = ray.wait(list(self._refs), num_returns=1)
        ended: list[tuple[UnitTask, UnitOutcome]] = []
        for ref in ready:
            task = self._refs.pop(ref)
            try:
                ended.append((task, ray.get(ref)))
            except Exception as exc:  # the worker died past its retries (run_unit itself never raises)
                self.release_unit(task.unit.id)
                ended.append((task, died(task, _first_line(exc))))
        return ended

    def release_unit(self, unit_id: str) -> None:
        if self._actor is not None:
            self._ray.get(self._actor.release_unit.remote(unit_id))

    def close(self) -> None:
        if self._ray is not None and self._ray.is_initialized():
            self._ray.shutdown()


@EXECUTORS.register("local")
def _local(workers: int, retries: int, address: str | None) -> Executor:
    return LocalExecutor(workers, retries)  # a local pool has no address (the grid spec refuses one)


@EXECUTORS.register("ray")
def _ray(workers: int, retries: int, address: str | None) -> Executor:
    return RayExecutor(workers, retries, address)


def make_executor(name: str, workers: int, retries: int, address: str | None) -> Executor:
    """The executor registered under `name` (RegistryError listing the known ones otherwise)."""
    executor: Executor = EXECUTORS.create(name, workers=workers, retries=retries, address=address)
    return executor


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
