"""Decision-model figures: calibration per label set × question × backend, the 50-pair contradiction regression,
and the escalation cost/error curve. Inputs are the supplementary files the v1 import placed under
``results/<stack>/supplementary/``; every statistic is computed by ``bench.analysis.stats``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.analysis.stats.bootstrap import comparison_seed
from bench.analysis.stats.calibration import (
    ProbabilityTable,
    calibration_summary,
    probability_matrix,
    score_intervals,
)
from bench.analysis.stats.escalation import cost_error_curve, jev_alone_error
from bench.report.inputs import ResultSet
from bench.report.numbers import Numbers, SourceFile
from bench.report.tables import Table, TableBuilder

CALIBRATION_ITEMS = "calibration_items.json"
REGRESSION_PAIRS = "jev_regression_pairs.json"
TRADEOFF_INPUTS = "tradeoff_inputs.json"
# v1 label-set keys → the set names our ids use.
LABEL_SETS = {"A": "escalation", "B": "gold"}
BACKENDS = ("jev", "laya")
SUMMARY_FIELDS = {
    "n": "int",
    "accuracy": "pct",
    "mean_confidence": "f2",
    "ece": "f2",
    "brier": "f2",
    "nll": "f2",
    "temperature": "f2",
    "ece_at_temperature": "f2",
    "cross_fit_ece": "f2",
}
# The article's θ marks on the curve: 0.60 (the production escalation threshold) and 0.85 (the act threshold).
MARKED_THETAS = (0.60, 0.85)


@dataclass(frozen=True)
class CalibrationCell:
    """One (label set, question, backend): its id stem and probability table (kept for the reliability diagram)."""

    stem: str
    set_name: str
    question: str
    backend: str
    table: ProbabilityTable
    source: SourceFile


def _set_name(key: str) -> str:
    head = key.split(":", 1)[0].strip()
    return LABEL_SETS.get(head, head.lower().replace(" ", "-"))


def calibration_cells(rs: ResultSet) -> list[CalibrationCell]:
    if not rs.has_supplementary(CALIBRATION_ITEMS):
        return []
    source, raw = rs.supplementary(CALIBRATION_ITEMS)
    cells = []
    for key, questions in sorted(raw["label_sets"].items()):
        set_name = _set_name(key)
        for question, block in sorted(questions.items()):
            for backend in BACKENDS:
                items = [it for it in block["items"] if it.get(backend) is not None]
                if items:
                    table = probability_matrix([it[backend] for it in items], [it["label"] for it in items])
                    cells.append(
                        CalibrationCell(
                            f"calibration.{set_name}.{question}.{backend}", set_name, question, backend, table, source
                        )
                    )
    return cells


def theta_id(theta: float) -> str:
    return f"{theta:.2f}"


def register(rs: ResultSet, numbers: Numbers) -> tuple[list[CalibrationCell], list[Table]]:
    cells = calibration_cells(rs)
    tables: list[Table] = []
    if cells:
        for cell in cells:
            summary = calibration_summary(cell.table.probs, cell.table.labels)
            for name, kind in SUMMARY_FIELDS.items():
                numbers.add(f"{cell.stem}.{name}", getattr(summary, name), kind, [cell.source])
            intervals = score_intervals(cell.table.probs, cell.table.labels, seed=comparison_seed(cell.stem))
            for score, interval in intervals.items():
                note = "item bootstrap, 10,000 resamples (numpy generator): may differ from the article by 0.01"
                numbers.add(f"{cell.stem}.{score}_low", interval.low, "f2", [cell.source], note=note)
                numbers.add(f"{cell.stem}.{score}_high", interval.high, "f2", [cell.source], note=note)
        tables.append(_calibration_table(cells, numbers, rs.label))
    if rs.has_supplementary(REGRESSION_PAIRS):
        _register_regression(rs, numbers)
        if rs.has_supplementary(TRADEOFF_INPUTS):
            tables.append(_register_tradeoff(rs, numbers))
    return cells, tables


def _calibration_table(cells: list[CalibrationCell], numbers: Numbers, label: str) -> Table:
    t = TableBuilder(
        numbers,
        "calibration",
        "Calibration of the decision models' probabilities",
        label,
        [
            "label set",
            "question",
            "model",
            "n",
            "accuracy",
            "mean confidence",
            "ECE",
            "Brier",
            "NLL",
            "T",
            "ECE at T (cross-fit)",
        ],
    )
    for c in cells:
        s = c.stem
        t.row(
            c.set_name,
            c.question,
            c.backend,
            *t.nums(s, "n", "accuracy", "mean_confidence", "ece", "brier", "nll", "temperature", "cross_fit_ece"),
        )
    t.note(
        "ECE over 10 equal-width confidence bins; T is the temperature minimising NLL, with the ECE it gives "
        "out of sample (2-fold cross-fit). laya is a zero-shot open model, shown for contrast."
    )
    return t.table


def _regression_arrays(rs: ResultSet) -> tuple[SourceFile, list[dict]]:
    source, raw = rs.supplementary(REGRESSION_PAIRS)
    return source, raw["pairs"]


def _register_regression(rs: ResultSet, numbers: Numbers) -> None:
    source, pairs = _regression_arrays(rs)
    src = [source]
    exact = np.array([p["exact"] for p in pairs], dtype=bool)
    temporal = np.array([p["temporal_ok"] for p in pairs], dtype=bool)
    closes = np.array([p["closes"] for p in pairs], dtype=bool)
    should = np.array([p["should_close"] for p in pairs], dtype=bool)
    prob = np.array([p["p"] for p in pairs], dtype=float)
    numbers.add("regression.jev.pairs", len(pairs), "int", src)
    numbers.add(
        "regression.jev.accepted",
        float(exact.mean()),
        "pct",
        src,
        note="share of pairs whose chosen relation is in the accepted set",
    )
    numbers.add("regression.jev.temporal", float(temporal.mean()), "pct", src)
    numbers.add(
        "regression.jev.close_rule",
        float((closes == should).mean()),
        "pct",
        src,
        note="pairs where the write path's close rule closes exactly when it should",
    )
    numbers.add("regression.jev.false_closes", int((closes & ~should).sum()), "int", src)
    numbers.add("regression.jev.missed_closes", int((~closes & should).sum()), "int", src)
    numbers.add("regression.jev.mean_p_right", float(prob[exact].mean()), "f2", src)
    if (~exact).any():
        numbers.add("regression.jev.mean_p_wrong", float(prob[~exact].mean()), "f2", src)
    for tier in sorted({p["tier"] for p in pairs}):
        in_tier = np.array([p["tier"] == tier for p in pairs])
        numbers.add(f"regression.jev.tier.{tier}.n", int(in_tier.sum()), "int", src)
        numbers.add(f"regression.jev.tier.{tier}.accepted", float(exact[in_tier].mean()), "pct", src)


def _register_tradeoff(rs: ResultSet, numbers: Numbers) -> Table:
    pair_source, pairs = _regression_arrays(rs)
    input_source, inputs = rs.supplementary(TRADEOFF_INPUTS)
    src = [pair_source, input_source]
    c_j, c_l = float(inputs["c_J"]["value"]), float(inputs["c_L"]["value"])
    exact = [p["exact"] for p in pairs]
    curve = cost_error_curve(
        [p["p"] for p in pairs], exact, c_j, c_l, thetas=inputs["thetas"], llm_errors=inputs["eps_L"]
    )
    numbers.add("tradeoff.c_J", c_j, "usd6", [input_source], note=inputs["c_J"]["from"])
    numbers.add("tradeoff.c_L", c_l, "usd4", [input_source], note=inputs["c_L"]["from"])
    numbers.add("tradeoff.jev_error", jev_alone_error(exact), "pct", [pair_source])
    t = TableBuilder(
        numbers,
        "tradeoff",
        "Escalation threshold: cost and error per relation decision",
        rs.label,
        ["θ", "escalated", "C(θ) per decision", "Jev error on kept", "E(θ), ε_L = 0", "E(θ), ε_L = 0.1"],
    )
    for theta, group in curve.groupby("theta", sort=True):
        stem = f"tradeoff.theta_{theta_id(theta)}"
        first = group.iloc[0]
        numbers.add(f"{stem}.theta", float(theta), "f2", src)
        numbers.add(f"{stem}.escalated", float(first["escalated"]), "pct", src)
        numbers.add(f"{stem}.cost", float(first["cost"]), "usd6", src)
        numbers.add(f"{stem}.jev_error_kept", float(first["jev_error_kept"]), "pct", src)
        for _, row in group.iterrows():
            numbers.add(
                f"{stem}.error_eps{row['eps_llm']:g}",
                float(row["error"]),
                "pct",
                src,
                note="ε_L is assumed, not measured",
            )
        eps_ids = [f"{stem}.error_eps{e:g}" for e in inputs["eps_L"]]
        t.row(
            *t.nums(stem, "theta", "escalated", "cost", "jev_error_kept"),
            *[t.num_or_dash(i) for i in eps_ids[:2]],
        )
    t.note(
        "On the gold contradiction pairs; c_J and c_L are per-decision costs from the original decision logs "
        "(inputs, not derivable from the published files); ε_L is assumed."
    )
    return t.table
