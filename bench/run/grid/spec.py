"""What a grid is: arms x slices x replicates on one stack, from the command line or a GRID.toml, checked whole.

A grid expands to *units*, one arm on one slice for one replicate, each answered at every k of the arm from one
ingestion (exactly what `engram-bench run ARM --slice S` does). A token-matched arm is a *dependent* unit: it reads
its sweep's and reference's results on every pooled slice, so those become units of the grid too (added when the
grid does not name them) and it runs only once they are written.

Everything a grid names is checked before anything runs: every arm loads, every slice builds, the stack is known,
the executor is one this harness has; the first problem is one line naming the grid file (or the option) and field.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.data.slices import Slice, load_slice
from bench.errors import BenchError, ConfigError
from bench.models.budget import limits_from_env
from bench.models.stacks import DEFAULT_STACK, check_stack_name
from bench.run.arms import Arm, arm_names, load_arm
from bench.run.grid.executors import EXECUTORS
from bench.run.grid.units import Unit, result_relpath, unit_id
from bench.run.planner import Planner, PlanUnit, stack_for
from bench.run.request import RunRequest
from bench.vocab import HELDOUT_GROUP, heldout_slices

DEFAULT_EXECUTOR = "local"

DEFAULT_RETRIES = 2  # a unit whose worker died is tried this many more times (Ray's max_retries; the pool's own)
GRID_FILE_KEYS = (
    "arms", "slices", "replicates", "stack", "executor", "address", "out", "workers", "budget_usd", "tag",
    "concurrency",
)  # fmt: skip


@dataclass(frozen=True)
class GridSpec:
    """A grid as asked for. `source` names where it came from (the grid file, or "command line") in messages."""

    arms: tuple[str, ...]
    slices: tuple[str, ...]
    replicates: int = 1
    stack: str = DEFAULT_STACK
    executor: str = DEFAULT_EXECUTOR
    address: str | None = None  # Ray: a cluster to join (host:port, ray://host:port, or "auto"); None: start one
    out: Path | None = None  # a results tree (<out>/<stack>/<slice-dir>/<arm>[__k<k>].json); None: runs/grid/
    workers: int | None = None  # units at once (pool size; Ray's num_cpus when it starts a local cluster)
    budget_usd: float | None = None  # the one limit for every paid call of the grid; None: $ENGRAM_RUN_BUDGET_USD
    retries: int = DEFAULT_RETRIES
    # A frozen git tag (held-out runs): HEAD must be exactly at it on a clean tree, every result is stamped with it,
    # and the results tree defaults to results/ (what `heldout --tag` writes). None: an ordinary grid.
    tag: str | None = None
    concurrency: int | None = None  # calls in flight per unit (questions answered at once); None: the stack file's
    source: str = "command line"
    given: frozenset[str] = frozenset()  # the fields the command line gave (they override the grid file's)

    def where(self, field_name: str) -> str:
        """How a message names a field: the grid file and key, or the option it came from."""
        if self.source == "command line" or field_name in self.given:
            return f"--{_option(field_name)}"
        return f"{self.source}: {field_name}"

    @property
    def limit_usd(self) -> float:
        return self.budget_usd if self.budget_usd is not None else limits_from_env()[0]

    def worker_count(self) -> int:
        return self.workers or max(1, os.cpu_count() or 1)


def _option(field_name: str) -> str:
    return {"arms": "arm", "slices": "slice", "budget_usd": "budget"}.get(field_name, field_name)


@dataclass(frozen=True)
class GridPlan:
    """A checked grid: its units in dependency order, and each slice built once (shipped to the workers)."""

    spec: GridSpec
    units: tuple[Unit, ...]
    slices: Mapping[str, Slice] = field(repr=False)

    def unit(self, uid: str) -> Unit:
        return next(u for u in self.units if u.id == uid)


# ------------------------------------------------------------------------------------------------ the grid file


def load_grid_file(path: Path) -> dict[str, Any]:
    """The fields of a GRID.toml; an unreadable file or an unknown field is one line naming both."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: expected a grid file (TOML), found no file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: expected a grid file in TOML, found unreadable text ({exc})") from None
    unknown = sorted(set(data) - set(GRID_FILE_KEYS))
    if unknown:
        raise ConfigError(f"{path}: {unknown[0]}: expected one of {', '.join(GRID_FILE_KEYS)}, found an unknown field")
    return data


