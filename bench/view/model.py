"""What a report shows, computed from result files (and their trace sidecars) alone.

A *side* is one result file with its trace; a report has one side or two (A and B, paired question by question).
Answers are keyed by question id, or by ``<id>@<checkpoint>`` in files that ask a question at several checkpoints
(the stress slice). Everything here is plain data for the templates and for ``engram-bench show``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.analysis.categories import code_of
from bench.analysis.scoring.metric import Metric, shown_metrics
from bench.results.schema import ORIGIN_V1_IMPORT, Answer, Result, read_result
from bench.results.trace import Trace, trace_of

STANDIN_BANNER = "OFFLINE STAND-INS — NOT THE PAPER'S NUMBERS"


@dataclass(frozen=True)
class Side:
    path: Path
    result: Result
    trace: Trace | None
    keys: tuple[str, ...]  # one per answer, in file order

    @property
    def label(self) -> str:
        r = self.result
        k = f" k={r.k}" if r.k is not None else ""
        return f"{r.arm}{k} [{r.stack}]"

    @property
    def is_v1_import(self) -> bool:
        return self.result.provenance.origin == ORIGIN_V1_IMPORT

    def answer(self, key: str) -> Answer:
        return self.result.answers[self.keys.index(key)]


def answer_keys(answers: Sequence[Answer]) -> tuple[str, ...]:
    """The question id, made unique by the checkpoint where a file asks the same question more than once."""
    counts = Counter(a.question_id for a in answers)
    return tuple(a.question_id if counts[a.question_id] == 1 else f"{a.question_id}@{a.checkpoint}" for a in answers)


def load_side(path: str | Path) -> Side:
    """Read and validate a result file and the trace it names (``ResultError`` / ``TraceError`` otherwise)."""
    p = Path(path)
    return side_of(p, read_result(p))


def side_of(path: Path, result: Result) -> Side:
    """A side from a result already read and validated, with the trace it names."""
    return Side(path=path, result=result, trace=trace_of(path, result), keys=answer_keys(result.answers))


def require_same_questions(a: Side, b: Side) -> None:
    """Two sides pair only over one question set; one line naming a question found on one side only."""
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s); `--help` loads this module
    import pandas as pd

    from bench.analysis.pairing import Pairing  # pandas loads only for paired reports

    Pairing.join(
        pd.Series(True, index=list(a.keys), name=f"A ({a.path})"),
        pd.Series(True, index=list(b.keys), name=f"B ({b.path})"),
    )


# ---------------------------------------------------------------------------------------------- what is missing


def lines_missing_reason(side: Side, answer: Answer) -> str | None:
    """Why an answer's lines cannot be shown, in words; None when they can."""
    if answer.lines is not None:
        return None
    if side.is_v1_import:
        return f"not recorded: the v1 release publishes only how many lines were shown ({answer.lines_shown})"
    if answer.lines_shown:
        return f"not stored: this system shows the whole conversation so far ({answer.lines_shown} turns)"
    return "not recorded in this result file"


def sources_missing_reason(side: Side, answer: Answer) -> str | None:
    if answer.lines is None or answer.sources is not None:
        return None
    return "source turns not recorded (the file predates per-line sources)"


def trace_missing_reason(side: Side) -> str | None:
    if side.trace is not None:
        return None
    if side.is_v1_import:
        return "no trace: the v1 release records no per-line decisions"
    return "no trace sidecar: the run predates traces (re-run the arm to record one)"


# ------------------------------------------------------------------------------------------------- headlines


@dataclass(frozen=True)
class Headline:
    correct: int
    n: int
    estimate: float | None  # percent
    low: float | None
    high: float | None
    metrics: list[ShownValue]  # each metric `view` shows (bench.analysis.scoring.metric.shown_metrics), in order
    tokens: float | None
    by_category: list[dict[str, Any]]


@dataclass(frozen=True)
class ShownValue:
    """One shown metric's aggregate (or one answer's value): the metric's label, column head and tooltip with it."""

    label: str
    column: str
    tooltip: str
    value: Any


