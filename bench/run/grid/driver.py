"""The grid driver: plan, skip what is done, run the rest on an executor, merge each unit's shard, summarise.

    plan_grid ─► skip units whose every file exists with the same arm hash and commit ─► check targets, executor
    ─► one banner (and one yes, if paid calls may be sent) ─► grid lock ─► budget service + executor start
    ─► submit every unit whose prerequisites are written ─► per ended unit: merge its shard into the local
       cache, write its files atomically into the results tree, print one line, submit what it unblocked
    ─► one summary table (printed, and <out>/grid-summary.md)

The driver is the only process that writes the results tree and the local cache, and it writes each unit's files
as soon as that unit ends, so a driver killed at any point and started again with the same grid skips every unit
already written and runs the rest (an interrupted unit's shard still holds what it had recorded).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.data.slices import Slice, heldout_conversations, load_slice
from bench.disk.atomic import write_bytes, write_text
from bench.errors import HeldoutRefused, ResultError, RunLocked
from bench.models.budget import Ledger, limits_from_env
from bench.models.gateway import default_cache_dir, ledger_path, provider_mode
from bench.results.gitinfo import frozen_commit, git_state
from bench.run.grid.executors import BudgetArgs, Executor, RayExecutor, make_executor
from bench.run.grid.shards import entries_from_texts, merge_entries, merge_shard
from bench.run.grid.spec import GridPlan, GridSpec, Unit, plan_grid
from bench.run.grid.worker import BLOCKED, FAILED, RAN, SKIPPED, UnitOutcome, UnitTask
from bench.run.preflight import Preflight, announce_and_confirm, modes_for
from bench.run.request import RunRequest, default_runs_root
from bench.vocab import REPO_ROOT, RESULTS_DIR, heldout_slice

GRID_DIR = "grid"  # the default output root, under the runs folder
STATE_DIR = ".grid"  # under the output root: the lock and the shards of units in progress
SUMMARY_FILE = "grid-summary.md"


@dataclass
class UnitReport:
    unit: Unit
    status: str
    message: str = ""
    files: list[str] = field(default_factory=list)
    wall_s: float | None = None
    spent_usd: float = 0.0
    merged: int = 0  # cache entries its shard held

    def accuracy_text(self, out: Path) -> str:
        cells = []
        for relative in self.files:
            if not relative.endswith(".json") or relative.endswith(".trace.json"):
                continue
            data = json.loads((out / relative).read_text(encoding="utf-8"))
            acc = data.get("accuracy") or {}
            k = data.get("k")
            value = acc.get("value")
            cell = f"{acc.get('correct')}/{acc.get('n')}" + (f" {value:.1%}" if isinstance(value, float) else "")
            cells.append(f"k={k}: {cell}" if k is not None else cell)
        return "; ".join(cells)


@dataclass
class GridReport:
    plan: GridPlan
    out: Path
    units: dict[str, UnitReport]
    wall_s: float
    executor: str
    startup_s: float = 0.0  # the executor's own start (Ray: ray.init and the budget actor)

    @property
    def ok(self) -> bool:
        return all(r.status in (RAN, SKIPPED) for r in self.units.values())

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for report in self.units.values():
            counts[report.status] = counts.get(report.status, 0) + 1
        return counts


def default_out(runs_root: Path | None = None) -> Path:
    return Path(runs_root or default_runs_root()) / GRID_DIR


def run_grid(
    spec: GridSpec,
    *,
    slice_loader: Callable[[str], Slice] = load_slice,
    arms_dir: Path | None = None,
    cache_dir: Path | None = None,
    runs_root: Path | None = None,
    mode: str | None = None,
    assume_yes: bool = False,
    progress: bool = True,
    console: Console | None = None,
    say: Callable[[str], None] | None = None,
    shard_root: Path | None = None,
) -> GridReport:
    """Run a grid; every check happens before anything is written or run."""
    started = time.perf_counter()
    console = console or Console(highlight=False)
    say = say or (lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True))
    plan = plan_grid(spec, slice_loader=slice_loader, arms_dir=arms_dir)
    if spec.tag is not None:
        commit: str | None = frozen_commit(REPO_ROOT, spec.tag)  # before anything is written or started
        out = Path(spec.out) if spec.out is not None else RESULTS_DIR
    else:
        commit = git_state(REPO_ROOT)[0]
        out = Path(spec.out) if spec.out is not None else default_out(runs_root)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    done = {u.id for u in plan.units if is_done(u, spec.stack, out, commit)}
    todo = [u for u in plan.units if u.id not in done]
    for unit in todo:
        if spec.tag is not None:
            _refuse_for_tag(unit, spec, out)
        _refuse_tagged(unit, spec.stack, out)
    executor = make_executor(spec.executor, spec.worker_count(), spec.retries, spec.address)
    if isinstance(executor, RayExecutor):
        executor.check()
    if todo:
        _confirm(plan, todo, out, cache, mode, assume_yes, say)

    reports = {u.id: UnitReport(u, SKIPPED, "already written (same arm hash and commit)") for u in plan.units}
    for unit in todo:
        reports[unit.id] = UnitReport(unit, "pending")
    state = out / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    lock = FileLock(state / "grid.lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunLocked(
            f"{state / 'grid.lock'}: another grid driver writes {out} ({_holder(state)}); expected one at a time"
        ) from None
    startup = 0.0
    try:
        (state / "driver.pid").write_text(f"{os.getpid()}\n", encoding="utf-8")
        if todo:
            startup = _drive(plan, todo, reports, executor, out, cache, shard_root or state / "shards", mode, say,
                             progress, console, arms_dir, commit)  # fmt: skip
    finally:
        lock.release()
    report = GridReport(plan, out, reports, round(time.perf_counter() - started, 3), executor.name, startup)
    _summary(report, console)
    return report


def _drive(
    plan: GridPlan,
    todo: list[Unit],
    reports: dict[str, UnitReport],
    executor: Executor,
    out: Path,
    cache: Path,
    shard_root: Path,
    mode: str | None,
    say: Callable[[str], None],
    progress: bool,
    console: Console,
    arms_dir: Path | None,
    commit: str | None,
) -> float:
    spec = plan.spec
    grid_id = f"grid-{os.getpid()}-{int(time.time())}"
    run_limit, total_limit = limits_from_env()
    t0 = time.perf_counter()
    link = executor.start(BudgetArgs(str(ledger_path(cache)), grid_id, spec.limit_usd, total_limit))
    startup = round(time.perf_counter() - t0, 3)
    host = socket.gethostname()
    waiting = {u.id: u for u in todo}
    submitted: set[str] = set()

    def ready(unit: Unit) -> bool:
        return all(reports[a].status in (RAN, SKIPPED) for a in unit.after)

    def blocked(unit: Unit) -> bool:
        return any(reports[a].status not in (RAN, SKIPPED, "pending") for a in unit.after)

    def submit_ready() -> None:
        for uid, unit in list(waiting.items()):
            if blocked(unit):
                waiting.pop(uid)
                reports[uid] = UnitReport(unit, BLOCKED, "a unit it reads did not run: " + ", ".join(unit.after))
                say(f"- {unit.label}: blocked (a unit it reads did not run)")
                bar.advance(task)
            elif ready(unit):
                waiting.pop(uid)
                executor.submit(_task(unit, plan, out, shard_root, cache, link, host, grid_id, mode, arms_dir))
                submitted.add(uid)

    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not progress,
        transient=False,
    )
    try:
        with bars as bar:
            task = bar.add_task(f"grid units ({executor.name})", total=len(todo))
            submit_ready()
            while executor.pending():
                for ended_task, outcome in executor.next_outcomes():
                    report = _collect(ended_task.unit, outcome, out, cache, host)
                    reports[report.unit.id] = report
                    executor.release_unit(report.unit.id)
                    say(_unit_line(report, out))
                    bar.advance(task)
                submit_ready()
            for uid, unit in list(waiting.items()):  # only dependents of units that did not run remain
                reports[uid] = UnitReport(unit, BLOCKED, "a unit it reads did not run: " + ", ".join(unit.after))
                bar.advance(task)
    finally:
        executor.close()
    return startup


def _task(
    unit: Unit,
    plan: GridPlan,
    out: Path,
    shard_root: Path,
    cache: Path,
    link: Any,
    host: str,
    grid_id: str,
    mode: str | None,
    arms_dir: Path | None,
) -> UnitTask:
    inputs: dict[str, bytes] = {}
    for relative in unit.reads:
        path = out / relative
        inputs[relative] = path.read_bytes()
        for sidecar in _sidecars(path):
            inputs[sidecar.relative_to(out).as_posix()] = sidecar.read_bytes()
    assert unit.planned is not None  # every unit of a GridPlan is the planner's
    request = RunRequest(  # what `run --update-committed` would be asked for this unit, resolved here once
        stack=plan.spec.stack,
        update_committed=True,
        run_id=grid_id.replace(".", "-"),
        mode=mode,
        git_tag=plan.spec.tag,
        health_strict=plan.spec.tag is not None,  # grid --tag: a broken model role stops the unit
        assume_yes=True,  # the driver asked once for the whole grid
        replicate=unit.replicate,
        arms_dir=arms_dir,
        concurrency=plan.spec.concurrency,
    )
    return UnitTask(
        unit=replace(unit, planned=replace(unit.planned, request=request)),
        inputs=inputs,
        shard_root=str(shard_root),
        read_caches=(str(cache),),
        budget=link,
        driver_host=host,
        grid_id=grid_id,
    )


def _sidecars(result: Path) -> list[Path]:
    """A result's key list and trace, when present (a token-matched arm copies both from its sweep)."""
    found = [result.with_suffix(".calls.txt")]
    try:
        trace = json.loads(result.read_text(encoding="utf-8")).get("trace")
    except (OSError, ValueError):
        trace = None
    if isinstance(trace, str):
        found.append(result.with_name(trace))
    return [p for p in found if p.is_file()]


