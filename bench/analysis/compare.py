"""The paired comparison of result sets, question by question (behind `engram-bench compare A B [C ...]`).

A result set is one result file, a directory (every result file under it) or a glob (quote it), pooled by question
id: e.g. the four held-out conversation files of one arm. The first set is compared with each of the others. Only
scored questions count unless `--all` is given (adversarial questions are unscored in the article's tables).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench.analysis import longmemeval
from bench.analysis.categories import CATEGORY_NUMBERING, keep_categories, numbered_by_locomo
from bench.analysis.coverage import partial_note
from bench.analysis.gold import gold_line, under_gold
from bench.analysis.pairing import Pairing
from bench.analysis.parity import budget_lines, context_lines
from bench.analysis.stats import (
    ACCURACY_INTERVAL_NAME,
    DIFFERENCE_INTERVAL_METHOD,
    SMALL_GROUP_N,
    PairedComparison,
    accuracy_interval,
    paired_seed,
)
from bench.data.audit import OFFICIAL, Errata
from bench.errors import ResultError
from bench.models.provider import shown_model
from bench.results.schema import Result, read_result, result_files
from bench.systems.base import roles_used
from bench.vocab import ingested_data

# The first line of every text report: which way round the difference is, and its unit.
SIGN_CONVENTION = "Δ = A − B, in percentage points (positive: A answered more of the paired questions correctly)"


@dataclass(frozen=True)
class ComparisonSide:
    """One side of a comparison: the files it pooled and their answers, one row per question id."""

    spec: str
    files: tuple[Path, ...]
    results: tuple[Result, ...]
    answers: pd.DataFrame  # index question_id; columns conversation, category, scored, correct, retrieved_tokens
    # `run --replicates N`: every replicate's result files by replicate index (the paired figures use the first
    # replicate's answers); empty for a set without replicates
    replicates: dict[int, tuple[Result, ...]] = field(default_factory=dict)
    # `--gold`: the gold the answers are seen under (bench.analysis.gold); `--categories`: the categories kept
    gold: str = OFFICIAL
    categories: frozenset[str] | None = None

    @property
    def first(self) -> Result:
        return self.results[0]

    @property
    def label(self) -> str:
        k = f" k={self.first.k}" if self.first.k is not None else ""
        return f"{self.first.arm}{k} [{self.first.stack}]"

    @property
    def slices(self) -> list[str]:
        return sorted({r.slice for r in self.results})

    def correct(self, include_unscored: bool) -> pd.Series:
        rows = self.answers if include_unscored else self.answers[self.answers["scored"]]
        return rows["correct"]


def load_result_set(
    spec: str, gold: str = OFFICIAL, categories: frozenset[str] | None = None, errata: Errata | None = None
) -> ComparisonSide:
    """Read and pool the result files a spec names, refusing a set that mixes arms, k or stacks, or answers a
    question twice; each result seen under `gold` (errata: the shipped audit's unless given) and restricted to
    `categories` (None: all)."""
    files = result_files(spec)
    results = tuple(keep_categories(under_gold(read_result(f), gold, errata), categories) for f in files)
    return _pooled_side(spec, files, results, gold, categories)


def load_sweep(
    spec: str, gold: str = OFFICIAL, categories: frozenset[str] | None = None, errata: Errata | None = None
) -> list[ComparisonSide]:
    """A k-sweep (`compare --match-tokens`): the result files a spec names, one side per k."""
    files = result_files(spec)
    results = [keep_categories(under_gold(read_result(f), gold, errata), categories) for f in files]
    by_k: dict[int | None, list[int]] = {}
    for i, result in enumerate(results):
        by_k.setdefault(result.k, []).append(i)
    return [
        _pooled_side(f"{spec} (k={k})", [files[i] for i in rows], tuple(results[i] for i in rows), gold, categories)
        for k, rows in sorted(by_k.items(), key=lambda item: (item[0] is None, item[0] or 0))
    ]


def _pooled_side(
    spec: str, files: list[Path], results: tuple[Result, ...], gold: str, categories: frozenset[str] | None
) -> ComparisonSide:
    replicates = replicate_groups(results)
    if replicates:  # the paired comparison pools the first replicate; the others give the spread
        first = min(replicates)
        kept = [(f, r) for f, r in zip(files, results, strict=True) if (replicate_index(r) or 0) == first]
        files, results = [f for f, _ in kept], tuple(r for _, r in kept)
    identities = {(r.arm, r.k, r.stack) for r in results}
    if len(identities) > 1:
        shown = " and ".join(f"{arm} k={k} [{stack}]" for arm, k, stack in sorted(identities, key=str)[:2])
        raise ResultError(f"{spec}: expected one arm, k and stack per result set, found {shown}")
    rows: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for path, result in zip(files, results, strict=True):
        for answer in result.answers:
            if answer.question_id in seen:
                raise ResultError(
                    f"{spec}: expected each question once, found {answer.question_id!r} in both "
                    f"{seen[answer.question_id]} and {path}"
                )
            seen[answer.question_id] = path
            rows.append(
                {
                    "question_id": answer.question_id,
                    "conversation": answer.conversation,
                    "category": answer.category,
                    "scored": answer.scored,
                    "correct": answer.correct,
                    "retrieved_tokens": answer.retrieved_tokens,
                }
            )
    if not rows:
        raise ResultError(f"{spec}: expected answers to compare, found result file(s) with no answers")
    answers = pd.DataFrame(rows).set_index("question_id").sort_index()
    return ComparisonSide(
        spec=spec,
        files=tuple(files),
        results=results,
        answers=answers,
        replicates=replicates,
        gold=gold,
        categories=categories,
    )


def replicate_index(result: Result) -> int | None:
    """The replicate a result is: `extras.replicate` (replicate i > 0 of a run or grid), 0 for the first replicate
    of a `run --replicates N` (`extras.replicates`), None for a plain result."""
    replicate = result.extras.get("replicate")
    if isinstance(replicate, int) and not isinstance(replicate, bool):
        return replicate
    return 0 if "replicates" in result.extras else None


def replicate_groups(results: tuple[Result, ...]) -> dict[int, tuple[Result, ...]]:
    """Results by replicate index; empty when none is a replicate. In a set holding replicates, a plain result is
    replicate 0 (a grid writes its first replicate as a plain run). Replicates must hold the same questions."""
    indices = [replicate_index(r) for r in results]
    if all(i is None for i in indices):
        return {}
    groups: dict[int, list[Result]] = {}
    for index, result in zip(indices, results, strict=True):
        groups.setdefault(index or 0, []).append(result)
    questions = {i: sorted(a.question_id for r in g for a in r.answers) for i, g in groups.items()}
    first = min(questions)
    for i, ids in sorted(questions.items()):
        if ids != questions[first]:
            raise ResultError(f"replicate r{i}: expected the same questions as r{first}, found a different set")
    return {i: tuple(g) for i, g in sorted(groups.items())}


def replicate_accuracies(side: ComparisonSide, include_unscored: bool) -> list[float]:
    """Accuracy of each replicate of a side (scored questions unless include_unscored)."""
    out = []
    for group in side.replicates.values():
        answers = [a for r in group for a in r.answers if a.scored or include_unscored]
        out.append(sum(a.correct for a in answers) / len(answers) if answers else float("nan"))
    return out


def _replicate_line(name: str, side: ComparisonSide, include_unscored: bool) -> list[str]:
    values = replicate_accuracies(side, include_unscored)
    if not values:
        return []
    spread = pd.Series(values, dtype=float)
    sd = float(spread.std(ddof=1)) if len(values) > 1 else 0.0
    return [
        f"   {name} over {len(values)} replicates: accuracy mean {100 * spread.mean():.1f}% ± {100 * sd:.1f} (sd), "
        f"min {100 * spread.min():.1f}%, max {100 * spread.max():.1f}% (paired figures: replicate r{min(side.replicates)})"
    ]


def same_model(x: str, y: str) -> bool:
    """Whether two results name the same model for a role. Imported files may leave the provider out
    (`extractive-answerer-standin-v1` for `offline/extractive-answerer-standin-v1`): the model then decides."""
    if x == y:
        return True
    if "/" in x and "/" in y:
        return False  # two providers named: a different provider serving the same model id is another model
    return x.split("/", 1)[-1] == y.split("/", 1)[-1]


def _used(result: Result) -> set[str]:
    """The roles a result's run called; every role it records when its system does not say."""
    try:
        used = roles_used(result.system, result.settings)
    except ImportError:  # the analysis-only install: finding a system imports the run layer's packages
        used = None
    return set(result.models) | set(result.standins) if used is None else set(used)


def _used_by_both(a: Result, b: Result) -> set[str]:
    """Only a role both runs called can make them differ: mem0 never decides, raw-turn-rag never extracts, and the
    model a stack names for a role nobody called says nothing about either result."""
    return _used(a) & _used(b)


def models_line(a: ComparisonSide, b: ComparisonSide) -> str:
    """Whether the models of the roles both runs call are the same, said either way (a warning says which differ)."""
    roles = sorted(set(a.first.models) & set(b.first.models) & _used_by_both(a.first, b.first))
    if not roles:
        return "models: no role both runs call records a model"
    same = all(same_model(a.first.models[r], b.first.models[r]) for r in roles)
    return f"models: {'the same' if same else 'NOT the same'} in every role both call ({', '.join(roles)})"


def stack_warnings(a: ComparisonSide, b: ComparisonSide) -> list[str]:
    """What makes the two sides not like-for-like: a different stack, different models, offline stand-ins."""
    warnings = []
    if a.first.stack != b.first.stack:
        warnings.append(
            f"STACKS DIFFER: A runs on '{a.first.stack}', B on '{b.first.stack}'; the difference mixes the systems "
            "with their model stacks"
        )
    used = _used_by_both(a.first, b.first)
    roles = sorted(set(a.first.models) & set(b.first.models) & used)
    differing = [
        f"{role}: {shown_model(a.first.models[role])} vs {shown_model(b.first.models[role])}"
        for role in roles
        if not same_model(a.first.models[role], b.first.models[role])
    ]
    if differing:
        warnings.append("MODELS DIFFER: " + "; ".join(differing))
    standins_a, standins_b = sorted(set(a.first.standins) & used), sorted(set(b.first.standins) & used)
    if standins_a != standins_b:
        warnings.append(f"STAND-INS DIFFER: A {standins_a or 'none'}, B {standins_b or 'none'}")
    if {ingested_data(s) for s in a.slices} != {ingested_data(s) for s in b.slices}:
        warnings.append(
            f"DATA DIFFERS: A ingested {', '.join(a.slices)}, B ingested {', '.join(b.slices)}; the same question "
            "was answered from different conversations, so the difference mixes the systems with their inputs"
        )
    return warnings


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _p(value: float) -> str:
    return f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def _describe_side(name: str, side: ComparisonSide, correct: pd.Series) -> list[str]:
    first = side.first
    interval = accuracy_interval(int(correct.sum()), int(correct.size)).points()
    tokens = side.answers.loc[correct.index, "retrieved_tokens"].dropna()
    token_text = f", {tokens.mean():.0f} retrieved tokens/q" if len(tokens) else ""
    used = _used(first)
    shown = [f"{role}={shown_model(model)}" for role, model in sorted(first.models.items()) if role in used]
    models = ", ".join(shown) or "none recorded"
    standins = ", ".join(role for role in first.standins if role in used) or "none"
    return [
        f"{name}: {side.label}  ({len(side.files)} file{'s' if len(side.files) != 1 else ''}; "
        f"slices {', '.join(side.slices)})",
        f"   accuracy {int(correct.sum())}/{correct.size} = {interval.estimate:.1f}% "
        f"({ACCURACY_INTERVAL_NAME} [{interval.low:.1f}, {interval.high:.1f}]){token_text}{partial_note(side.results)}",
        f"   stack {first.stack}; system {first.system}; models {models}; offline stand-ins: {standins}",
    ]


def _group_note(row: pd.Series) -> str:
    notes = [f"n < {SMALL_GROUP_N}: too few"] if row["n"] < SMALL_GROUP_N else []
    return "; ".join(notes + (["clipped"] if row["clipped"] else []))


def _group_table(table: pd.DataFrame, title: str) -> list[str]:
    shown = pd.DataFrame(
        {
            title: table["group"],
            "n": table["n"],
            "A %": (100 * table["accuracy_a"]).round(1),
            "B %": (100 * table["accuracy_b"]).round(1),
            "Δ": table["delta"].map(_points),
            "95% CI": [f"[{_points(lo)}, {_points(hi)}]" for lo, hi in zip(table["ci_low"], table["ci_high"])],
            "A only": table["only_a"],
            "B only": table["only_b"],
            "McNemar p": table["mcnemar_p"].map(_p),
            "note": [_group_note(row) for _, row in table.iterrows()],
        }
    )
    lines = shown.to_string(index=False).splitlines()
    if (table["n"] < SMALL_GROUP_N).any():
        lines.append(
            f"   (n < {SMALL_GROUP_N}: the interval of so few questions says little; it is clipped to the possible "
            "range −100..+100 and a group whose differences are all equal has a zero-width interval)"
        )
    return lines


def comparison_report(
    a: ComparisonSide, b: ComparisonSide, include_unscored: bool, draws: int, seed: int | None
) -> dict:
    """Compute the comparison of A with B: overall figures plus per-category and per-conversation tables."""
    pairing = Pairing.join(
        a.correct(include_unscored).rename(f"A ({a.label})"),
        b.correct(include_unscored).rename(f"B ({b.label})"),
        a.answers["conversation"],
    )
    side_a, side_b = pairing.a, pairing.b
    used_seed = paired_seed(a.first.arm, a.first.k, b.first.arm, b.first.k) if seed is None else seed
    overall = pairing.judged(draws=draws, seed=used_seed)
    budget, budget_warnings = budget_lines(a, b, list(side_a.index))
    gold = [gold_line(a.gold, [*a.results, *b.results])]
    return {
        "a": a,
        "b": b,
        "correct_a": side_a,
        "correct_b": side_b,
        "overall": overall,
        "seed": used_seed,
        "by_category": pairing.judged_by(a.answers["category"]),
        "by_conversation": pairing.judged_by(a.answers["conversation"]),
        "warnings": stack_warnings(a, b) + budget_warnings,
        "include_unscored": include_unscored,
        "context": [
            models_line(a, b),
            *context_lines(a, b, gold),
            *budget,
            *longmemeval.compare_lines([("A", a.results), ("B", b.results)]),
        ],
    }


def render_report(report: dict) -> str:
    overall: PairedComparison = report["overall"]
    diff = overall.difference
    lines = [SIGN_CONVENTION]
    lines += [f"!! {w}" for w in report["warnings"]]
    lines += _describe_side("A", report["a"], report["correct_a"])
    lines += _describe_side("B", report["b"], report["correct_b"])
    lines += report.get("context", [])
    unscored = bool(report.get("include_unscored", False))
    lines += _replicate_line("A", report["a"], unscored) + _replicate_line("B", report["b"], unscored)
    lines += [
        f"Δ (A − B) over {overall.n} paired questions: {_points(diff.estimate)} points",
        f"   per-question 95% CI        [{_points(diff.low)}, {_points(diff.high)}]  ({DIFFERENCE_INTERVAL_METHOD})",
    ]
    if overall.cluster is not None:
        c = overall.cluster
        lines.append(
            f"   conversation bootstrap 95% [{_points(c.low)}, {_points(c.high)}]  (G={c.clusters} conversations, "
            f"{c.draws:,} draws, seed {c.seed}; with few clusters a robustness check, not a primary interval)"
        )
    else:
        lines.append("   conversation bootstrap     not computed (G=1: a single conversation)")
    u = overall.unclustered
    lines += [
        f"   unclustered bootstrap 95%  [{_points(u.low)}, {_points(u.high)}]  (G={u.clusters} questions, "
        f"{u.draws:,} draws, seed {u.seed})",
        f"   exact McNemar p = {_p(overall.mcnemar_p)}  (A only {overall.table.only_a}, B only {overall.table.only_b};"
        f" both right {overall.table.both}, both wrong {overall.table.neither})",
    ]
    if overall.mde is not None:
        lines.append(
            f"   minimum detectable effect at 80% power: {100 * overall.mde:.1f} points (paired t, observed sd)"
        )
    numbered = any(numbered_by_locomo(r.answers) for side in (report["a"], report["b"]) for r in side.results)
    heading = f"per category: ({CATEGORY_NUMBERING})" if numbered else "per category:"
    lines += ["", heading] + _group_table(report["by_category"], "category")
    lines += ["", "per conversation:"] + _group_table(report["by_conversation"], "conversation")
    return "\n".join(lines)


def report_json(report: dict) -> dict:
    """The comparison as plain JSON (fractions, not points); `replicates` (each replicate's accuracy per side)
    only when a side has replicates."""
    overall: PairedComparison = report["overall"]
    unscored = bool(report.get("include_unscored", False))
    replicates = {s: replicate_accuracies(report[s], unscored) for s in ("a", "b") if report[s].replicates}
    return ({"replicates": replicates} if replicates else {}) | {
        "a": {"label": report["a"].label, "files": [str(f) for f in report["a"].files]},
        "b": {"label": report["b"].label, "files": [str(f) for f in report["b"].files]},
        "overall": asdict(overall),
        "seed": report["seed"],
        "by_category": report["by_category"].to_dict(orient="records"),
        "by_conversation": report["by_conversation"].to_dict(orient="records"),
        "warnings": report["warnings"],
        "gold": report["a"].gold,
        "categories": sorted(report["a"].categories) if report["a"].categories is not None else None,
        "context": report.get("context", []),
    }


def discordant_questions(report: dict) -> pd.DataFrame:
    """The questions exactly one side answered correctly: question_id, conversation, category and ``right`` ("A"
    or "B"), A-right rows first (what ``compare --list-discordant`` prints, and the report's discordant filter)."""
    a, b = report["correct_a"], report["correct_b"].reindex(report["correct_a"].index)
    differ = a.index[a.to_numpy() != b.to_numpy()]
    rows = report["a"].answers.loc[differ, ["conversation", "category"]].copy()
    rows["right"] = ["A" if a[q] else "B" for q in differ]
    return rows.reset_index().sort_values(["right", "question_id"], kind="stable").reset_index(drop=True)


def render_discordant(report: dict) -> str:
    table = discordant_questions(report)
    lines = []
    for side, other in (("A", "B"), ("B", "A")):
        group = table[table["right"] == side]
        label = report[side.lower()].label
        lines.append(f"{side} right / {other} wrong ({label}): {len(group)}")
        lines += [f"   {r.question_id}  {r.conversation}  {r.category}" for r in group.itertuples()]
    return "\n".join(lines)
