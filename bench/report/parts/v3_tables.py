"""The registered tables of the v3 paper ("When Does Selection Replace Extraction?") from ``results/v3/``.

Every figure is computed here from the imported per-question files (LoCoMo held-out conversations conv-44/47/48/49/50,
778 scored questions, pooled per arm and k) or, where the per-question data does not exist, from the aggregate inputs
the import copied beside them (``supplementary/``): the LongMemEval tests S5-S7 and the write-cost totals. Numbers
computed from aggregate inputs say so in their note and in the tables.

- Token matching: for each comparator at k = 3, T0R's k is the one of its sweep whose pooled mean retrieved tokens is
  closest (``bench.analysis.stats.token_matched_k``); T0R enters each comparison at that k.
- Table 1: T0R at the k matched to engram v2 k=3, paired non-inferiority with a 5-point margin, and the write-cost
  ratio.
- Table 2: the declared family S1-S7: S1-S3 and S5-S7 two-sided exact McNemar, S4 the one-sided non-inferiority test
  of T0R against T0R-LLM; Holm's adjustment over all seven.
- Table 3: accuracy at the tight budget (k = 3) and at each system's generous budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.analysis.pairing import Pairing
from bench.analysis.stats import (
    DEFAULT_MARGIN,
    DeclaredFamily,
    NonInferiority,
    comparison_seed,
    holm,
    mcnemar_exact_p,
    token_matched_k,
)
from bench.errors import ResultError
from bench.report.catalog import TABLES, PaperContext
from bench.report.heldout import register_accuracy_interval
from bench.report.inputs import Loaded, ResultSet
from bench.report.numbers import Numbers, SourceFile
from bench.report.tables import Table, TableBuilder

STACK_DIR = "v3"
ARTICLE_NUMBERS = "article_numbers_v3.tsv"
LONGMEMEVAL = "longmemeval_tests.json"
WRITE_COSTS = "write_costs.json"
BOOTSTRAP_DRAWS = 10_000
T0R = "turns-rerank"
FAMILY = DeclaredFamily("v3 paper S1-S7", ("S1", "S2", "S3", "S4", "S5", "S6", "S7"))
AGGREGATE_NOTE = "aggregate input (results/v3/supplementary/{name}): no per-question data exists here"


@dataclass(frozen=True)
class PaperSystem:
    """A system as the paper names it (id segment and table label) and the arm its files carry."""

    key: str
    label: str
    arm: str


SYSTEMS = {
    s.key: s
    for s in (
        PaperSystem("T0R", "T0R (raw turns, Jev rerank)", T0R),
        PaperSystem("L0", "L0 (raw turns, cosine)", "turns-cosine"),
        PaperSystem("T0R-LLM", "T0R-LLM (gpt-4o-mini rerank)", "turns-llm-rerank"),
        PaperSystem("engram_v2", "engram v2", "engram-v2"),
        PaperSystem("mem0", "mem0 2.1.0", "mem0"),
        PaperSystem("Jev-Mem", "Jev-Mem", "jev-mem"),
        PaperSystem("full_context", "full context", "full-context"),
    )
}
TIGHT = (("L0", 3), ("T0R", 3), ("T0R-LLM", 3), ("engram_v2", 3), ("mem0", 3), ("Jev-Mem", 3))
GENEROUS = (("engram_v2", 20), ("Jev-Mem", 40), ("mem0", 20), ("full_context", None), ("T0R", 20))
# turns-cosine (L0) at the budgets besides the tight one that the imported files hold
COSINE_KS = (6, 20)
# The LoCoMo members of the family: (test, comparator at k=3, non-inferiority?).
LOCOMO_TESTS = (("S1", "L0", False), ("S2", "Jev-Mem", False), ("S3", "mem0", False), ("S4", "T0R-LLM", True))
LONGMEMEVAL_TESTS = ("S5", "S6", "S7")


@dataclass(frozen=True)
class Pooled:
    """One (arm, k) pooled over the held-out conversations: correctness, conversation and tokens per question."""

    system: PaperSystem
    k: int | None
    files: list[Loaded]
    frame: pd.DataFrame  # index question_id; columns conversation, correct, tokens

    @property
    def name(self) -> str:
        return f"{self.system.arm}-k{self.k}" if self.k is not None else self.system.arm

    @property
    def sources(self) -> list[SourceFile]:
        return [f.source for f in self.files]

    @property
    def correct(self) -> pd.Series:
        return self.frame["correct"].rename(self.name)

    @property
    def accuracy(self) -> float:
        return float(self.frame["correct"].mean())

    @property
    def tokens(self) -> float:
        return float(self.frame["tokens"].mean())


def pooled(rs: ResultSet, system: PaperSystem, k: int | None) -> Pooled:
    files = rs.heldout(system.arm, k)
    if not files:
        name = f"{system.arm}__k{k}.json" if k is not None else f"{system.arm}.json"
        raise ResultError(f"{rs.root}/heldout: expected {name} for every held-out conversation, found none")
    rows = [
        {
            "question_id": a.question_id,
            "conversation": a.conversation,
            "correct": int(a.correct),
            "tokens": a.retrieved_tokens,
        }
        for f in files
        for a in f.result.scored_answers()
    ]
    frame = pd.DataFrame.from_records(rows).set_index("question_id").sort_index()
    if frame["tokens"].isna().any():
        raise ResultError(f"{rs.root}/heldout: {system.arm} k={k}: expected retrieved_tokens on every answer")
    return Pooled(system, k, files, frame)


class V3Numbers:
    """Registers the v3 ids: the article's own (``t1.*``, ``t2.*``, ``t3.*``) and supporting ones (``v3.*``)."""

    def __init__(self, rs: ResultSet, numbers: Numbers) -> None:
        self.rs = rs
        self.numbers = numbers
        self._pooled: dict[tuple[str, int | None], Pooled] = {}

    def get(self, key: str, k: int | None) -> Pooled:
        if (key, k) not in self._pooled:
            self._pooled[(key, k)] = pooled(self.rs, SYSTEMS[key], k)
        return self._pooled[(key, k)]

    def add(self, number_id: str, value: Any, kind: str, sources: list[SourceFile], note: str | None = None) -> None:
        self.numbers.add(number_id, value, kind, sources, note=note)

    def system_row(self, stem: str, p: Pooled) -> None:
        self.add(f"{stem}.accuracy", p.accuracy, "pct_bare", p.sources)
        self.add(f"{stem}.tokens", p.tokens, "round_int", p.sources)
        self.add(f"{stem}.n", len(p.frame), "int", p.sources)

    def t0r_sweep(self) -> dict[int, Pooled]:
        ks = sorted(k for (_, arm, k) in self.rs.results if arm == T0R and k is not None)
        return {k: self.get("T0R", k) for k in dict.fromkeys(ks)}

    def matched(self, comparator: Pooled) -> Pooled:
        """T0R at the k whose pooled mean tokens is closest to the comparator's; the match is registered."""
        sweep = self.t0r_sweep()
        match = token_matched_k({k: p.tokens for k, p in sweep.items()}, comparator.tokens)
        sources = [s for p in sweep.values() for s in p.sources] + comparator.sources
        self.add(f"v3.token_match.{comparator.name}.t0r_k", match.k, "int", sources)
        return sweep[match.k]


