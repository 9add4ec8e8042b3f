"""The one door for every model call: cache lookup, replay/live/record modes, spend guard, ledger, virtual clock.

A caller builds a `CallRequest` and passes a `live` function that performs the call (an HTTP request, or a local
stand-in computation). The gateway answers from a shipped subset or the local cache when it can; otherwise it
decides whether the call may be made (mode, strictness, budget), makes it, records it, and reports the latency the
call was recorded with. `call_batch` serves requests that travel together (Jev asks of one state): only the missing
ones reach `live`, in one round trip.

Modes, per paid provider: `live` (read-through), `replay` (a miss raises `CacheMiss`, no network), `record` (live,
and the keys read are written out so the run's subset can be exported). Default: `live` when the provider's API key
is in the environment, else `replay`. The `offline` provider (local stand-ins, $0) computes on a miss in every mode
unless the gateway is `strict`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from bench import settings
from bench.disk.atomic import write_json
from bench.errors import CacheMiss, ConfigError, CorruptEntry, ProviderError, ReplyTooLarge
from bench.models.budget import (
    Budget,
    Ledger,
    Reservation,
    RunLabels,
    SpendGuard,
    estimate_cost_usd,
    limits_from_env,
    price_for,
)
from bench.models.cache import (
    CacheEntry,
    CallRequest,
    LiveResponse,
    LocalStore,
    ShippedSubset,
    discover_subsets,
    find_entry,
    write_keys_file,
)
from bench.models.clock import ReplayLatency, areplay_sleep, elapsed_ms, replay_sleep, round_ms
from bench.models.provider import api_key_envs, is_standin, reply_limit, standin_providers

__all__ = ["CallRequest", "CallResult", "Gateway", "LiveResponse", "Mode", "api_key_env", "default_cache_dir"]

Mode = Literal["live", "replay", "record"]
MODES: tuple[str, ...] = get_args(Mode)
LAST_RUN_FILE = "last_run.json"
LEDGER_FILE = settings.LEDGER_FILE
RUN_KEYS_DIR = "runs"


@dataclass(frozen=True)
class CallResult:
    key: str
    body: Any
    input_tokens: int
    output_tokens: int
    cost_usd: float  # nominal: what the call cost when it was recorded (deterministic on replay)
    latency_ms: float  # recorded latency (virtual clock)
    recorded_at: str
    provider: str
    model: str
    cached: bool

    @property
    def spent_usd(self) -> float:
        """Real spend of this call in this run: only a miss spends."""
        return 0.0 if self.cached else self.cost_usd

    @classmethod
    def from_entry(cls, entry: CacheEntry, *, cached: bool) -> CallResult:
        return cls(
            key=entry.key,
            body=entry.body,
            input_tokens=entry.input_tokens,
            output_tokens=entry.output_tokens,
            cost_usd=entry.cost_usd,
            latency_ms=entry.latency_ms,
            recorded_at=entry.recorded_at,
            provider=entry.provider,
            model=entry.model,
            cached=cached,
        )


@dataclass
class ProviderCounts:
    hits: int = 0
    misses: int = 0


@dataclass
class _Pending:
    """The state of one batch between lookup and live call."""

    keys: list[str]
    results: list[CallResult | None]
    missing: dict[str, list[int]] = field(default_factory=dict)  # key -> positions in the batch


def api_key_env() -> dict[str, str]:
    """provider -> the environment variable holding its key, from the provider registry."""
    return api_key_envs()


CACHE_DIR_ENV = "ENGRAM_CACHE_DIR"


def default_cache_dir() -> Path:
    """$ENGRAM_CACHE_DIR, else `cache/local/` (bench.settings)."""
    return settings.current().cache_dir


def ledger_path(cache_dir: Path | None = None) -> Path:
    """$ENGRAM_LEDGER, else the ledger next to the local cache."""
    return settings.current().ledger_for(cache_dir)


def oversized_reply(request: CallRequest, response: LiveResponse) -> ReplyTooLarge | None:
    """The refusal of a reply larger than its provider's limit (`Provider.max_reply_bytes`), or None."""
    limit = reply_limit(request.provider)
    if limit is None:
        return None
    size = len(json.dumps(response.body, ensure_ascii=False).encode("utf-8"))
    if size <= limit:
        return None
    return ReplyTooLarge(
        f"{request.provider}/{response.model or request.model} {request.purpose} reply: expected at most "
        f"{limit:,} bytes (the {request.provider} provider's max_reply_bytes), found {size:,}; refused and not cached"
    )