def shown_values(metrics: Sequence[Metric], values: Sequence[Any]) -> list[ShownValue]:
    return [
        ShownValue(m.shown.label, m.shown.column, m.shown.tooltip, v)
        for m, v in zip(metrics, values, strict=True)
        if m.shown is not None
    ]


def answer_metrics(answer: Answer) -> list[ShownValue]:
    """The shown metrics' values of one answer, as the file holds them (None when it holds none)."""
    metrics = shown_metrics()
    return shown_values(metrics, [m.value(answer) for m in metrics])


def _mean(values: Sequence[float | int | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return math.fsum(kept) / len(kept) if kept else None


def _wilson(correct: int, n: int) -> tuple[float | None, float | None, float | None]:
    if n == 0:
        return None, None, None
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s); `--help` loads this module
    from bench.analysis.stats import wilson_interval

    w = wilson_interval(correct, n).points()
    return w.estimate, w.low, w.high


def headline(result: Result) -> Headline:
    """Accuracy over scored answers with its Wilson 95% interval, each shown metric's aggregate (mean F1, evidence
    recall, ...) and mean tokens, and the accuracy per category (every labelled answer, as the result's own ``accuracy_by_category``)."""
    scored = result.scored_answers()
    metrics = shown_metrics()
    est, low, high = _wilson(result.accuracy.correct, result.accuracy.n)
    counted = {a.category for a in result.answers if a.scored}  # the dataset's scored categories, as each answer says
    rows = []
    for category, tally in result.accuracy_by_category.items():
        c_est, c_low, c_high = _wilson(tally.correct, tally.n)
        rows.append(
            {
                "category": category,
                "code": code_of(category),  # LoCoMo's number for it (the table says which numbering)
                "scored": category in counted,
                "correct": tally.correct,
                "n": tally.n,
                "estimate": c_est,
                "low": c_low,
                "high": c_high,
            }
        )
    return Headline(
        correct=result.accuracy.correct,
        n=result.accuracy.n,
        estimate=est,
        low=low,
        high=high,
        metrics=shown_values(metrics, [m.summary(scored) for m in metrics]),
        tokens=_mean([a.retrieved_tokens for a in scored]),
        by_category=rows,
    )


@dataclass(frozen=True)
class Paired:
    n: int
    delta: float  # points, A - B
    low: float
    high: float
    mcnemar_p: float
    a_only: int
    b_only: int
    both: int
    neither: int


def paired(a: Side, b: Side) -> Paired | None:
    """A − B over the questions both sides score, with the per-question 95% interval and exact McNemar p (the same
    functions as ``engram-bench compare``); None when no question is scored on both."""
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s); `--help` loads this module
    import pandas as pd

    from bench.analysis.pairing import Pairing  # pandas and the statistics load only for a paired report

    scored = [k for k in a.keys if a.answer(k).scored and b.answer(k).scored]
    if not scored:
        return None
    side_a = pd.Series([a.answer(k).correct for k in scored], index=scored)
    side_b = pd.Series([b.answer(k).correct for k in scored], index=scored)
    result = Pairing.join(side_a, side_b).judged(draws=1)
    d, t = result.difference.points(), result.table
    return Paired(len(scored), d.estimate, d.low, d.high, result.mcnemar_p, t.only_a, t.only_b, t.both, t.neither)


def discordant_keys(a: Side, b: Side, scored_only: bool = True) -> dict[str, list[str]]:
    """Question keys where exactly one side is right: ``a_only`` (A right, B wrong) and ``b_only``; by default
    over the questions both sides score, as ``compare --list-discordant`` counts them."""
    out: dict[str, list[str]] = {"a_only": [], "b_only": []}
    for key in a.keys:
        if scored_only and not (a.answer(key).scored and b.answer(key).scored):
            continue
        ra, rb = a.answer(key).correct, b.answer(key).correct
        if ra != rb:
            out["a_only" if ra else "b_only"].append(key)
    return out
