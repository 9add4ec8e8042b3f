"""What a run would send and cost, said before it sends anything (`engram-bench plan`, and the banner of `run`).

Per role: the number of calls, how many the caches already hold, the input/output tokens of the rest and their
price from the stack file. Where each figure comes from (every line says which):

- calls: `answer` and `judge` once per asked question per k, counted from the slice (exact); `count_tokens` once
  more for the empty block. The other roles (extract, decide, escalate, llm_decider): per message as the system
  declares them when it fixes them (`System.MODEL_CALLS_PER_MESSAGE`: mem0 one extraction per message, the turn
  baselines none); otherwise they depend on what the models say, so they are taken from the committed offline run
  of the same arm on the same slice (its key list, looked up in the caches by purpose): the pipeline's call pattern
  with stand-ins. When the caches cannot say, they are not estimated, and the plan says so.
- cached: of the calls an earlier run of this arm on this stack and slice made (its key list: the committed result,
  else the newest run folder), how many the shipped subsets and the local cache hold, per role. Without an earlier
  run nothing is assumed cached.
- tokens: input by the spend guard's own rule (`bench.models.budget.estimate_input_tokens`, a pessimistic bytes/3) over the
  prompts as they would be rendered (the offline run's shown lines and answers stand in for the ones the stack's
  models will produce); output at each call's `max_tokens`, so dollars are an upper bound like the guard's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import settings
from bench.data.slices import Slice, load_slice
from bench.errors import ConfigError
from bench.models.budget import Ledger, limits_from_env, usd
from bench.models.cache import LocalStore, ShippedSubset, discover_subsets, find_entry, read_keys_file
from bench.models.gateway import default_cache_dir, ledger_path
from bench.models.stacks import OFFLINE_STACK, Stack
from bench.results.schema import Answer, file_name, read_result, slice_dir
from bench.run import planner
from bench.run.arms import Arm, load_arm
from bench.run.preflight import Preflight, SpendEstimate, use_estimator
from bench.run.pricing import RoleEstimate, question_role, write_role
from bench.run.request import RunRequest
from bench.systems import get_system
from bench.vocab import RESULTS_DIR

WRITE_ROLES = ("extract", "decide", "escalate", "llm_decider")
QUESTION_ROLES = ("answer", "judge", "count_tokens")
REFERENCE_STACK = OFFLINE_STACK  # its committed results exist for every runnable arm and slice


@dataclass(frozen=True)
class Plan:
    arm: str
    slice_name: str
    stack: Stack
    ks: tuple[int | None, ...]
    roles: list[RoleEstimate]
    run_limit_usd: float
    total_limit_usd: float
    spent_usd: float
    notes: list[str] = field(default_factory=list)

    @property
    def usd(self) -> float:
        return math.fsum(r.usd for r in self.roles if r.usd is not None)

    @property
    def calls(self) -> int:
        return sum(r.calls or 0 for r in self.roles)

    @property
    def cached(self) -> int:
        return sum(r.cached for r in self.roles if r.calls is not None)

    @property
    def calls_to_send(self) -> int:
        return sum(r.to_send or 0 for r in self.roles)

    @property
    def unestimated(self) -> list[str]:
        """Roles on a paid provider whose cost could not be estimated."""
        paid = set(self.stack.paid_providers)
        return [r.role for r in self.roles if r.usd is None and self.stack.ref(r.role).provider in paid]

    def budget_verdict(self) -> str:
        if self.usd > self.run_limit_usd:
            return f"exceeds the per-run limit of {usd(self.run_limit_usd)} (ENGRAM_RUN_BUDGET_USD)"
        if self.spent_usd + self.usd > self.total_limit_usd:
            return (
                f"exceeds the total limit: {usd(self.spent_usd)} spent + {usd(self.usd)} > "
                f"{usd(self.total_limit_usd)} (ENGRAM_TOTAL_BUDGET_USD)"
            )
        return f"within budget ({usd(self.run_limit_usd)} per run, {usd(self.total_limit_usd)} total, {usd(self.spent_usd)} spent)"

    @property
    def allowed(self) -> bool:
        return self.usd <= self.run_limit_usd and self.spent_usd + self.usd <= self.total_limit_usd

    def one_line(self) -> str:
        rate = f"{self.cached / self.calls:.0%}" if self.calls else "n/a"
        line = (
            f"up to {usd(self.usd)} for {_n(self.calls_to_send)} uncached of {_n(self.calls)} calls ({rate} cached); "
            f"{self.budget_verdict()}"
        )
        if self.unestimated:
            line += f"; not estimated: {', '.join(self.unestimated)}"
        return line + " (engram-bench plan)"

    def table(self) -> list[str]:
        ks = ",".join("all" if k is None else str(k) for k in self.ks)
        lines = [
            f"plan {self.arm} on {self.slice_name} at k={ks} | stack {self.stack.name} ({self.stack.label})",
            f"{'role':<12} {'model':<34} {'calls':>6} {'cached':>6} {'to send':>7} {'input tok':>10} "
            f"{'output tok':>10} {'USD':>9}  basis",
        ]
        for r in self.roles:
            lines.append(
                f"{r.role:<12} {r.model:<34} {_n(r.calls):>6} {_n(r.cached):>6} {_n(r.to_send):>7} "
                f"{_n(r.input_tokens):>10} {_n(r.output_tokens):>10} {_usd(r.usd):>9}  {r.basis}"
            )
        lines += self.notes
        lines.append(f"estimate: {self.one_line()}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "slice": self.slice_name,
            "stack": self.stack.name,
            "ks": list(self.ks),
            "roles": [r.to_json() for r in self.roles],
            "calls": self.calls,
            "cached": self.cached,
            "calls_to_send": self.calls_to_send,
            "usd": self.usd,
            "unestimated": self.unestimated,
            "budget": {
                "run_limit_usd": self.run_limit_usd,
                "total_limit_usd": self.total_limit_usd,
                "spent_usd": self.spent_usd,
                "allowed": self.allowed,
            },
            "notes": self.notes,
        }


def _n(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


# ------------------------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class _Caches:
    subsets: list[ShippedSubset]
    local: LocalStore | None

    @classmethod
    def open(cls, cache_dir: Path | None) -> _Caches:
        local_dir = cache_dir or default_cache_dir()
        local = LocalStore(local_dir) if (local_dir / "cache.db").is_file() else None
        return cls([ShippedSubset.open(p) for p in discover_subsets(exclude=[local_dir])], local)

    def purposes(self, keys: Iterable[str]) -> tuple[Counter[str], int]:
        """Cached entries of these keys by purpose, and how many keys no cache holds."""
        found: Counter[str] = Counter()
        missing = 0
        for key in keys:
            entry = find_entry(key, self.subsets, self.local)
            if entry is None:
                missing += 1
            else:
                found[entry.purpose] += 1
        return found, missing

    def close(self) -> None:
        if self.local is not None:
            self.local.close()


def _earlier_keys(stack: str, slice_name: str, arm: str, k: int | None, runs_root: Path) -> tuple[list[str], str]:
    """The key list of an earlier run of this arm on this stack and slice: the committed one, else the newest."""
    name = file_name(arm, k).removesuffix(".json") + ".calls.txt"
    committed = RESULTS_DIR / stack / slice_dir(slice_name) / name
    if committed.is_file():
        return read_keys_file(committed), str(committed.relative_to(RESULTS_DIR.parent))
    folders = sorted((runs_root / stack / slice_dir(slice_name) / arm).glob(f"*/{name}"))
    if folders:
        return read_keys_file(folders[-1]), str(folders[-1])
    return [], ""


def _reference(slice_name: str, arm: str, k: int | None) -> tuple[Path | None, dict[tuple[str, int], Answer]]:
    path = RESULTS_DIR / REFERENCE_STACK / slice_dir(slice_name) / file_name(arm, k)
    if not path.is_file():
        return None, {}
    result = read_result(path)
    return path, {(a.question_id, a.checkpoint or 0): a for a in result.answers}


# --------------------------------------------------------------------------------------------------- the plan


def make_plan(
    arm_name: str,
    slice_name: str,
    stack_name: str,
    *,
    ks: tuple[int | None, ...] | None = None,
    limit: int | None = None,
    cache_dir: Path | None = None,
    runs_root: Path | None = None,
    arm: Arm | None = None,
    the_slice: Slice | None = None,
    stack: Stack | None = None,
) -> Plan:
    """The plan of `run ARM --slice S --stack X` (validates like `run`: a bad arm, slice or stack is one line).
    `arm`, `the_slice` and `stack`: as the planner built them (its --limit applied), instead of building them
    here."""
    runs_root = runs_root or settings.current().runs_dir

    arm = arm or load_arm(arm_name)
    if arm.token_match is not None:
        raise ConfigError(
            f"{arm.path}: plan estimates arms that ingest the slice; {arm.name} is token-matched (plan its sweep "
            f"and reference arms: {arm.token_match.sweep_arm}, {arm.token_match.reference_arm})"
        )
    stack = stack or planner.stack_for(stack_name, arm)
    if the_slice is None:
        the_slice = load_slice(slice_name)
        if limit is not None:
            the_slice = planner.limit_questions(the_slice, limit, arm.scores_adversarial)
    run_ks: tuple[int | None, ...] = tuple(ks or arm.ks_for(slice_name) or (None,))
    asked = planner.asked(the_slice, arm.scores_adversarial)
    caches = _Caches.open(cache_dir)
    notes: list[str] = []
    try:
        # what an earlier run of this very arm, stack and slice needed, and how much of it the caches hold
        earlier: Counter[str] = Counter()
        earlier_missing = 0
        sources = []
        for k in run_ks:
            keys, where = _earlier_keys(stack.name, the_slice.name, arm.name, k, runs_root)
            if keys:
                found, missing = caches.purposes(keys)
                earlier += found
                earlier_missing += missing
                sources.append(where)
        if sources:
            notes.append(
                f"cached: from the key list of {', '.join(sources)} ({earlier_missing} of its calls in no cache)"
            )
        else:
            notes.append(f"cached: no earlier run of {arm.name} on {stack.name}/{the_slice.name}; none assumed cached")
        # the write-side call pattern: fixed by the system, else from the offline run of this arm on this slice
        ref_path, ref_answers = _reference(the_slice.name, arm.name, run_ks[0])
        write_calls: Counter[str] | None = None
        write_basis = ""
        # why the write side is not counted: an offline run that exists is named, never called absent
        unknown = f"no offline run of {arm.name} on {the_slice.name} to count calls from"
        fixed = get_system(arm.system).MODEL_CALLS_PER_MESSAGE
        if fixed is not None:
            write_calls = Counter({role: n * len(the_slice.messages) for role, n in fixed.items()})
            shown = ", ".join(f"{role} {n}" for role, n in fixed.items()) or "none"
            notes.append(f"write-side calls: fixed by {arm.system} per message written ({shown})")
            write_basis = f"fixed by {arm.system}: per message written"
        elif ref_path is not None and ref_path.with_suffix(".calls.txt").is_file():
            keys = read_keys_file(ref_path.with_suffix(".calls.txt"))
            found, missing = caches.purposes(keys)
            shown_path = ref_path.relative_to(RESULTS_DIR.parent)
            if missing == 0:
                write_calls = found
                notes.append(f"write-side calls: as in {shown_path} (stand-ins)")
                write_basis = "as many as the offline run made"
            else:
                unknown = f"offline run found, but {missing:,} of its {len(keys):,} calls are in no cache"
                notes.append(
                    f"write-side calls: the offline run {shown_path} is found, but {missing:,} of its {len(keys):,} "
                    "calls are in no cache, so its write-side calls cannot be counted by role; not estimated"
                )
        elif ref_path is not None:
            unknown = "offline run found without its call list"
            notes.append(
                f"write-side calls: the offline run {ref_path.relative_to(RESULTS_DIR.parent)} has no call list "
                f"({ref_path.with_suffix('.calls.txt').name}); not estimated"
            )
        if write_calls is None and ref_path is None:
            notes.append(f"write-side calls: {unknown}; not estimated")
        # a role the offline run never called (full-context writes nothing) is left out
        roles = [
            write_role(role, stack, write_calls, earlier, the_slice, write_basis or unknown)
            for role in WRITE_ROLES
            if write_calls is None or write_calls.get(role, 0) > 0
        ]
        roles += [question_role(role, stack, asked, run_ks, ref_answers, earlier) for role in QUESTION_ROLES]
    finally:
        caches.close()
    run_limit, total_limit = limits_from_env()
    spent = Ledger(ledger_path(cache_dir)).total_usd()
    return Plan(arm.name, the_slice.name, stack, run_ks, roles, run_limit, total_limit, spent, notes)


def make_plans(
    arm_name: str,
    slice_name: str,
    stack_name: str,
    *,
    ks: tuple[int, ...] | None = None,
    limit: int | None = None,
    cache_dir: Path | None = None,
    runs_root: Path | None = None,
) -> list[Plan]:
    """The plan of every unit `run ARM --slice S --stack X` takes, prerequisites first, as the run planner expands
    it (bench.run.planner): for an arm that ingests the slice, its one plan (`make_plan`); for a token-matched arm,
    one per sweep and reference result its fresh run folder lacks (all of them), then its own re-answering at the
    matched k."""
    request = RunRequest(stack=stack_name, ks=ks, limit=limit)
    expansion = planner.Planner(
        request, load_arm=load_arm, load_slice=load_slice, check_token_match=planner.refuse_pooled
    )
    expansion.add(arm_name, slice_name)
    plans = []
    for unit in expansion.plan().units:
        if unit.matches_tokens:
            plans.append(_matched_plan(unit, cache_dir, runs_root))
        else:
            plans.append(
                make_plan(
                    unit.arm.name,
                    unit.the_slice.name,
                    stack_name,
                    ks=unit.ks,
                    cache_dir=cache_dir,
                    runs_root=runs_root,
                    arm=unit.arm,
                    the_slice=unit.the_slice,
                    stack=unit.stack,
                )
            )
    return plans


def _matched_plan(unit: planner.PlanUnit, cache_dir: Path | None, runs_root: Path | None) -> Plan:
    """A token-matched arm writes nothing of its own: it re-answers and re-judges its sweep's shown lines at the k
    chosen once the sweep has run, so it is priced as the sweep's question roles at its widest candidate k."""
    match = unit.arm.token_match
    assert match is not None
    sweep = load_arm(match.sweep_arm)
    widest = max(match.ks)
    priced = make_plan(
        sweep.name,
        unit.the_slice.name,
        unit.stack.name,
        ks=(widest,),
        cache_dir=cache_dir,
        runs_root=runs_root,
        arm=sweep,
        the_slice=unit.the_slice,
    )
    candidates = ",".join(str(k) for k in match.ks)
    notes = [
        f"re-answers {sweep.name}'s shown lines at the matched k (one of {candidates}, chosen after the units above "
        f"run); priced at k={widest}, the most lines",
        *(note for note in priced.notes if note.startswith("cached:")),
    ]
    roles = [r for r in priced.roles if r.role in QUESTION_ROLES]
    return Plan(
        unit.arm.name,
        unit.the_slice.name,
        unit.stack,
        unit.ks,
        roles,
        priced.run_limit_usd,
        priced.total_limit_usd,
        priced.spent_usd,
        notes,
    )