def spec_from(file: Path | None, overrides: Mapping[str, Any]) -> GridSpec:
    """The grid file's fields with the command line's on top (an option given on the command line wins; lists
    given there replace the file's). Types are checked here, names in `plan_grid`."""
    source = str(file) if file is not None else "command line"
    fields: dict[str, Any] = dict(load_grid_file(file)) if file is not None else {}
    given = {k: v for k, v in overrides.items() if v is not None and v != ()}
    fields.update(given)
    spec = GridSpec(arms=(), slices=(), source=source, given=frozenset(given))

    def where(name: str) -> str:
        return spec.where(name)

    arms = _names(fields.get("arms"), where("arms"))
    slices = _names(fields.get("slices"), where("slices"))
    replicates = _count(fields.get("replicates", 1), where("replicates"), minimum=1)
    workers = fields.get("workers")
    concurrency = fields.get("concurrency")
    stack = _text(fields.get("stack", DEFAULT_STACK), where("stack"))
    executor = _text(fields.get("executor", DEFAULT_EXECUTOR), where("executor"))
    address = fields.get("address")
    budget = fields.get("budget_usd")
    out = fields.get("out")
    tag = fields.get("tag")
    if tag is not None:
        tag = _text(tag, where("tag"))
    check_stack_name(stack, where("stack"))
    EXECUTORS.get(executor, where("executor"))
    if address is not None:
        address = _text(address, where("address"))
        if executor != "ray":
            raise ConfigError(f"{where('address')}: expected it only with executor ray, found executor {executor!r}")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int | float) or budget < 0):
        raise ConfigError(f"{where('budget_usd')}: expected a non-negative number of USD, found {budget!r}")
    if out is not None:
        out = Path(_text(str(out) if isinstance(out, Path) else out, where("out")))
        if file is not None and not out.is_absolute() and "out" not in given:
            out = Path(file).parent / out  # a grid file's out is relative to the file
    return replace(
        spec,
        arms=arms,
        slices=slices,
        replicates=replicates,
        stack=stack,
        executor=executor,
        address=address,
        out=out,
        workers=None if workers is None else _count(workers, where("workers"), minimum=1),
        budget_usd=None if budget is None else float(budget),
        tag=tag,
        concurrency=None if concurrency is None else _count(concurrency, where("concurrency"), minimum=1),
    )


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None or value == () or value == []:
        raise ConfigError(f"{where}: expected at least one name, found none")
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of names, found {value!r}")
    return tuple(dict.fromkeys(value))


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string, found {value!r}")
    return value


def _count(value: Any, where: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{where}: expected an integer of at least {minimum}, found {value!r}")
    return value


# --------------------------------------------------------------------------------------------------- expansion


def plan_grid(
    spec: GridSpec,
    *,
    slice_loader: Callable[[str], Slice] = load_slice,
    arms_dir: Path | None = None,
) -> GridPlan:
    """Check every name and expand the grid into units, prerequisites before the units that read them."""
    arms = {name: _arm(spec, name, arms_dir) for name in spec.arms}
    slice_names = _expand_slices(spec.slices)
    slices: dict[str, Slice] = {}
    for name in slice_names:
        slices[name] = _slice(spec, name, slice_loader)
    for arm in arms.values():
        try:
            stack_for(spec.stack, arm)
        except BenchError as exc:
            raise ConfigError(f"{spec.where('arms')}: {arm.name} on stack {spec.stack}: {exc}") from None

    # The one run planner expands the grid (bench.run.planner): a token-matched arm's sweep and reference on every
    # pooled slice become units too, each answered at its own k's and the ones read (one ingestion serves both).
    def grid_arm(name: str) -> Arm:
        if name not in arms:
            arms[name] = _arm(spec, name, arms_dir)
        return arms[name]

    def grid_slice(name: str) -> Slice:
        if name not in slices:
            slices[name] = _slice(spec, name, slice_loader)
        return slices[name]

    def pooled_refused(arm: Arm, the_slice: Slice) -> None:
        if the_slice.parts:
            raise ConfigError(
                f"{spec.where('slices')}: {arm.name} matches tokens on one conversation at a time; slice "
                f"{the_slice.name!r} pools {len(the_slice.parts)}; expected its parts (e.g. {the_slice.parts[0].name})"
            )

    planner = Planner(
        RunRequest(stack=spec.stack),
        load_arm=grid_arm,
        load_slice=grid_slice,
        check_token_match=pooled_refused,
        widen=True,
    )
    named = list(arms)  # `grid_arm` adds the arms a token-matched arm reads
    for replicate in range(spec.replicates):
        for arm_name in named:
            for slice_name in slice_names:
                planner.add(arm_name, slice_name, replicate)
    units = [_unit(planned, spec.stack) for planned in planner.plan().units]
    ordered = sorted(units, key=lambda u: (u.token_matched, u.replicate))  # stable: named order kept
    return GridPlan(spec=spec, units=tuple(ordered), slices=slices)


def _unit(planned: PlanUnit, stack: str) -> Unit:
    """A planned unit as the grid ships it to a worker: its names and the files it reads relative to the grid's
    results tree (for the driver), and the planned unit itself (for the worker)."""
    replicate = planned.replicate
    after = [unit_id(need.arm, need.slice_name, replicate) for need in planned.reads]
    reads = [result_relpath(stack, n.slice_name, n.arm, k, replicate) for n in planned.reads for k in n.ks]
    return Unit(
        planned.arm.name,
        planned.the_slice.name,
        replicate,
        planned.ks,
        planned.arm.hash,
        token_matched=planned.matches_tokens,
        after=tuple(dict.fromkeys(after)),
        reads=tuple(reads),
        named=planned.named,
        planned=planned,
    )


def _expand_slices(names: Sequence[str]) -> list[str]:
    """`heldout` (the article's held-out group) stands for its four conversations, one unit each."""
    out: list[str] = []
    for name in names:
        out += heldout_slices() if name == HELDOUT_GROUP else [name]
    return list(dict.fromkeys(out))


def _arm(spec: GridSpec, name: str, arms_dir: Path | None) -> Arm:
    try:
        arm = load_arm(name, arms_dir) if arms_dir else load_arm(name)
    except BenchError as exc:
        known = ", ".join(arm_names(arms_dir) if arms_dir else arm_names())
        raise ConfigError(
            f"{spec.where('arms')}: expected an arm in arms/ ({known}), found {name!r} ({_first_line(exc)})"
        ) from None
    if arm.import_only:
        raise ConfigError(f"{spec.where('arms')}: expected an arm this harness can run, found import-only {name!r}")
    return arm


def _slice(spec: GridSpec, name: str, slice_loader: Callable[[str], Slice]) -> Slice:
    try:
        return slice_loader(name)
    except BenchError as exc:
        raise ConfigError(f"{spec.where('slices')}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
