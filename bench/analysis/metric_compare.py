"""`compare --metric NAME` (f1, mem0-f1, bleu1, evidence-recall or any registered metric): the paired comparison of two result sets on a graded metric.

The judge metric (`--metric j`, the default) is compared by `bench.analysis.compare` (McNemar, discordant pairs). A graded
metric has no discordant pairs: per question d = value_A − value_B, and the report gives the mean of each side,
Δ with the per-question 95% CI (mean d ± 1.96·sd/√n), the conversation-cluster and unclustered bootstraps of mean d
(bench.analysis.stats, the same seeds as the judge comparison), the Wilcoxon signed-rank p (scipy; zero differences dropped,
its default), and the same per-category and per-conversation rows. Values come from `bench.analysis.scoring.values`, which
refuses a file that lacks the metric, naming the file and field.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

from bench.analysis.compare import ComparisonSide, stack_warnings
from bench.analysis.pairing import GradedComparison, Pairing
from bench.analysis.scoring.metric import Metric
from bench.analysis.scoring.values import answer_value, check_carries, metric_entry
from bench.analysis.stats import paired_seed
from bench.models.provider import shown_model


def metric_values(side: ComparisonSide, choice: Metric, include_unscored: bool) -> pd.Series:
    """The chosen metric per question id of one side (scored questions unless include_unscored)."""
    values: dict[str, float] = {}
    for path, result in zip(side.files, side.results, strict=True):
        check_carries(path, result, choice)
        for i, answer in enumerate(result.answers):
            if not (answer.scored or include_unscored):
                continue
            value = answer_value(path, i, answer, choice)
            if value is not None:
                values[answer.question_id] = value
    return pd.Series(values, dtype=float).sort_index()


def metric_names(side: ComparisonSide, choice: Metric) -> list[str]:
    return sorted({entry for r in side.results if (entry := metric_entry(r, choice)) is not None})


# The graded comparison's figures (kept under this name for callers of the report).
MetricComparison = GradedComparison


def metric_report(
    a: ComparisonSide, b: ComparisonSide, choice: Metric, include_unscored: bool, draws: int, seed: int | None
) -> dict[str, Any]:
    pairing = Pairing.join(
        metric_values(a, choice, include_unscored).rename(f"A ({a.label})"),
        metric_values(b, choice, include_unscored).rename(f"B ({b.label})"),
        a.answers["conversation"],
    )
    used_seed = paired_seed(a.first.arm, a.first.k, b.first.arm, b.first.k) if seed is None else seed
    names_a, names_b = metric_names(a, choice), metric_names(b, choice)
    warnings = stack_warnings(a, b)
    if names_a != names_b and choice.warn_if_names_differ:  # not for evidence recall, named per k
        warnings.append(f"METRICS DIFFER: A is scored by {names_a or 'none named'}, B by {names_b or 'none named'}")
    overall = pairing.graded(choice.name, draws=draws, seed=used_seed)
    return {
        "a": a,
        "b": b,
        "choice": choice,
        "names": (names_a, names_b),
        "overall": overall,
        "seed": used_seed,
        "by_category": pairing.graded_by(a.answers["category"]),
        "by_conversation": pairing.graded_by(a.answers["conversation"]),
        "warnings": warnings,
    }


def _num(value: float) -> str:
    return f"{value:.3f}"


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def _table(table: pd.DataFrame, title: str) -> list[str]:
    shown = pd.DataFrame(
        {
            title: table["group"],
            "n": table["n"],
            "A": table["mean_a"].map(_num),
            "B": table["mean_b"].map(_num),
            "Δ": table["delta"].map(_signed),
            "95% CI": [f"[{_signed(lo)}, {_signed(hi)}]" for lo, hi in zip(table["ci_low"], table["ci_high"])],
        }
    )
    return shown.to_string(index=False).splitlines()


def render_metric_report(report: dict[str, Any]) -> str:
    o: MetricComparison = report["overall"]
    names_a, names_b = report["names"]
    lines = ["Δ = A − B, metric units per question (0 to 1; positive: A scored higher)"]
    lines += [f"!! {w}" for w in report["warnings"]]
    lines += [
        f"metric: {report['choice'].choice} ({', '.join(sorted(set(names_a) | set(names_b)))}; per question, 0 to 1)",
        f"A: {report['a'].label}  mean {_num(o.mean_a)}",
        f"B: {report['b'].label}  mean {_num(o.mean_b)}",
        f"Δ (A − B) over {o.n} paired questions: {_signed(o.difference.estimate)}",
        f"   per-question 95% CI        [{_signed(o.difference.low)}, {_signed(o.difference.high)}]"
        "  (mean d ± 1.96·sd/√n)",
    ]
    if o.cluster is not None:
        lines.append(
            f"   conversation bootstrap 95% [{_signed(o.cluster.low)}, {_signed(o.cluster.high)}]  "
            f"(G={o.cluster.clusters} conversations, {o.cluster.draws:,} draws, seed {o.cluster.seed})"
        )
    else:
        lines.append("   conversation bootstrap     not computed (G=1: a single conversation)")
    u = o.unclustered
    lines.append(
        f"   unclustered bootstrap 95%  [{_signed(u.low)}, {_signed(u.high)}]  (G={u.clusters} questions, "
        f"{u.draws:,} draws, seed {u.seed})"
    )
    wilcoxon = "not computed (every difference is 0)" if o.wilcoxon_p is None else f"{o.wilcoxon_p:.3g}"
    lines.append(f"   Wilcoxon signed-rank p = {wilcoxon}")
    lines += ["", "per category:"] + _table(report["by_category"], "category")
    lines += ["", "per conversation:"] + _table(report["by_conversation"], "conversation")
    return "\n".join(lines)


def metric_report_json(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "metric": report["choice"].choice,
        "metric_names": {"a": report["names"][0], "b": report["names"][1]},
        "a": {"label": report["a"].label, "files": [str(f) for f in report["a"].files]},
        "b": {"label": report["b"].label, "files": [str(f) for f in report["b"].files]},
        "overall": asdict(report["overall"]),
        "seed": report["seed"],
        "by_category": report["by_category"].to_dict(orient="records"),
        "by_conversation": report["by_conversation"].to_dict(orient="records"),
        "warnings": report["warnings"],
    }


# ------------------------------------------------------------------------------------------ judge agreement


@dataclass(frozen=True)
class JudgeAgreement:
    """Two judgings of the same answers: how often their labels agree, and Cohen's kappa (chance-corrected)."""

    judge_a: str
    judge_b: str
    n: int
    agree: int
    correct_a_only: int  # A's judge said CORRECT, B's WRONG
    correct_b_only: int
    percent_agreement: float
    kappa: float | None  # None when undefined (both judges gave one label to every answer)