def check_mode(mode: str | None) -> Mode | None:
    """`mode` itself when it is a gateway mode (or None); ConfigError otherwise."""
    if mode is not None and mode not in MODES:
        raise ConfigError(f"--mode: expected one of {', '.join(MODES)}, found {mode!r}")
    return mode  # type: ignore[return-value]


def provider_mode(provider: str, mode: Mode | None, environ: Mapping[str, str] | None = None) -> Mode:
    """The mode a provider runs in: `mode` when given; else a paid provider is live when its key is set and replays
    otherwise, and the stand-ins compute on a miss ("live", $0)."""
    if mode is not None:
        return mode
    if is_standin(provider):
        return "live"
    env = os.environ if environ is None else environ
    var = api_key_env().get(provider)
    return "live" if var and env.get(var) else "replay"


class Gateway:
    def __init__(
        self,
        *,
        local: Path | None,
        subsets: Sequence[Path] | None = None,
        mode: Mode | None = None,
        strict: bool = False,
        labels: RunLabels = RunLabels("adhoc"),
        budget: SpendGuard | None = None,
        replay_latency: ReplayLatency = "recorded",
        environ: Mapping[str, str] | None = None,
        read_through: Sequence[Path] = (),
        replicate: int = 0,
    ) -> None:
        """`subsets=None` reads every shipped subset under the repo's `cache/`; pass a list to read only those
        (e.g. `[Path("cache/dev")]` with `local=None` for a strict replay of the dev slice).

        `read_through`: local caches read after the subsets and before `local`, never written (a grid worker reads
        the driver's cache there and records into its own shard, `local`); a folder that does not exist is skipped.
        `replicate`: stamped on every request whose own replicate index is 0, so replicate i of a run keys (and
        samples) every call afresh; 0 leaves every key as it was."""
        check_mode(mode)
        if replay_latency not in ("recorded", "sleep"):
            raise ConfigError(f"--replay-latency: expected recorded or sleep, found {replay_latency!r}")
        env = os.environ if environ is None else environ
        self.labels = labels
        self.strict = strict
        self.replay_latency: ReplayLatency = replay_latency
        self.local = LocalStore(local) if local is not None else None
        self.read_through = [LocalStore(Path(path)) for path in read_through if Path(path).is_dir()]
        if isinstance(replicate, bool) or not isinstance(replicate, int) or replicate < 0:
            raise ConfigError(f"replicate: expected a non-negative integer, found {replicate!r}")
        self.replicate = replicate
        subset_dirs = discover_subsets(exclude=[local] if local else []) if subsets is None else list(subsets)
        self.subsets = [ShippedSubset.open(path) for path in subset_dirs]
        self.modes: dict[str, Mode] = {provider: provider_mode(provider, mode, env) for provider in api_key_env()}
        self._explicit_mode = mode
        self.budget = budget
        self._counts: dict[str, ProviderCounts] = {}
        self._keys_read: set[str] = set()
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_env(
        cls,
        mode: Mode | None = None,
        strict: bool = False,
        run_id: str = "adhoc",
        arm: str | None = None,
        slice_name: str | None = None,
        replay_latency: ReplayLatency = "recorded",
        subsets: Sequence[Path] | None = None,
        cache_dir: Path | None = None,
        replicate: int = 0,
    ) -> Gateway:
        """The local cache at $ENGRAM_CACHE_DIR (else `cache/local/`); the ledger next to it unless
        $ENGRAM_LEDGER names a file; limits from $ENGRAM_RUN_BUDGET_USD / $ENGRAM_TOTAL_BUDGET_USD."""
        local = cache_dir or default_cache_dir()
        labels = RunLabels(run_id=run_id, arm=arm, slice_name=slice_name)
        ledger = Ledger(ledger_path(local))
        run_limit, total_limit = limits_from_env()
        budget = Budget(ledger, labels, run_limit_usd=run_limit, total_limit_usd=total_limit)
        return cls(
            local=local,
            subsets=subsets,
            mode=mode,
            strict=strict,
            labels=labels,
            budget=budget,
            replay_latency=replay_latency,
            replicate=replicate,
        )

    # -- modes -------------------------------------------------------------------------------------------------

    def mode_for(self, provider: str) -> Mode:
        if is_standin(provider):
            return self._explicit_mode or "live"
        return self.modes.get(provider, self._explicit_mode or "replay")

    @property
    def recording(self) -> bool:
        return self._explicit_mode == "record"

    # -- the door ----------------------------------------------------------------------------------------------

    def call(self, request: CallRequest, live: Callable[[CallRequest], LiveResponse]) -> CallResult:
        return self.call_batch([request], lambda missing: [live(missing[0])])[0]

    async def acall(self, request: CallRequest, live: Callable[[CallRequest], Awaitable[LiveResponse]]) -> CallResult:
        async def one(missing: list[CallRequest]) -> list[LiveResponse]:
            return [await live(missing[0])]

        return (await self.acall_batch([request], one))[0]

    def call_batch(
        self,
        requests: Sequence[CallRequest],
        live: Callable[[list[CallRequest]], Sequence[LiveResponse]],
    ) -> list[CallResult]:
        """Serve what the caches hold; send only the missing requests, together, in one `live` call."""
        requests = self.stamped(requests)
        pending = self._lookup(requests)
        replay_sleep(self._hit_latency(pending), self.replay_latency)
        if pending.missing:
            to_send = [requests[positions[0]] for positions in pending.missing.values()]
            reserved = self._reserve(to_send)
            start = time.perf_counter()
            try:
                responses = list(live(to_send))
            except BaseException:
                self._release(reserved)
                raise
            self._record(pending, to_send, responses, elapsed_ms(start, time.perf_counter()), reserved)
        return [result for result in pending.results if result is not None]

    async def acall_batch(
        self,
        requests: Sequence[CallRequest],
        live: Callable[[list[CallRequest]], Awaitable[Sequence[LiveResponse]]],
    ) -> list[CallResult]:
        requests = self.stamped(requests)
        pending = self._lookup(requests)
        await areplay_sleep(self._hit_latency(pending), self.replay_latency)
        if pending.missing:
            to_send = [requests[positions[0]] for positions in pending.missing.values()]
            reserved = self._reserve(to_send)
            start = time.perf_counter()
            try:
                responses = list(await live(to_send))
            except BaseException:
                self._release(reserved)
                raise
            self._record(pending, to_send, responses, elapsed_ms(start, time.perf_counter()), reserved)
        return [result for result in pending.results if result is not None]

    # -- steps -------------------------------------------------------------------------------------------------

    def stamped(self, requests: Sequence[CallRequest]) -> Sequence[CallRequest]:
        """The requests as this gateway sends them: with its replicate index unless a request names its own."""
        if not self.replicate:
            return requests
        return [r if r.replicate else replace(r, replicate=self.replicate) for r in requests]

    def _find(self, key: str) -> CacheEntry | None:
        # The subsets, then each read-through cache, then the local one (find_entry's order, one store at a time).
        entry = find_entry(key, self.subsets, None)
        for store in (*self.read_through, self.local):
            if entry is None and store is not None:
                entry = self._local_get(store, key)
        return entry

    def _local_get(self, store: LocalStore, key: str) -> CacheEntry | None:
        """A local entry; a damaged one is a miss when recording (the new reply replaces it), else it stops the run."""
        try:
            return store.get(key)
        except CorruptEntry:
            if self.recording and store is self.local:
                return None
            raise

    def _lookup(self, requests: Sequence[CallRequest]) -> _Pending:
        keys = [request.key() for request in requests]
        pending = _Pending(keys=keys, results=[None] * len(requests))
        for position, (request, key) in enumerate(zip(requests, keys)):
            with self._lock:
                self._keys_read.add(key)
            entry = self._find(key)
            if entry is not None:
                pending.results[position] = CallResult.from_entry(entry, cached=True)
                self._count(request.provider, hit=True)
            else:
                pending.missing.setdefault(key, []).append(position)
        for positions in pending.missing.values():
            self._refuse_if_not_allowed(requests[positions[0]], keys[positions[0]])
        return pending

    def _refuse_if_not_allowed(self, request: CallRequest, key: str) -> None:
        stores = [*self.read_through, *([self.local] if self.local else [])]
        places = [str(s.directory) for s in self.subsets] + [str(store.directory) for store in stores]
        where = ", ".join(places) or "no cache"
        if self.strict:
            raise CacheMiss(
                f"strict replay: no cached response for {request.provider}/{request.model} "
                f"(purpose {request.purpose}, key {key}) in {where}; nothing was computed or sent. "
                f"Re-record the subset, or run without strict replay"
            )
        if not is_standin(request.provider) and self.mode_for(request.provider) == "replay":
            var = api_key_env().get(request.provider, "the provider's API key")
            raise CacheMiss(
                f"replay: no cached response for {request.provider}/{request.model} (purpose {request.purpose}, "
                f"key {key}) in {where}; no network was touched. Set {var} (or pass --mode live) to call live, "
                f"or use a cache subset that holds this call"
            )

    def _hit_latency(self, pending: _Pending) -> float:
        # Hits of one batch are concurrent answers: the batch waits for the slowest.
        return max((r.latency_ms for r in pending.results if r is not None), default=0.0)

    def _reserve(self, to_send: list[CallRequest]) -> Reservation | None:
        paid = [r for r in to_send if not is_standin(r.provider)]
        if not paid or self.budget is None:
            for request in paid:  # no budget object still requires a known price: never spend blind
                price_for(request.provider, request.model, request.endpoint)
            return None
        estimate = sum(estimate_cost_usd(request) for request in paid)
        if estimate == 0.0:
            return None  # free endpoints (token counting) hold nothing
        return self.budget.reserve(paid[0], estimate)

    def _release(self, reserved: Reservation | None) -> None:
        if self.budget is not None:
            self.budget.release(reserved)

    def _record(
        self,
        pending: _Pending,
        to_send: list[CallRequest],
        responses: list[LiveResponse],
        measured_ms: float,
        reserved: Reservation | None,
    ) -> None:
        if len(responses) != len(to_send):
            self._release(reserved)
            raise ProviderError(
                f"{to_send[0].provider}/{to_send[0].endpoint}: expected {len(to_send)} responses from the live "
                f"call, found {len(responses)}"
            )
        recorded_at = datetime.now(UTC).isoformat(timespec="seconds")
        for request, response in zip(to_send, responses):
            key = request.key()
            cost = response.cost_usd
            if cost is None:
                cost = price_for(request.provider, request.model, request.endpoint).cost_usd(
                    response.input_tokens, response.output_tokens
                )
            too_large = oversized_reply(request, response)
            if too_large is not None:  # what it cost is still spent; the reply itself is never cached
                if not is_standin(request.provider) and self.budget is not None:
                    self.budget.settle(None, request, float(cost), key)
                self._release(reserved)
                raise too_large
            latency = round_ms(response.latency_ms if response.latency_ms is not None else measured_ms)
            entry = CacheEntry(
                key=key,
                provider=request.provider,
                endpoint=request.endpoint,
                model=response.model or request.model,
                purpose=request.purpose,
                replicate=request.replicate,
                body=response.body,
                input_tokens=int(response.input_tokens),
                output_tokens=int(response.output_tokens),
                cost_usd=float(cost),
                latency_ms=latency,
                recorded_at=recorded_at,
            )
            stored = self.local.add(entry) if self.local is not None else entry.sealed()
            if not is_standin(request.provider) and self.budget is not None:
                self.budget.settle(None, request, float(cost), key)
            result = CallResult.from_entry(stored, cached=False)
            for position in pending.missing[key]:
                pending.results[position] = result
                self._count(request.provider, hit=False)
        self._release(reserved)

    def _count(self, provider: str, *, hit: bool) -> None:
        with self._lock:
            counts = self._counts.setdefault(provider, ProviderCounts())
            if hit:
                counts.hits += 1
            else:
                counts.misses += 1

    # -- reporting ---------------------------------------------------------------------------------------------

    def counts(self) -> dict[str, ProviderCounts]:
        with self._lock:
            return {p: ProviderCounts(c.hits, c.misses) for p, c in sorted(self._counts.items())}

    @property
    def spent_usd(self) -> float:
        return self.budget.spent_usd if self.budget is not None else 0.0

    def keys_read(self) -> list[str]:
        with self._lock:
            return sorted(self._keys_read)

    def write_keys(self, path: Path) -> Path:
        """The run's key list (sorted, unique): what `engram-bench cache export --run` reads."""
        return write_keys_file(path, self.keys_read())

    def spend_summary(self) -> str:
        counts = self.counts()
        hits = sum(c.hits for c in counts.values())
        misses = sum(c.misses for c in counts.values())
        paid_misses = sum(c.misses for p, c in counts.items() if not is_standin(p))
        if paid_misses == 0:
            return f"${0:.2f} spent: {hits} calls served from cache, {misses} local stand-in calls computed, none sent"
        # "sent", not "paid": a server declared free in its stack (a local one) is sent calls at $0
        sent_to = ", ".join(p for p, c in counts.items() if not is_standin(p) and c.misses)
        return f"${self.spent_usd:.4f} spent on {paid_misses} calls sent to {sent_to}; {hits} calls served from cache"

    def close(self) -> None:
        """Persist the run's counters (for `engram-bench cache stats`) and, when recording, its key list."""
        if self._closed:
            return
        self._closed = True
        if self.local is not None:
            directory = self.local.directory
            write_json(directory / LAST_RUN_FILE, self.last_run_record())
            if self.recording:
                self.write_keys(directory / RUN_KEYS_DIR / f"{_safe_name(self.labels.run_id)}.calls.txt")
            self.local.close()
        for store in self.read_through:
            store.close()

    def last_run_record(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "run_id": self.labels.run_id,
            "arm": self.labels.arm,
            "slice": self.labels.slice_name,
            "modes": {p: self.mode_for(p) for p in [*api_key_env(), *standin_providers()]},
            "strict": self.strict,
            "hits": sum(c.hits for c in counts.values()),
            "misses": sum(c.misses for c in counts.values()),
            "by_provider": {p: {"hits": c.hits, "misses": c.misses} for p, c in counts.items()},
            "keys_read": len(self.keys_read()),
            "spent_usd": self.spent_usd,
            "subsets": [s.name for s in self.subsets],
            "closed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _safe_name(run_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id) or "run"


def keys_file_for(run: str | Path, cache_dir: Path | None = None) -> Path:
    """Where a run's key list lives: `<result>.calls.txt` next to a result file, the file itself if it is a key
    list, else `<cache dir>/runs/<run id>.calls.txt` (written by a recording gateway)."""
    path = Path(run)
    if path.name.endswith(".calls.txt"):
        return path
    if path.suffix == ".json" or path.exists():
        return path.with_suffix(".calls.txt")
    return (cache_dir or default_cache_dir()) / RUN_KEYS_DIR / f"{_safe_name(str(run))}.calls.txt"