def pairing(a: Pooled, b: Pooled) -> Pairing:
    """A's and B's judge labels joined by question id (a question one side lacks is refused)."""
    return Pairing.join(a.correct, b.correct, a.frame["conversation"])


def _noninferiority(a: Pooled, b: Pooled) -> NonInferiority:
    return pairing(a, b).noninferiority(
        margin=DEFAULT_MARGIN, draws=BOOTSTRAP_DRAWS, seed=comparison_seed(f"v3 {a.name} vs {b.name}")
    )


def _register_noninferiority(reg: V3Numbers, stem: str, test: NonInferiority, sources: list[SourceFile]) -> None:
    reg.add(f"{stem}.diff", test.mean_difference, "pp", sources)
    reg.add(f"{stem}.bound", test.lower_bound, "pp", sources, note="one-sided 95%: mean d − 1.645·sd(d)/√n")
    reg.add(f"{stem}.margin", test.margin, "pp", sources)
    reg.add(f"{stem}.p_one_sided", test.p_one_sided, "p_short", sources)
    bound = test.conversation_bound
    if bound is not None:
        reg.add(
            f"{stem}.bootstrap_p5",
            bound.p5,
            "pp",
            sources,
            note=f"5th percentile of the conversation bootstrap (G={bound.clusters}, {bound.draws:,} draws, "
            f"seed {bound.seed})",
        )


