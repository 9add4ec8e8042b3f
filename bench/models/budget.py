"""Prices, the spend guard and the spend ledger.

The original harness added spend after a call returned and raised only once the budget was already exceeded, and
wrote its ledger once per run (lost on a crash). Here a paid call is priced *before* it is sent from its input size
and its `max_tokens`, refused if it could push the run or the cumulative spend over the limit, and its real cost is
appended to the ledger as soon as it returns. Only cache misses spend; a replay spends $0.

The cumulative limit holds across processes: reserving reads the ledger and every other process's open
reservations (`<ledger>.inflight.json`) and records its own, all under one OS file lock (`filelock`) beside the
ledger, so N runs sharing a ledger never pass `ENGRAM_TOTAL_BUDGET_USD` together. A reservation of a process that
died (same host, pid gone) no longer counts.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock

from bench import settings
from bench.disk.atomic import fsync_directory, write_json
from bench.errors import BudgetExceeded, DataError
from bench.models.cache import CallRequest, canonical_json
from bench.models.provider import is_unbilled
from bench.models.stacks import FREE, Price
from bench.models.stacks import price_for as model_price

# Pessimistic bytes-per-token for the pre-send estimate: English runs ~4 characters per token, JSON markup less;
# 3 errs on the side of refusing a call rather than overspending.
ESTIMATE_BYTES_PER_TOKEN = 3
DEFAULT_RUN_LIMIT_USD = settings.DEFAULT_RUN_LIMIT_USD
DEFAULT_TOTAL_LIMIT_USD = settings.DEFAULT_TOTAL_LIMIT_USD


def usd(value: float) -> str:
    """Dollars as a person reads them: cents ($20.00, $0.00), but an amount under a cent keeps two significant
    digits ($0.00001, $0.0042), so a tiny limit or price is never shown as $0.00."""
    if value == 0 or abs(value) >= 0.01 or not math.isfinite(value):
        return f"${value:.2f}"
    digits = 1 - math.floor(math.log10(abs(value)))
    return "$" + f"{value:.{digits}f}".rstrip("0")


def price_for(provider: str, model: str, endpoint: str = "") -> Price:
    """The price of one call: $0 for an endpoint its provider does not bill, else the model's price from the stack
    files (`bench.models.stacks.price_for`, the one price table, where a provider that is not paid costs $0)."""
    if is_unbilled(provider, endpoint):
        return FREE
    return model_price(provider, model)


def call_cost_usd(provider: str, model: str, input_tokens: float, output_tokens: float, endpoint: str = "") -> float:
    return price_for(provider, model, endpoint).cost_usd(input_tokens, output_tokens)


def estimate_input_tokens(body: Any) -> int:
    return math.ceil(len(canonical_json(body).encode("utf-8")) / ESTIMATE_BYTES_PER_TOKEN)


def estimate_cost_usd(request: CallRequest) -> float:
    """The most this call could cost: its estimated input plus its full `max_tokens` of output."""
    price = price_for(request.provider, request.model, request.endpoint)
    if price.input_per_mtok == 0 and price.output_per_mtok == 0:
        return 0.0
    max_output = int(request.body.get("max_tokens", 0) or 0)
    return price.cost_usd(estimate_input_tokens(request.body), max_output)


class Ledger:
    """Append-only JSON lines of real spend, plus the open reservations of calls in flight in any process.

    Spend lines are appended with one `write()` under O_APPEND (they never interleave); reservations live in
    `<ledger>.inflight.json`, rewritten atomically. Anything that reads a total to decide on spending holds `locked()`.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.inflight_path = self.path.with_name(self.path.name + ".inflight.json")
        self._lock_path = self.path.with_name(self.path.name + ".lock")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time reads totals and reserves or settles (an OS lock: a dead holder frees it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(self._lock_path):
            yield

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        flags = os.O_WRONLY | os.O_APPEND
        try:
            fd, created = os.open(self.path, flags), False
        except FileNotFoundError:  # the first line: the folder may be missing too
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, created = os.open(self.path, flags | os.O_CREAT, 0o666), True  # the umask decides, as for any file
        try:
            os.write(fd, line)
            # Spend must survive a crash, so a line that carries some is on disk before the call counts as settled.
            # A $0 line (a server declared free in its stack) changes no total: it is written but not flushed, so a
            # run against a local server does not wait for the disk once per call.
            if float(record.get("usd", 0.0)) != 0.0:
                os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_directory(self.path.parent)

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise DataError(f"{self.path}:{number}: expected one JSON spend record, found {line[:60]!r}") from exc
        return out

    def total_usd(self) -> float:
        """Real spend recorded so far (reservations not included)."""
        return math.fsum(float(r.get("usd", 0.0)) for r in self.records())

    # -- reservations (call under `locked()`) --------------------------------------------------------------------

    def open_reservations(self) -> dict[str, dict[str, Any]]:
        """Reservations of calls still in flight, those of dead processes on this host dropped."""
        if not self.inflight_path.exists():
            return {}
        try:
            held = json.loads(self.inflight_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DataError(
                f"{self.inflight_path}: expected the JSON object of open reservations, found unreadable JSON "
                f"({exc}); delete it when no run is in progress"
            ) from None
        if not isinstance(held, dict):
            raise DataError(f"{self.inflight_path}: expected a JSON object of open reservations, found {held!r}")
        return {key: value for key, value in held.items() if _holder_alive(value)}

    def committed_usd(self) -> float:
        """What counts against the cumulative limit: real spend plus every open reservation."""
        return self.total_usd() + math.fsum(float(r.get("usd", 0.0)) for r in self.open_reservations().values())

    def add_reservation(self, usd: float, run_id: str) -> str:
        held = self.open_reservations()
        reservation = uuid.uuid4().hex
        held[reservation] = {"usd": usd, "pid": os.getpid(), "host": socket.gethostname(), "run_id": run_id}
        write_json(self.inflight_path, held)
        return reservation

    def drop_reservation(self, reservation: str) -> None:
        held = self.open_reservations()
        held.pop(reservation, None)
        write_json(self.inflight_path, held)


def _holder_alive(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("host") != socket.gethostname():
        return True  # another machine's process: it cannot be checked from here, so it still counts
    try:
        os.kill(int(record.get("pid", -1)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return True


@dataclass(frozen=True)
class Reservation:
    """Money held for a call about to be sent, in this process and in the shared ledger."""

    usd: float
    ledger_id: str | None = None


@dataclass(frozen=True)
class RunLabels:
    run_id: str
    arm: str | None = None
    slice_name: str | None = None


class SpendGuard(Protocol):
    """What the gateway asks of a budget before and after a paid call: `Budget` here, or a grid worker's link to
    the grid's one budget (`bench.run.grid.budget.RemoteBudget`)."""

    @property
    def spent_usd(self) -> float: ...

    def reserve(self, request: CallRequest, estimate_usd: float) -> Reservation: ...

    def release(self, reservation: Reservation | None) -> None: ...

    def settle(self, reservation: Reservation | None, request: CallRequest, actual_usd: float, key: str) -> None: ...


class Budget:
    """A per-run and a cumulative limit in USD. Thread-safe and process-safe; in-flight calls count at their
    estimate, those of other processes sharing the ledger included."""

    def __init__(
        self,
        ledger: Ledger,
        labels: RunLabels,
        run_limit_usd: float = DEFAULT_RUN_LIMIT_USD,
        total_limit_usd: float = DEFAULT_TOTAL_LIMIT_USD,
    ) -> None:
        self.ledger = ledger
        self.labels = labels
        self.run_limit_usd = run_limit_usd
        self.total_limit_usd = total_limit_usd
        self._spent = 0.0
        self._in_flight = 0.0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        return self._spent

    def reserve(self, request: CallRequest, estimate_usd: float) -> Reservation:
        """Hold `estimate_usd` for a call about to be sent, or refuse it (nothing is sent)."""
        with self._lock:
            run_after = self._spent + self._in_flight + estimate_usd
            if run_after > self.run_limit_usd:
                raise BudgetExceeded(
                    f"run budget: a {request.provider}/{request.model} {request.purpose} call (up to "
                    f"${estimate_usd:.4f}) would bring run {self.labels.run_id} to ${run_after:.4f}, over the "
                    f"{usd(self.run_limit_usd)} limit; not sent (raise ENGRAM_RUN_BUDGET_USD to allow it)"
                )
            with self.ledger.locked():
                total_after = self.ledger.committed_usd() + estimate_usd
                if total_after > self.total_limit_usd:
                    raise BudgetExceeded(
                        f"cumulative budget ({self.ledger.path}): a {request.provider}/{request.model} "
                        f"{request.purpose} call (up to ${estimate_usd:.4f}) would bring total spend, calls in "
                        f"flight included, to ${total_after:.4f}, over the {usd(self.total_limit_usd)} limit; not "
                        f"sent (raise ENGRAM_TOTAL_BUDGET_USD to allow it)"
                    )
                ledger_id = self.ledger.add_reservation(estimate_usd, self.labels.run_id)
            self._in_flight += estimate_usd
            return Reservation(estimate_usd, ledger_id)

    def release(self, reservation: Reservation | None) -> None:
        """A reserved call ended (failed, or settled call by call): its hold is given back."""
        if reservation is None:
            return
        with self._lock:
            self._in_flight -= reservation.usd
            if reservation.ledger_id is not None:
                with self.ledger.locked():
                    self.ledger.drop_reservation(reservation.ledger_id)

    def settle(
        self,
        reservation: Reservation | None,
        request: CallRequest,
        actual_usd: float,
        key: str,
        labels: RunLabels | None = None,
    ) -> None:
        """A call returned: its real cost goes to the ledger at once (and its reservation, if given, is released).
        `labels` name the run that made the call when one budget serves several (a grid's)."""
        labels = labels or self.labels
        record = {
            "run_id": labels.run_id,
            "arm": labels.arm,
            "slice": labels.slice_name,
            "provider": request.provider,
            "model": request.model,
            "purpose": request.purpose,
            "usd": actual_usd,
            "key": key,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        with self._lock:
            self._spent += actual_usd
            if actual_usd == 0.0:
                # A $0 line changes no total that anyone decides on, and one O_APPEND write never interleaves with
                # another: it needs no lock across processes (a run against a local server settles every call so).
                self.ledger.append(record)
            else:
                with self.ledger.locked():
                    self.ledger.append(record)
        self.release(reservation)


def limits_from_env() -> tuple[float, float]:
    """The per-run and total limits: $ENGRAM_RUN_BUDGET_USD / $ENGRAM_TOTAL_BUDGET_USD (bench.settings)."""
    current = settings.current()
    return current.run_budget_usd, current.total_budget_usd
