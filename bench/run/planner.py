"""The one run planner: what a request runs, as resolved units (arm x slice x stack x k-set x replicate, each
slice's conversations inside, holding the built arm, slice and stack and the request they run under), prerequisites
first, with where each writes; and how many model calls a run keeps in flight.

`run` and `heldout` execute a plan in order, `plan` prices it, `grid` hands its units to an executor, whose worker
runs them as they are (it never plans again). The stack an arm runs on is built here only (`stack_for`), and the
arm's k's, the `--k` override and `--limit` are read here only. Calls in flight: one knob,
the stack file's provider `concurrency`. A run answers its questions on one thread pool of this size (shared by the
conversations of a pooled slice, which run side by side), the answer side's provider clients get the same bound, and
every live call of the run takes one of its provider's slots of that size (bench.run.inflight), so `--concurrency N`
(run, grid) changes all three together. A stack that declares no concurrency keeps the harness's old six questions
at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.data.slices import Slice, SliceQuestion
from bench.errors import ConfigError
from bench.models.stacks import ProviderSettings, Stack, build_stack, check_stack_name
from bench.run.arms import Arm, ResultNeed
from bench.run.request import RunRequest

ANSWER_CONCURRENCY = 6  # the original harness answered six questions at a time; a stack without a bound keeps it


def calls_in_flight(stack: Stack, override: int | None = None) -> int:
    """`override` (--concurrency N) when given; else the smallest `concurrency` a provider of the stack's roles
    declares (the tightest provider bounds the run); else ANSWER_CONCURRENCY."""
    if override is not None:
        return override
    declared = [c for p in stack.providers if (c := stack.settings(p).concurrency) is not None]
    return min(declared) if declared else ANSWER_CONCURRENCY


def with_concurrency(stack: Stack, override: int | None) -> Callable[[str], ProviderSettings]:
    """The stack's provider settings, each provider's `concurrency` replaced by `override` when one is given."""
    if override is None:
        return stack.settings
    return lambda provider: replace(stack.settings(provider), concurrency=override)


def stack_for(stack_name: str, arm: Arm) -> Stack:
    """The stack `arm` runs on: the stack file `stack_name` with the arm's role overrides (the one place a run's
    stack is built; `plan`, `grid` and the grid's banner ask here too)."""
    return build_stack(stack_name, arm.models_for(stack_name))


# ------------------------------------------------------------------------------------------------ which questions


def is_asked(question: SliceQuestion, adversarial: bool) -> bool:
    """Whether a run asks `question`. Adversarial questions have no gold answer, only "Not mentioned"; they are
    asked only when an arm opts in (`[scoring] adversarial = true`), and then they count."""
    return question.scored or (adversarial and question.category_name == "adversarial")


def is_scored(question: SliceQuestion, checkpoint: int, final: int, adversarial: bool) -> bool:
    """The stress slice asks questions at several checkpoints; its headline is the final one, so earlier asks are
    recorded but not scored."""
    return is_asked(question, adversarial) and checkpoint == final


def asked(the_slice: Slice, adversarial: bool) -> list[tuple[SliceQuestion, int, Slice]]:
    """(question, checkpoint, conversation) for every ask a run makes, in the order the runner asks them."""
    return [
        (q, checkpoint, part)
        for part in the_slice.runs()
        for checkpoint in part.checkpoints
        for q in part.questions_at(checkpoint)
        if is_asked(q, adversarial)
    ]


def limit_questions(the_slice: Slice, limit: int, adversarial: bool) -> Slice:
    """The slice with only its first `limit` asked questions (in slice order). Each kept question is answered from
    exactly the memory the full run would have: a plain slice's ingestion stays whole, and a pooled slice keeps
    whole the parts that still ask a question. A pooled part left with none is not ingested at all, since each part
    is its own store and nothing it holds reaches another part's answers (`--limit 5` on LongMemEval's 500
    questions ingests 5 haystacks, not 500)."""
    kept = {q.id for q in [q for q in the_slice.questions if is_asked(q, adversarial)][:limit]}
    questions = tuple(q for q in the_slice.questions if q.id in kept)
    if not the_slice.parts:
        return replace(the_slice, questions=questions)
    parts = tuple(replace(p, questions=tuple(q for q in p.questions if q.id in kept)) for p in the_slice.parts)
    asking = tuple(p for p in parts if p.questions)
    return replace(the_slice, questions=questions, parts=asking, messages=tuple(m for p in asking for m in p.messages))