def _register_pair(reg: V3Numbers, stem: str, a: Pooled, b: Pooled) -> list[SourceFile]:
    sources = a.sources + b.sources
    table = pairing(a, b).discordance()
    reg.add(f"{stem}.n", table.n, "int", sources)
    reg.add(f"{stem}.only_a", table.only_a, "int", sources)
    reg.add(f"{stem}.only_b", table.only_b, "int", sources)
    reg.add(f"{stem}.a_k", a.k, "int", a.sources)
    return sources


def register_table1(reg: V3Numbers) -> list[SourceFile]:
    engram = reg.get("engram_v2", 3)
    t0r = reg.matched(engram)
    sources = t0r.sources + engram.sources
    reg.add(f"t1.t0r_k{t0r.k}.accuracy", t0r.accuracy, "pct_bare", t0r.sources)
    reg.add(f"t1.t0r_k{t0r.k}.tokens", t0r.tokens, "round_int", t0r.sources)
    reg.add("t1.engram_v2_k3.accuracy", engram.accuracy, "pct_bare", engram.sources)
    reg.add("t1.engram_v2_k3.tokens", engram.tokens, "round_int", engram.sources)
    _register_pair(reg, "v3.H1", t0r, engram)
    test = _noninferiority(t0r, engram)
    reg.add("t1.judge.diff", test.mean_difference, "pp", sources)
    reg.add("t1.judge.bound", test.lower_bound, "pp", sources, note="one-sided 95%: mean d − 1.645·sd(d)/√n")
    reg.add("v3.H1.se", test.se, "pct_bare", sources, note="standard error of H1's paired difference, points: sd(d)/√n")
    _register_noninferiority(reg, "v3.H1", test, sources)
    source, costs = reg.rs.supplementary(WRITE_COSTS)
    per_1k = _write_costs(costs, source.path)
    note = AGGREGATE_NOTE.format(name=WRITE_COSTS)
    for arm, total in per_1k.items():
        reg.add(f"v3.write_cost_per_1k.{arm}", total, "usd6", [source], note=note)
    reg.add("t1.write_cost_ratio", per_1k["engram-v2"] / per_1k[T0R], "round_int", [source], note=note)
    return sources


def _write_costs(raw: Any, where: str) -> dict[str, float]:
    """Total USD per 1,000 turns for T0R and engram v2: the sum of each one's recorded components."""
    try:
        by_arm = raw["write_cost_per_1k"]
        totals = {arm: float(sum(by_arm[arm].values())) for arm in (T0R, "engram-v2")}
    except (KeyError, TypeError, AttributeError) as exc:
        raise ResultError(
            f"{where}: expected write_cost_per_1k with component costs for {T0R} and engram-v2; found {exc!r}"
        ) from None
    if totals[T0R] <= 0:
        raise ResultError(f"{where}: expected a positive write cost for {T0R}, found {totals[T0R]}")
    return totals


def _longmemeval(reg: V3Numbers) -> dict[str, float]:
    source, raw = reg.rs.supplementary(LONGMEMEVAL)
    note = AGGREGATE_NOTE.format(name=LONGMEMEVAL)
    p_values = {}
    for test in LONGMEMEVAL_TESTS:
        entry: Any = raw.get(test) if isinstance(raw, dict) else None  # not an object: refused just below
        try:
            n, acc_a, acc_b = int(entry["questions"]), float(entry["acc_a"]), float(entry["acc_b"])
            only_a, only_b = int(entry["only_a"]), int(entry["only_b"])
        except (KeyError, TypeError, ValueError):
            raise ResultError(
                f"{source.path}: field {test}: expected questions, acc_a, acc_b, only_a, only_b; found {entry!r}"
            ) from None
        # The paired table ties the aggregates together: acc_a − acc_b = (only_a − only_b)/n.
        if abs((acc_a - acc_b) - (only_a - only_b) / n) > 1e-9:
            raise ResultError(
                f"{source.path}: field {test}: expected acc_a − acc_b = (only_a − only_b)/questions, found "
                f"{acc_a - acc_b!r} against {(only_a - only_b) / n!r}"
            )
        reg.add(f"t2.{test}.a", acc_a, "pct_bare", [source], note=note)
        reg.add(f"t2.{test}.b", acc_b, "pct_bare", [source], note=note)
        for field, value in (("n", n), ("only_a", only_a), ("only_b", only_b)):
            reg.add(f"v3.{test}.{field}", value, "int", [source], note=note)
        p_values[test] = mcnemar_exact_p(only_a, only_b)
        reg.add(f"v3.{test}.p", p_values[test], "p_short", [source], note=note)
    return p_values