def _answer_texts(side: ComparisonSide, include_unscored: bool) -> dict[str, str | None]:
    return {a.question_id: a.answer for r in side.results for a in r.answers if a.scored or include_unscored}


def _judge_names(side: ComparisonSide) -> str:
    names = sorted({n for r in side.results for n in r.metrics if n.startswith("judge:")})
    judge = side.first.models.get("judge")
    return ", ".join(names) or f"judge model {shown_model(judge) if judge else 'unrecorded'}"


def judge_agreement(a: ComparisonSide, b: ComparisonSide, include_unscored: bool) -> JudgeAgreement | None:
    """The agreement of two judgings when A and B hold the same answer text for every question (e.g. a file and its
    `rejudge`); None when the answers differ (then the sides are two systems, not two judges)."""
    texts_a, texts_b = _answer_texts(a, include_unscored), _answer_texts(b, include_unscored)
    if set(texts_a) != set(texts_b) or any(texts_a[q] is None or texts_a[q] != texts_b[q] for q in texts_a):
        return None

    ids = sorted(texts_a)
    la = a.answers["correct"].reindex(ids).astype(bool).to_numpy()
    lb = b.answers["correct"].reindex(ids).astype(bool).to_numpy()
    table = np.array([[np.sum(la & lb), np.sum(la & ~lb)], [np.sum(~la & lb), np.sum(~la & ~lb)]])
    agree = int(table[0, 0] + table[1, 1])
    both_constant = len(set(la.tolist())) == 1 and set(la.tolist()) == set(lb.tolist())
    kappa = None if both_constant else cohens_kappa(table)
    return JudgeAgreement(
        judge_a=_judge_names(a),
        judge_b=_judge_names(b),
        n=len(ids),
        agree=agree,
        correct_a_only=int(table[0, 1]),
        correct_b_only=int(table[1, 0]),
        percent_agreement=agree / len(ids),
        kappa=kappa,
    )


def render_agreement(agreement: JudgeAgreement) -> str:
    kappa = "undefined (one label throughout)" if agreement.kappa is None else f"{agreement.kappa:.3f}"
    return "\n".join(
        [
            f"judge agreement over {agreement.n} identical answers (A judged by {agreement.judge_a}; "
            f"B by {agreement.judge_b}):",
            f"   percent agreement {100 * agreement.percent_agreement:.1f}% ({agreement.agree}/{agreement.n}); "
            f"Cohen's kappa {kappa}",
            f"   discordant: A CORRECT / B WRONG {agreement.correct_a_only}, "
            f"A WRONG / B CORRECT {agreement.correct_b_only}",
        ]
    )


def cohens_kappa(table: np.ndarray) -> float:
    """Cohen's kappa of a square agreement table (statsmodels): (observed − chance agreement) / (1 − chance
    agreement), chance agreement being the agreement two judges would reach labelling independently at their rates."""
    # statsmodels also computes a z value, which divides by 0 when one judge is constant: that warning is noise here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(statsmodels_kappa(table).kappa)