def refuse_pooled(arm: Arm, the_slice: Slice) -> None:
    """A token-matched arm reads one conversation's results at a time (pooling them itself where it must)."""
    if the_slice.parts:
        raise ConfigError(
            f"{arm.path}: token matching runs on one conversation at a time; slice {the_slice.name!r} pools "
            f"{len(the_slice.parts)} (run it on each part: {the_slice.parts[0].name}, ...)"
        )


# ----------------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class PlanUnit:
    """One step of a run: `arm` on a slice and stack for one replicate, answered at `ks`, written to `targets`,
    under `request` (the run's request with this unit's replicate: its run id, mode, notes, where it writes).

    An arm that ingests the slice answers every k from one ingestion, each conversation of a pooled slice on its own
    store (`conversations`, run side by side); a token-matched arm reads the results of the units in `after` (the
    files `reads` names) and answers at the one k of its `ks` that matches. `named`: asked for, rather than added
    because a unit reads it."""

    arm: Arm
    the_slice: Slice
    stack: Stack
    ks: tuple[int | None, ...]
    replicate: int = 0
    after: tuple[str, ...] = ()
    reads: tuple[ResultNeed, ...] = ()
    named: bool = True
    targets: tuple[Path, ...] = ()  # one per k (a token-matched arm: one per candidate, as any could be chosen)
    request: RunRequest = field(default_factory=RunRequest)

    @property
    def id(self) -> str:
        return unit_key(self.arm.name, self.the_slice.name, self.replicate)

    @property
    def matches_tokens(self) -> bool:
        return self.arm.token_match is not None

    @property
    def conversations(self) -> tuple[Slice, ...]:
        return self.the_slice.runs()


def unit_key(arm: str, slice_name: str, replicate: int) -> str:
    return f"{arm} on {slice_name} r{replicate}"


@dataclass(frozen=True)
class RunPlan:
    """Every unit a request takes, prerequisites first: built once, then priced (`plan`), executed in order (`run`)
    or handed to an executor unit by unit (`grid`)."""

    units: tuple[PlanUnit, ...]

    def unit(self, key: str) -> PlanUnit:
        return next(u for u in self.units if u.id == key)

    @property
    def named(self) -> tuple[PlanUnit, ...]:
        return tuple(u for u in self.units if u.named)


#: (stack, slice, arm, k, replicate) -> where that result is written (the caller's output rule)
TargetRule = Callable[[str, str, str, "int | None", int], Path]