def register_table2(reg: V3Numbers) -> dict[str, list[SourceFile]]:
    p_values: dict[str, float] = {}
    sources: dict[str, list[SourceFile]] = {}
    for test, key, non_inferiority in LOCOMO_TESTS:
        comparator = reg.get(key, 3)
        t0r = reg.matched(comparator)
        sources[test] = _register_pair(reg, f"v3.{test}", t0r, comparator)
        reg.add(f"t2.{test}.a", t0r.accuracy, "pct_bare", t0r.sources)
        reg.add(f"t2.{test}.b", comparator.accuracy, "pct_bare", comparator.sources)
        if non_inferiority:
            ni = _noninferiority(t0r, comparator)
            reg.add(f"t2.{test}.bound", ni.lower_bound, "pp", sources[test], note="one-sided 95% lower bound")
            _register_noninferiority(reg, f"v3.{test}", ni, sources[test])
            p_values[test] = ni.p_one_sided
        else:
            p_values[test] = pairing(t0r, comparator).mcnemar_p()
            reg.add(f"v3.{test}.p", p_values[test], "p_short", sources[test])
    p_values.update(_longmemeval(reg))
    lme_source = reg.rs.supplementary(LONGMEMEVAL)[0]
    family_sources = [s for test in sources.values() for s in test] + [lme_source]
    for test, adjusted in holm(FAMILY, p_values).items():
        reg.add(
            f"t2.{test}.holm_p",
            adjusted.adjusted,
            "p_short",
            family_sources,
            note=f"Holm over {', '.join(FAMILY.members)}; raw p {adjusted.p:.3g}",
        )
    return sources


def register_table3(reg: V3Numbers) -> None:
    for budget, rows in (("tight", TIGHT), ("generous", GENEROUS)):
        for key, k in rows:
            p = reg.get(key, k)
            reg.add(f"t3.{budget}.{key}", p.accuracy, "pct_bare", p.sources)
            # the figure's interval: the one every accuracy of the v1 paper gets (Wilson 95%)
            register_accuracy_interval(f"v3.{budget}.{key}", p.frame["correct"], p.sources, reg.numbers)
            reg.add(f"v3.{budget}.{key}.tokens", p.tokens, "round_int", p.sources)
            reg.add(f"v3.{budget}.{key}.k", k, "int", p.sources)
    full = reg.get("full_context", None)
    reg.add("t3.generous.full_context.tokens", full.tokens, "round_int", full.sources)
    # Raw turns by cosine alone beyond k=3: how far a bigger budget takes L0 without a rerank (the files exist).
    for k in COSINE_KS:
        cosine = reg.get("L0", k)
        reg.add(f"v3.L0.k{k}.accuracy", cosine.accuracy, "pct_bare", cosine.sources)
        reg.add(f"v3.L0.k{k}.tokens", cosine.tokens, "round_int", cosine.sources)


# ------------------------------------------------------------------------------------------------------ tables


def _questions(numbers: Numbers) -> str:
    """How many held-out questions the tables pool (778 as published; fewer under `paper build --gold
    audited-exclude` or `--categories`): H1's paired n."""
    return f"{int(numbers['v3.H1.n'].value):,}"


def table1(numbers: Numbers, label: str, k: int) -> Table:
    b = TableBuilder(
        numbers,
        "v3_table1",
        "Table 1: selection (T0R) against extraction (engram v2) at matched retrieved tokens, "
        f"{_questions(numbers)} LoCoMo "
        "held-out questions",
        label,
        ["system", "k", "judge accuracy %", "mean retrieved tokens"],
    )
    b.row(SYSTEMS["T0R"].label, str(k), b.num(f"t1.t0r_k{k}.accuracy"), b.num(f"t1.t0r_k{k}.tokens"))
    b.row(SYSTEMS["engram_v2"].label, "3", b.num("t1.engram_v2_k3.accuracy"), b.num("t1.engram_v2_k3.tokens"))
    b.note(
        f"T0R minus engram v2: {b.num('t1.judge.diff')} points; one-sided 95% lower bound {b.num('t1.judge.bound')} "
        f"against a non-inferiority margin of {b.num('v3.H1.margin')} (conversation-bootstrap 5th percentile "
        f"{b.num('v3.H1.bootstrap_p5')}); T0R's k is the one whose mean tokens is closest to engram v2 k=3."
    )
    b.note(
        f"Write cost per 1,000 turns, engram v2 over T0R: {b.num('t1.write_cost_ratio')}× "
        f"({b.num('v3.write_cost_per_1k.engram-v2')} against {b.num('v3.write_cost_per_1k.turns-rerank')}; "
        "aggregate input: the recorded write-cost totals, not recomputed here)."
    )
    return b.table


