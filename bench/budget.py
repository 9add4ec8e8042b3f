"""Prices, the spend guard and the spend ledger.

The original harness added spend after a call returned and raised only once the budget was already exceeded, and
wrote its ledger once per run (lost on a crash). Here a paid call is priced *before* it is sent from its input size
and its `max_tokens`, refused if it could push the run or the cumulative spend over the limit, and its real cost is
appended to the ledger as soon as it returns. Only cache misses spend; a replay spends $0.
"""

from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.cache import CallRequest, canonical_json
from bench.errors import BudgetExceeded, ConfigError, DataError
from bench.stacks import FREE, Price
from bench.stacks import price_for as model_price

FREE_PROVIDERS = frozenset({"offline"})
FREE_ENDPOINTS = frozenset({"count_tokens"})  # Anthropic's token counting is not billed
# Pessimistic bytes-per-token for the pre-send estimate: English runs ~4 characters per token, JSON markup less;
# 3 errs on the side of refusing a call rather than overspending.
ESTIMATE_BYTES_PER_TOKEN = 3
DEFAULT_RUN_LIMIT_USD = 20.0
DEFAULT_TOTAL_LIMIT_USD = 100.0


def price_for(provider: str, model: str, endpoint: str = "") -> Price:
    """The price of one call: $0 for the offline stand-ins and unbilled endpoints, else the model's price from the
    stack files (`bench.stacks.price_for`, the one price table)."""
    if provider in FREE_PROVIDERS or endpoint in FREE_ENDPOINTS:
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
    """Append-only JSON lines of real spend. One `write()` per line with O_APPEND, so processes never interleave."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

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
        return math.fsum(float(r.get("usd", 0.0)) for r in self.records())


@dataclass(frozen=True)
class RunLabels:
    run_id: str
    arm: str | None = None
    slice_name: str | None = None


class Budget:
    """A per-run and a cumulative limit in USD. Thread-safe; in-flight calls count at their estimate."""

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
        self.prior_usd = ledger.total_usd()
        self._spent = 0.0
        self._in_flight = 0.0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        return self._spent

    def reserve(self, request: CallRequest, estimate_usd: float) -> float:
        """Hold `estimate_usd` for a call about to be sent, or refuse it (nothing is sent)."""
        with self._lock:
            run_after = self._spent + self._in_flight + estimate_usd
            if run_after > self.run_limit_usd:
                raise BudgetExceeded(
                    f"run budget: a {request.provider}/{request.model} {request.purpose} call (up to "
                    f"${estimate_usd:.4f}) would bring run {self.labels.run_id} to ${run_after:.4f}, over the "
                    f"${self.run_limit_usd:.2f} limit; not sent (raise ENGRAM_RUN_BUDGET_USD to allow it)"
                )
            total_after = self.prior_usd + run_after
            if total_after > self.total_limit_usd:
                raise BudgetExceeded(
                    f"cumulative budget ({self.ledger.path}): a {request.provider}/{request.model} "
                    f"{request.purpose} call (up to ${estimate_usd:.4f}) would bring total spend to "
                    f"${total_after:.4f}, over the ${self.total_limit_usd:.2f} limit; not sent "
                    f"(raise ENGRAM_TOTAL_BUDGET_USD to allow it)"
                )
            self._in_flight += estimate_usd
            return estimate_usd

    def release(self, reserved_usd: float) -> None:
        """A reserved call was not completed (it failed): nothing recorded as spent."""
        with self._lock:
            self._in_flight -= reserved_usd

    def settle(self, reserved_usd: float, request: CallRequest, actual_usd: float, key: str) -> None:
        """A call returned: swap its reservation for its real cost and append it to the ledger at once."""
        with self._lock:
            self._in_flight -= reserved_usd
            self._spent += actual_usd
        self.ledger.append(
            {
                "run_id": self.labels.run_id,
                "arm": self.labels.arm,
                "slice": self.labels.slice_name,
                "provider": request.provider,
                "model": request.model,
                "purpose": request.purpose,
                "usd": actual_usd,
                "key": key,
                "time": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )


def limits_from_env() -> tuple[float, float]:
    return (
        _float_env("ENGRAM_RUN_BUDGET_USD", DEFAULT_RUN_LIMIT_USD),
        _float_env("ENGRAM_TOTAL_BUDGET_USD", DEFAULT_TOTAL_LIMIT_USD),
    )


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"environment {name}: expected a number of USD, found {raw!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"environment {name}: expected a finite, non-negative USD amount, found {raw!r}")
    return value
