"""The runner: one arm on one slice on one stack -> one result file per k. This module is the loop; each stage is
its own module: where a run writes and its lock (bench.run.output), ingesting and retrieving at checkpoints
(bench.run.ingest), answering and judging at each k (bench.run.answer), what a result records and writing it
(bench.run.provenance), and a token-matched unit (bench.run.tokenmatch). What runs is planned once, by
bench.run.planner.

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

import re
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import settings
from bench.analysis import metrics, scoring
from bench.data.slices import Slice, first_messages_of
from bench.disk.writable import store_write_refused
from bench.errors import ConfigError
from bench.models import judge, longmemeval_answer, longmemeval_judge
from bench.models.budget import Ledger, limits_from_env
from bench.models.gateway import check_mode, ledger_path, provider_mode
from bench.models.stacks import check_stack_name
from bench.results.schema import Costs, Latency, Result, Timing, slice_dir
from bench.results.trace import Trace, trace_name
from bench.run import health
from bench.run.answer import KeyTap, answer_all, embedder_of, open_gateway, result_metrics
from bench.run.arms import load_arm
from bench.run.inflight import InFlight
from bench.run.ingest import PartRun, has_decision_layer, ingest_and_ask, retrieved_lines, traced_ids
from bench.run.output import STORE_DIR, new_run_id, refuse_clobbering, run_folder, run_lock, target_path
from bench.run.plan import estimate_for  # noqa: F401 (registers the banner's spend estimate)
from bench.run.planner import Planner, PlanUnit, RunPlan, calls_in_flight, is_asked
from bench.run.preflight import Preflight, announce_and_confirm, modes_for
from bench.run.provenance import calls_of, identity, now, run_notes, trace_of_run, write_all
from bench.run.request import RunRequest, RunServices
from bench.run.resume import FinishedPart, PartProgress, TapCounts
from bench.run.retrievals import RETRIEVALS_DIR, Comparison, compare_and_keep, record_path
from bench.run.terminal import progress_bars, step
from bench.run.tokenmatch import check_token_matchable, run_token_matched
from bench.systems import SystemContext, build_system

RUNS_DIR_ENV = settings.RUNS
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


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
    targets = tuple(
        target_path(request, services, unit.stack.name, unit.the_slice.name, unit.arm.name, k) for k in unit.ks
    )
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
        return target_path(request, services, stack, slice_name, arm, k)

    def present(stack: str, slice_name: str, arm: str, k: int, replicate: int) -> bool:
        return target_path(request, services, stack, slice_name, arm, k).is_file()

    arms_dir = request.arms_dir
    planner = Planner(
        request,
        load_arm=(lambda name: load_arm(name, arms_dir)) if arms_dir is not None else load_arm,
        load_slice=services.slice_loader,
        check_token_match=lambda arm, the_slice: check_token_matchable(arm, the_slice, request),
        target=target,
        present=present,
    )
    planner.add(arm_name, slice_name)
    return planner.plan()


def _run_unit(unit: PlanUnit, services: RunServices) -> list[Path]:
    if unit.matches_tokens:
        return [run_token_matched(unit, services)]
    with run_lock(services.runs_root, unit.stack.name, unit.the_slice.name, unit.arm.name):
        return _run(unit, services)


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


def store_folder(unit: PlanUnit, services: RunServices) -> Path:
    """Where the run builds its system's store: `<runs root>/<stack>/<slice>/<arm>/<run-id>/store/` (the runs root
    is DIR/runs/ with --out DIR, so everything a run writes stays in DIR)."""
    assert unit.request.run_id is not None
    folder = run_folder(services.runs_root, unit.stack.name, unit.the_slice.name, unit.arm.name, unit.request.run_id)
    return folder / STORE_DIR


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
        store=None if unit.matches_tokens else store_folder(unit, services),
        ks=unit.ks,
        cache_dir=services.cache_dir,
        arm_spec=unit.arm,
        the_slice=unit.the_slice,
    )
    announce_and_confirm(preflight, assume_yes=request.assume_yes, say=services.say)


# ------------------------------------------------------------------------------------------------------ the run


def _run_part(
    unit: PlanUnit,
    part: Slice,
    services: RunServices,
    run_dir: Path,
    system_tap: KeyTap,
    answer_taps: Mapping[int | None, KeyTap],
    pool: Executor,
) -> PartRun:
    arm, stack, ks = unit.arm, unit.stack, unit.ks
    embedder = embedder_of(services)
    run_dir.mkdir(parents=True, exist_ok=True)
    context = SystemContext(
        stack=stack.name,
        models=stack.models,
        gateway=system_tap.as_gateway(),
        run_dir=run_dir,
        conversation=part.conversation,
        speakers=part.speakers,
        embedder=embedder,
        ks=ks,
    )
    with step(f"{arm.name}: loading the {arm.system} system and its models", enabled=services.progress):
        system = build_system(arm.system, arm.settings, context, where=f"{arm.path}: settings")
    ran: dict[str, str] = {}
    concurrency = unit.request.concurrency
    try:
        usages, asked = ingest_and_ask(system, part, ks, services.progress, arm.scores_adversarial)
        replay = _compare_retrievals(unit, part, system_tap, retrieved_lines(asked)) if system.REPLAY_CHECKED else None
        answers = {
            k: answer_all(asked, k, part, stack, answer_taps[k], embedder, concurrency, services.progress, ran, pool)
            for k in ks
        }
        return PartRun(
            usages=usages,
            answers=answers,
            store=system.stats(),
            audit=list(system.facts_for_audit()),
            description=system.describe(),
            decision_layer=has_decision_layer(system, usages),
            part=part,
            asked=asked,
            explained={k: system.trace(traced_ids(asked, k)) for k in ks},
            models={**context.hub.ran, **ran},
            replay=replay,
        )
    finally:
        system.close()
        context.hub.close()


def _compare_retrievals(
    unit: PlanUnit, part: Slice, system_tap: KeyTap, lines: Mapping[str, Sequence[str]]
) -> Comparison | None:
    """This part's retrievals against the first run's (bench.run.retrievals): its record in the shipped subsets
    (`cache export` ships it beside the run's calls) and beside the run's local cache, where a new one is kept; None
    when there is neither a local cache nor a shipped record."""
    gateway = system_tap.as_gateway()
    local = getattr(gateway, "local", None)
    identity = {
        "arm": unit.arm.name,
        "system": unit.arm.system,
        "settings": unit.arm.settings,
        "stack": unit.stack.name,
        "slice": part.name,
        "conversation": part.conversation,
        "messages": len(part.messages),
        "last_message": part.messages[-1].id if part.messages else None,
        "replicate": unit.request.replicate,
    }
    name = record_path(Path(), identity).name
    shipped = [p for s in getattr(gateway, "subsets", ()) if (p := s.directory / RETRIEVALS_DIR / name).is_file()]
    if local is None and not shipped:
        return None
    return compare_and_keep(
        record_path(local.directory, identity) if local is not None else None, identity, lines, shipped
    )


def _run(unit: PlanUnit, services: RunServices) -> list[Path]:
    started, wall_start = now(), time.perf_counter()
    arm, the_slice, stack, ks, request = unit.arm, unit.the_slice, unit.stack, unit.ks, unit.request
    assert request.run_id is not None
    run_id = f"{stack.name}/{slice_dir(the_slice.name)}/{arm.name}"
    # The store is built from scratch in the run's own fresh folder (the cache makes that cheap on a re-run), so
    # no run ever deletes or shares another run's store.
    run_dir = store_folder(unit, services)
    run_dir.mkdir(parents=True, exist_ok=False)
    gateway = open_gateway(request, services, run_id, arm.name, the_slice.name)
    # what ingestion's calls were like, and each k's answers and verdicts: a result file reports its own calls
    system_health, answer_health = health.RunHealth(), {k: health.RunHealth() for k in ks}
    # one bound per provider on every live call of the run: ingestion and answers, of every conversation
    bound = InFlight(stack, request.concurrency)
    system_tap = KeyTap(gateway, system_health.watch, bound)
    answer_taps = {k: KeyTap(gateway, answer_health[k].watch, bound) for k in ks}
    embedder = embedder_of(services)
    parts = the_slice.runs()
    in_flight = calls_in_flight(stack, request.concurrency)
    part_seconds: dict[str, float] = {}  # each part's wall time (parts may run side by side)
    scoring.load_scorers()
    targets = [target_path(request, services, stack.name, the_slice.name, arm.name, k) for k in ks]
    # A pooled slice keeps each finished part in a sidecar, so the same command after an interruption runs only the
    # parts still missing (bench.run.resume); a plain slice is one part, with nothing to resume.
    progress = PartProgress.for_unit(unit, services, targets) if the_slice.parts else None
    done = progress.finished(parts) if progress is not None else {}
    for finished in done.values():
        _count_finished(finished, system_tap, answer_taps, system_health, answer_health)
        part_seconds[finished.conversation] = finished.seconds
    if done and progress is not None:
        (services.say or print)(f"resuming: {len(done)} of {len(parts)} parts already done ({progress.folder})")
    others = progress.others() if progress is not None else []
    if others:  # never read by this run, never removed by it: they may still be resumed by their own command
        (services.say or print)(
            f"kept: {len(others)} unfinished run(s) of this arm and slice with other code or arguments in "
            f"{others[0].parent} ({', '.join(p.name for p in others)}); delete them if they will not be resumed"
        )
    index_of = {part.conversation: i for i, part in enumerate(parts)}
    try:
        # A pooled slice's parts each get a fresh store in their own folder; a plain slice is its own one part.
        with ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="answer") as pool:

            def one_part(part: Slice, part_services: RunServices) -> PartRun:
                folder = run_dir / part.conversation if the_slice.parts else run_dir
                part_started = time.perf_counter()
                if progress is None:
                    ran = _run_part(unit, part, part_services, folder, system_tap, answer_taps, pool)
                    part_seconds[part.conversation] = round(time.perf_counter() - part_started, 3)
                    return ran
                # the part's own taps and watchers (inside the run's), so what it called is kept with it
                part_health = health.RunHealth()
                part_answer_health = {k: health.RunHealth() for k in ks}
                part_system = PartTap(system_tap, part_health.watch)
                part_answers = {k: PartTap(answer_taps[k], part_answer_health[k].watch) for k in ks}
                ran = _run_part(unit, part, part_services, folder, part_system, part_answers, pool)
                part_seconds[part.conversation] = round(time.perf_counter() - part_started, 3)
                progress.save(
                    FinishedPart(
                        index=index_of[part.conversation],
                        conversation=part.conversation,
                        run=ran,
                        seconds=part_seconds[part.conversation],
                        system_calls=part_system.counts(),
                        answer_calls={k: tap.counts() for k, tap in part_answers.items()},
                        system_health=part_health,
                        answer_health=part_answer_health,
                    )
                )
                return ran

            missing = [part for i, part in enumerate(parts) if i not in done]
            fresh = iter(_each_part(missing, one_part, services, min(in_flight, max(len(missing), 1))))
            runs = [done[i].run if i in done else next(fresh) for i in range(len(parts))]
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
    if longmemeval_protocol(the_slice):  # each LongMemEval question is its own haystack: its time, by question id
        extras["seconds_per_question"] = {p.conversation: part_seconds[p.conversation] for p in parts}
    system_health.messages_written = len(usages)
    system_health.facts_stored = health.stored_facts(store, pooled=bool(the_slice.parts))
    system_health.retrievals = health.retrieval_counts(store, pooled=bool(the_slice.parts))
    compared = [r.replay for r in runs if r.replay is not None]
    if compared:
        replay = sum(compared, Comparison())
        system_health.replayed = (replay.compared, replay.differing, replay.first)
    health_of = {k: system_health.merged(answer_health[k]) for k in ks}
    where = f"{arm.name} on {the_slice.name}"
    warnings = [problem for k in ks for problem in health.check(health_of[k], request.health_strict, where)]
    for problem in dict.fromkeys(warnings):
        # a warning goes to stderr, beside the first screen's banner, and into the result (extras.health.problems)
        print(f"engram-bench: WARNING: {where}: {problem} (--strict stops such a run)", file=sys.stderr)
    if updates is None and audit:
        extras["stale_labels"] = metrics.stale_labels_report({m.id for m in the_slice.messages}, audit, embedder)
    extras.update(run_notes(request))
    planned: list[tuple[Path, Result, set[str], Trace | None]] = []
    for k in ks:
        path = target_path(request, services, stack.name, the_slice.name, arm.name, k)
        keys_path = path.with_suffix(".calls.txt")
        trace = trace_of_run(path, arm.system, runs, k)
        result = Result.build(
            **identity(unit, services, k, models),
            answers=answers[k],
            costs=Costs(figures.cost_per_1k, figures.decision_cost_per_1k, figures.extract_cost_per_1k),
            latency=Latency(figures.write_p50_ms, figures.decision_p50_ms),
            store=store,
            updates=updates,
            extras={**extras, "health": health_of[k].to_json(), "servers": health_of[k].servers},
            metrics=result_metrics(stack, k),
            calls=calls_of(keys_path, unit, services, system_tap, answer_taps[k]),
            timing=Timing(wall_s=round(time.perf_counter() - wall_start, 3), started_at=started, finished_at=now()),
            trace=trace_name(path),
        )
        planned.append((path, result, system_tap.keys | answer_taps[k].keys, trace))
    written = write_all(planned)
    if progress is not None:
        progress.finish()  # the result has landed: the finished parts are no longer needed
    return written


class PartTap(KeyTap):
    """One part's tap inside the run's own: every call goes through the run's tap (its bound, its watcher, its key
    list) and is also counted here, so a finished part keeps exactly the calls it made."""

    def __init__(self, run_tap: KeyTap, watch: Callable[[Any, Any], None]) -> None:
        super().__init__(run_tap.as_gateway(), watch)
        self.run_tap = run_tap

    def note_external(self, keys: Sequence[str], hits: int, misses: int) -> None:
        super().note_external(keys, hits, misses)
        self.run_tap.note_external(keys, hits, misses)

    def counts(self) -> TapCounts:
        return TapCounts(frozenset(self.keys), self.hits, self.misses)


def _count_finished(
    finished: FinishedPart,
    system_tap: KeyTap,
    answer_taps: Mapping[int | None, KeyTap],
    system_health: health.RunHealth,
    answer_health: Mapping[int | None, health.RunHealth],
) -> None:
    """A part finished by an earlier, interrupted run counts in this run's calls and health as if it had run here."""
    calls = finished.system_calls
    system_tap.note_external(sorted(calls.keys), calls.hits, calls.misses)
    system_health.absorb(finished.system_health)
    for k, tap in answer_taps.items():
        calls = finished.answer_calls[k]
        tap.note_external(sorted(calls.keys), calls.hits, calls.misses)
        answer_health[k].absorb(finished.answer_health[k])