def plans_summary(plans: Sequence[Plan]) -> str:
    """One line for the units of a run together."""
    usd = math.fsum(p.usd for p in plans)
    to_send, calls = sum(p.calls_to_send for p in plans), sum(p.calls for p in plans)
    return f"estimate for all {len(plans)} units: up to ${usd:.2f} for {to_send:,} uncached of {calls:,} calls"


def estimate_for(preflight: Preflight) -> SpendEstimate | None:
    """The banner's estimate for a run on a stack that bills (None on free stacks: nothing to estimate)."""
    arm = preflight.arm_spec
    if arm is None or not preflight.stack.paid_providers:
        return None  # a grid's banner summarises many units (no one arm and slice to plan); a free stack costs $0
    if arm.token_match is not None:
        return None  # a token-matched arm re-answers its sweep's lines: its stages before it carry the estimate
    plan = make_plan(
        arm.name,
        preflight.slice_name,
        preflight.stack.name,
        ks=preflight.ks,
        cache_dir=preflight.cache_dir,
        arm=arm,
        the_slice=preflight.the_slice,
    )
    # The cached figure predicts from an earlier run's key list; it never waives the yes a spending run needs.
    return SpendEstimate(plan.usd, max(plan.calls_to_send, 1), "engram-bench plan", text=plan.one_line())


use_estimator(estimate_for)