def _collect(unit: Unit, outcome: UnitOutcome, out: Path, cache: Path, host: str) -> UnitReport:
    """Merge the unit's shard into the local cache (whatever its status: paid calls are kept), then write its
    files. Files are written key list and trace first, the result last, each atomically."""
    if outcome.shard_entries is not None:
        merged = merge_entries(entries_from_texts(outcome.shard_entries), cache).entries
    elif outcome.host == host and Path(outcome.shard).is_dir():
        merged = merge_shard(Path(outcome.shard), cache).entries
    else:
        merged = 0
    results = [r for r in outcome.files if r.endswith(".json") and not r.endswith(".trace.json")]
    for relative in sorted(outcome.files, key=lambda r: (r in results, r)):
        write_bytes(out / relative, outcome.files[relative])
    return UnitReport(
        unit,
        outcome.status,
        outcome.message,
        files=sorted(results),
        wall_s=outcome.wall_s,
        spent_usd=outcome.spent_usd,
        merged=merged,
    )


def _unit_line(report: UnitReport, out: Path) -> str:
    unit = report.unit
    if report.status == RAN:
        return (
            f"✓ {unit.label}: {report.accuracy_text(out)} | {report.wall_s:.1f} s, ${report.spent_usd:.4f}, "
            f"{report.merged} cache entries merged"
        )
    return f"✗ {unit.label}: {report.status}: {report.message}"