def table2(numbers: Numbers, label: str) -> Table:
    b = TableBuilder(
        numbers,
        "v3_table2",
        "Table 2: the declared family of paired tests S1-S7, Holm-adjusted",
        label,
        ["test", "data", "A", "B", "questions", "A %", "B %", "A only", "B only", "bound", "Holm p"],
    )
    names = {"S1": "L0 k=3", "S2": "Jev-Mem k=3", "S3": "mem0 k=3", "S4": "T0R-LLM k=3"}
    lme = {"S5": ("T0R k=2", "mem0 k=3"), "S6": ("T0R k=3", "L0 k=3"), "S7": ("T0R k=3", "L0 k=3")}
    for test in FAMILY.members:
        if test in names:
            data, side_a, side_b = "LoCoMo", f"T0R k={b.num(f'v3.{test}.a_k')}", names[test]
        else:
            data, (side_a, side_b) = "LongMemEval (aggregate input)", lme[test]
        b.row(
            test,
            data,
            side_a,
            side_b,
            b.num(f"v3.{test}.n"),
            b.num(f"t2.{test}.a"),
            b.num(f"t2.{test}.b"),
            b.num(f"v3.{test}.only_a"),
            b.num(f"v3.{test}.only_b"),
            b.num_or_dash(f"t2.{test}.bound"),
            b.num(f"t2.{test}.holm_p"),
        )
    b.note(
        "S1-S3 and S5-S7: two-sided exact McNemar on the discordant questions. S4: one-sided non-inferiority of T0R "
        "against T0R-LLM with a 5-point margin (bound: mean d − 1.645·se). Holm's step-down adjustment over all seven."
    )
    b.note(
        "S5-S7 are LongMemEval tests reported from aggregate inputs (accuracies and discordant counts, "
        "results/v3/supplementary/longmemeval_tests.json); the LongMemEval questions are not available here."
    )
    return b.table


def table3(numbers: Numbers, label: str) -> Table:
    b = TableBuilder(
        numbers,
        "v3_table3",
        "Table 3: judge accuracy at a tight and a generous retrieval budget, "
        f"{_questions(numbers)} LoCoMo held-out questions",
        label,
        ["budget", "system", "k", "mean retrieved tokens", "judge accuracy %"],
    )
    for budget, rows in (("tight", TIGHT), ("generous", GENEROUS)):
        for key, k in rows:
            b.row(
                budget,
                SYSTEMS[key].label,
                b.num(f"v3.{budget}.{key}.k") if k is not None else "all turns",
                b.num(f"v3.{budget}.{key}.tokens"),
                b.num(f"t3.{budget}.{key}"),
            )
    b.note(f"Full context: the whole conversation, {b.num('t3.generous.full_context.tokens')} tokens per question.")
    return b.table


def _shared(ctx: PaperContext) -> V3Numbers:
    """The v3 registrar of this build: every v3 table pools each (arm, k) once, through the same one."""
    reg = ctx.state.get("v3")
    if not isinstance(reg, V3Numbers):
        reg = ctx.state["v3"] = V3Numbers(ctx.results, ctx.numbers)
    return reg


@TABLES.register("v3_table1")
def v3_table1(ctx: PaperContext) -> list[Table]:
    """Table 1: T0R against engram v2 at matched tokens (non-inferiority), and the write-cost ratio."""
    reg = _shared(ctx)
    register_table1(reg)
    k = int(reg.numbers[f"v3.token_match.{reg.get('engram_v2', 3).name}.t0r_k"].value)
    return [table1(reg.numbers, ctx.results.label, k)]


@TABLES.register("v3_table2")
def v3_table2(ctx: PaperContext) -> list[Table]:
    """Table 2: the declared family S1-S7, Holm-adjusted."""
    reg = _shared(ctx)
    register_table2(reg)
    return [table2(reg.numbers, ctx.results.label)]


@TABLES.register("v3_table3")
def v3_table3(ctx: PaperContext) -> list[Table]:
    """Table 3: accuracy at a tight and a generous budget (cites Table 1's paired n)."""
    reg = _shared(ctx)
    register_table3(reg)
    return [table3(reg.numbers, ctx.results.label)]