def _each_part(
    parts: Sequence[Slice], one_part: Callable[[Slice, RunServices], PartRun], services: RunServices, at_once: int
) -> list[PartRun]:
    """Every part run, `at_once` at a time, collected in slice order. Parts share nothing but the gateway and the
    answer pool (each its own store and system), so the order they finish in changes no byte of a result. Run
    together, their own progress bars would fight over the terminal: one bar counts the conversations instead."""
    if at_once <= 1:
        return [one_part(part, services) for part in parts]
    quiet = replace(services, progress=False)
    with progress_bars(services.progress) as progress, ThreadPoolExecutor(at_once, thread_name_prefix="part") as pool:
        task = progress.add_task(f"{len(parts)} conversations, {at_once} at a time", total=len(parts))
        futures = [pool.submit(one_part, part, quiet) for part in parts]
        for future in futures:
            # only a part that finished counts: an interruption cancels the parts not yet started, and their
            # callbacks fire too (the bar read 100% on Ctrl-C)
            future.add_done_callback(lambda f: _advance_if_finished(f, progress, task))
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:  # a failed part ends the run: the parts not yet started never start
                future.cancel()
            raise


def _advance_if_finished(future: Future[Any], progress: Any, task: Any) -> None:
    if not future.cancelled() and future.exception() is None:
        progress.advance(task)


def longmemeval_protocol(the_slice: Slice) -> dict[str, str]:
    """A LongMemEval slice's result records its answer and judge templates' hashes and rules beside the default
    prompts."""
    if any(q.category_name in longmemeval_judge.TEMPLATE_FOR_TYPE for q in the_slice.questions):
        return longmemeval_answer.protocol() | longmemeval_judge.protocol()
    return {}