# ----------------------------------------------------------------------------------------------------- checks


def is_done(unit: Unit, stack: str, out: Path, commit: str | None) -> bool:
    """Every file of the unit exists with the arm's hash and this commit (a token-matched arm: the one it chose)."""
    if commit is None:
        return False
    found = [out / relative for relative in unit.relative_targets(stack) if (out / relative).is_file()]
    if not found or (not unit.token_matched and len(found) != len(unit.ks)):
        return False
    for path in found:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        provenance = data.get("provenance") or {}
        if data.get("arm_hash") != unit.arm_hash or provenance.get("git_commit") != commit:
            return False
    return True


def _refuse_for_tag(unit: Unit, spec: GridSpec, out: Path) -> None:
    """Under a frozen tag a grid is a held-out run: held-out slices only, and, like `heldout`, it never overwrites
    a result (a unit already written at this commit was skipped before this check)."""
    allowed = {heldout_slice(c) for c in heldout_conversations()}
    if unit.slice_name not in allowed:
        raise HeldoutRefused(
            f"{spec.where('tag')}: expected only held-out slices under a frozen tag, found {unit.slice_name!r}"
        )
    for relative in unit.relative_targets(spec.stack):
        if (out / relative).is_file():
            raise HeldoutRefused(
                f"{out / relative}: a held-out result already exists; held-out runs never overwrite: "
                f"delete it first if you mean to replace it"
            )


