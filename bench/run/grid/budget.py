"""One budget for a whole grid: a single service reserves and settles the spend of every worker.

The service wraps the harness's own `Budget` over the driver's spend ledger, with the grid's limit as its run limit
(and the cumulative limit of every run sharing the ledger as before). It lives in one process: a Ray actor pinned
to the driver's node under `--executor ray`, the driver's manager process under `--executor local`. Workers never
hold money themselves: before a paid call their gateway asks the service for a reservation (refused, and the call
not sent, when it could pass the limit), and settles the call's real cost through it when it returns. Reservations
of a worker that died are given back (same host: its pid is gone; any host: when the driver hears its unit ended).
"""

from __future__ import annotations

import math
import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import BudgetExceeded
from bench.models.budget import Budget, Ledger, Reservation, RunLabels, usd
from bench.models.cache import CallRequest


@dataclass(frozen=True)
class _Held:
    reservation: Reservation
    pid: int
    host: str
    unit: str


class BudgetService:
    """The grid's one spend guard (runs wherever the executor puts it; every method is thread-safe)."""

    def __init__(self, ledger_path: str, grid_id: str, limit_usd: float, total_limit_usd: float) -> None:
        self._budget = Budget(
            Ledger(Path(ledger_path)),
            RunLabels(run_id=grid_id, arm="grid"),
            run_limit_usd=limit_usd,
            total_limit_usd=total_limit_usd,
        )
        self._grid_id = grid_id
        self._limit = limit_usd
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()

    def reserve(self, request: CallRequest, estimate_usd: float, pid: int, host: str, unit: str) -> tuple[bool, str]:
        """(True, token) with the money held, or (False, the one-line refusal); nothing raises across processes."""
        self._drop_dead()
        try:
            reservation = self._budget.reserve(request, estimate_usd)
        except BudgetExceeded as exc:
            return False, f"grid {self._grid_id} (limit {usd(self._limit)}, --budget): {exc}"
        token = uuid.uuid4().hex
        with self._lock:
            self._held[token] = _Held(reservation, pid, host, unit)
        return True, token

    def release(self, token: str) -> None:
        with self._lock:
            held = self._held.pop(token, None)
        if held is not None:
            self._budget.release(held.reservation)

    def settle(self, request: CallRequest, actual_usd: float, key: str, labels: RunLabels) -> None:
        self._budget.settle(None, request, actual_usd, key, labels=labels)

    def release_unit(self, unit: str) -> int:
        """Give back whatever a unit still holds (its worker died mid-call); how many reservations that was."""
        with self._lock:
            tokens = [t for t, h in self._held.items() if h.unit == unit]
        for token in tokens:
            self.release(token)
        return len(tokens)

    def spent_usd(self) -> float:
        return self._budget.spent_usd

    def held_usd(self) -> float:
        with self._lock:
            return math.fsum(h.reservation.usd for h in self._held.values())

    def _drop_dead(self) -> None:
        here = socket.gethostname()
        with self._lock:
            dead = [t for t, h in self._held.items() if h.host == here and not _alive(h.pid)]
        for token in dead:
            self.release(token)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class BudgetLink:
    """How a worker reaches the service: a Ray actor handle or a multiprocessing manager proxy (both picklable)."""

    kind: str  # "ray" | "manager"
    handle: Any

    def call(self, method: str, *args: Any) -> Any:
        if self.kind == "ray":
            # local import: ray is the optional ray extra, which the base install lacks
            import ray

            return ray.get(getattr(self.handle, method).remote(*args))
        return getattr(self.handle, method)(*args)


class RemoteBudget:
    """What a worker's gateway holds as its budget: every reservation and settlement goes to the service."""

    def __init__(self, link: BudgetLink | Callable[..., Any], labels: RunLabels, unit: str) -> None:
        self._call = link.call if isinstance(link, BudgetLink) else link
        self.labels = labels
        self.unit = unit
        self._spent = 0.0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        """What this worker's calls cost (the grid's total is the service's)."""
        return self._spent

    def reserve(self, request: CallRequest, estimate_usd: float) -> Reservation:
        ok, value = self._call("reserve", request, estimate_usd, os.getpid(), socket.gethostname(), self.unit)
        if not ok:
            raise BudgetExceeded(value)
        return Reservation(estimate_usd, value)

    def release(self, reservation: Reservation | None) -> None:
        if reservation is not None and reservation.ledger_id is not None:
            self._call("release", reservation.ledger_id)

    def settle(self, reservation: Reservation | None, request: CallRequest, actual_usd: float, key: str) -> None:
        self._call("settle", request, actual_usd, key, self.labels)
        with self._lock:
            self._spent += actual_usd
        self.release(reservation)