@dataclass
class Planner:
    """Expands what was asked into units. The one place that decides which results a token-matched arm needs first,
    at which k's, and in which order; `run` and `grid` differ only in the hooks they pass:

    - `present(stack, slice, arm, k, replicate)`: a needed result already there is not planned again (`run`: the
      file exists where this run writes); None plans every need as a unit (`grid` skips finished units itself);
    - `widen`: a prerequisite answers at its arm's own k's as well as the needed ones (`grid`: one ingestion serves
      both), instead of only the needed ones that are absent (`run`);
    - `check_token_match(arm, slice)`: the caller's refusal of a slice a token-matched arm cannot read.

    `request` gives the stack, the `--k` override, `--limit` and the replicate, and every unit carries it (with the
    unit's replicate).
    """

    request: RunRequest
    load_arm: Callable[[str], Arm]
    load_slice: Callable[[str], Slice]
    check_token_match: Callable[[Arm, Slice], None]
    target: TargetRule | None = None
    present: Callable[[str, str, str, int, int], bool] | None = None
    widen: bool = False
    _units: dict[str, PlanUnit] = field(default_factory=dict)
    _arms: dict[str, Arm] = field(default_factory=dict)
    _slices: dict[str, Slice] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_stack_name(self.request.stack)

    def add(self, arm_name: str, slice_name: str, replicate: int | None = None) -> None:
        """Plan `arm_name` on `slice_name` (at the request's `--k`, else the arm's own k's) for `replicate` (else the
        request's), and whatever it reads first."""
        chosen = self.request.replicate if replicate is None else replicate
        self._add(arm_name, slice_name, chosen, self.request.ks, named=True, need_ks=(), chain=())

    def plan(self) -> RunPlan:
        return RunPlan(tuple(self._units.values()))

    def _arm(self, name: str) -> Arm:
        if name not in self._arms:
            arm = self.load_arm(name)
            if arm.import_only:
                raise ConfigError(
                    f"{arm.path}: arm {arm.name!r} is import-only (its results come from an import, e.g. import-v3); "
                    "expected an arm this harness can run"
                )
            self._arms[name] = arm
        return self._arms[name]

    def _slice(self, name: str, arm: Arm) -> Slice:
        key = f"{name}|{arm.scores_adversarial}"
        if key not in self._slices:
            the_slice = self.load_slice(name)
            if self.request.limit is not None:
                the_slice = limit_questions(the_slice, self.request.limit, arm.scores_adversarial)
            self._slices[key] = the_slice
        return self._slices[key]

    def _targets(self, stack: str, slice_name: str, arm: str, ks: Sequence[int | None], replicate: int) -> tuple:
        if self.target is None:
            return ()
        return tuple(self.target(stack, slice_name, arm, k, replicate) for k in ks)

    def _add(
        self,
        arm_name: str,
        slice_name: str,
        replicate: int,
        ks: tuple[int, ...] | None,
        *,
        named: bool,
        need_ks: tuple[int, ...],
        chain: tuple[str, ...],
    ) -> None:
        if arm_name in chain:
            raise ConfigError(
                f"token_match: arms read each other's results in a circle: {' -> '.join((*chain, arm_name))}"
            )
        arm = self._arm(arm_name)
        stack = stack_for(self.request.stack, arm)
        request = replace(self.request, replicate=replicate)
        the_slice = self._slice(slice_name, arm)
        key = unit_key(arm.name, the_slice.name, replicate)
        known = self._units.get(key)
        if arm.token_match is None:
            own: tuple[int | None, ...] = tuple(ks or arm.ks_for(slice_name) or (None,))
            if need_ks:
                own = tuple(sorted({*(k for k in own if k is not None), *need_ks})) if self.widen else need_ks
            if known is not None:  # a second reader needs more k's: one ingestion answers them all
                merged = tuple(sorted({*(k for k in known.ks if k is not None), *(k for k in own if k is not None)}))
                wider = merged if len(merged) > len([k for k in known.ks if k is not None]) else known.ks
                own = wider
                named = named or known.named
            targets = self._targets(stack.name, the_slice.name, arm.name, own, replicate)
            self._units[key] = PlanUnit(
                arm, the_slice, stack, own, replicate, named=named, targets=targets, request=request
            )
            return
        if known is not None:
            return
        self.check_token_match(arm, the_slice)
        missing: dict[tuple[str, str], tuple[int, ...]] = {}
        after: list[str] = []
        reads: list[ResultNeed] = []
        for need in arm.needs(the_slice.name):
            wanted = [
                k
                for k in need.ks
                if self.present is None or not self.present(stack.name, need.slice_name, need.arm, k, replicate)
            ]
            reads.append(need)
            after.append(unit_key(need.arm, need.slice_name, replicate))
            if wanted or self.present is None:
                pair = (need.arm, need.slice_name)
                missing[pair] = tuple(sorted({*missing.get(pair, ()), *wanted}))
        for (need_arm, need_slice), need_ks_of in missing.items():
            self._add(need_arm, need_slice, replicate, None, named=False, need_ks=need_ks_of, chain=(*chain, arm.name))
        planned = [a for a in dict.fromkeys(after) if a in self._units]
        targets = self._targets(stack.name, the_slice.name, arm.name, arm.token_match.ks, replicate)
        self._units[key] = PlanUnit(
            arm,
            the_slice,
            stack,
            tuple(arm.token_match.ks),
            replicate,
            after=tuple(planned),
            reads=tuple(reads),
            named=named,
            targets=targets,
            request=request,
        )