def _refuse_tagged(unit: Unit, stack: str, out: Path) -> None:
    """A grid never replaces a tag-stamped (held-out) result: refused before anything runs."""
    for relative in unit.relative_targets(stack):
        path = out / relative
        if not path.is_file():
            continue
        try:
            tag = (json.loads(path.read_text(encoding="utf-8")).get("provenance") or {}).get("git_tag")
        except (OSError, ValueError):
            continue
        if tag is not None:
            raise ResultError(
                f"{path}: a result stamped with tag {tag!r} exists; expected the grid's --out to hold no "
                f"tag-stamped result it would replace (held-out results are written by `heldout --tag`)"
            )


def _confirm(
    plan: GridPlan,
    todo: list[Unit],
    out: Path,
    cache: Path,
    mode: str | None,
    assume_yes: bool,
    say: Callable[[str], None],
) -> None:
    """One banner for the grid, and one yes when any of its units may send paid calls (each unit's stack as the
    planner built it)."""
    spec = plan.spec
    stacks = [unit.planned.stack for unit in todo if unit.planned is not None]
    stack = stacks[0]
    modes: dict[str, str] = {}
    for unit_stack in stacks:
        modes.update(modes_for(unit_stack, lambda p: provider_mode(p, mode)))  # type: ignore[arg-type]
    _, total_limit = limits_from_env()
    preflight = Preflight(
        arm=f"grid of {len(todo)} unit(s) [{', '.join(dict.fromkeys(u.arm for u in todo))}]",
        slice_name=", ".join(dict.fromkeys(u.slice_name for u in todo)),
        stack=stack,
        modes=modes,
        strict=False,
        run_limit_usd=spec.limit_usd,
        total_limit_usd=total_limit,
        spent_usd=Ledger(ledger_path(cache)).total_usd(),
        destination=out,
    )
    announce_and_confirm(preflight, assume_yes=assume_yes, say=say)


def _holder(state: Path) -> str:
    try:
        return f"pid {int((state / 'driver.pid').read_text().split()[0])}"
    except (OSError, ValueError, IndexError):
        return "pid unknown"


# ----------------------------------------------------------------------------------------------------- summary


SUMMARY_COLUMNS = ("unit", "status", "accuracy", "wall s", "spent $", "note")


def summary_rows(report: GridReport) -> list[tuple[str, ...]]:
    """One row per unit, in plan order: the summary table's cells (printed and written as Markdown)."""
    rows: list[tuple[str, ...]] = []
    for unit in report.plan.units:
        r = report.units[unit.id]
        rows.append(
            (
                unit.label + ("" if unit.named else " (read by a token-matched arm)"),
                r.status,
                r.accuracy_text(report.out) if r.status == RAN else _existing_accuracy(unit, report),
                f"{r.wall_s:.1f}" if r.wall_s is not None else "",
                f"{r.spent_usd:.4f}",
                "" if r.status == RAN else r.message,
            )
        )
    return rows


def _existing_accuracy(unit: Unit, report: GridReport) -> str:
    if report.units[unit.id].status != SKIPPED:
        return ""
    files = [rel for rel in unit.relative_targets(report.plan.spec.stack) if (report.out / rel).is_file()]
    return UnitReport(unit, SKIPPED, files=files).accuracy_text(report.out)


def _headline(report: GridReport) -> str:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts().items()))
    startup = f", executor start-up {report.startup_s:.1f} s" if report.startup_s else ""
    return (
        f"grid: {len(report.units)} units ({counts}), {report.plan.spec.stack} stack, {report.executor} executor, "
        f"{report.wall_s:.1f} s wall{startup}"
    )


def summary_table(report: GridReport) -> Table:
    table = Table(title=_headline(report))
    for column in SUMMARY_COLUMNS:
        table.add_column(column)
    for row in summary_rows(report):
        table.add_row(*row)
    return table


def summary_markdown(report: GridReport) -> str:
    lines = [
        "# Grid summary",
        "",
        f"{_headline(report)}. Results tree: `{report.out}`.",
        "",
        "| " + " | ".join(SUMMARY_COLUMNS) + " |",
        "|" + "---|" * len(SUMMARY_COLUMNS),
    ]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in summary_rows(report)]
    return "\n".join(lines) + "\n"


def _summary(report: GridReport, console: Console) -> None:
    console.print(summary_table(report))
    write_text(report.out / SUMMARY_FILE, summary_markdown(report))


__all__ = ["FAILED", "GridReport", "UnitReport", "default_out", "is_done", "run_grid"]
