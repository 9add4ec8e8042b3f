"""Figures (matplotlib, Agg): every plotted value comes from the number registry (or, for reliability diagrams, the
same probability tables the calibration numbers were computed from), and each figure is written as SVG, PDF and PNG
with fixed metadata so a rebuild does not churn git."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from bench.atomic import write_bytes
from bench.report.calibration import MARKED_THETAS, CalibrationCell, theta_id
from bench.report.numbers import Numbers
from bench.results import SCORED_CATEGORIES
from bench.stats.calibration import confidences, correct

FORMATS = ("svg", "pdf", "png")
COLORS = {
    "engram": "#1f77b4",
    "mem0": "#d62728",
    "engram-reranking-off": "#7f7f7f",
    "laya": "#2ca02c",
    "jev": "#1f77b4",
}
SINGLE, DOUBLE = 3.4, 7.0  # column widths in inches
matplotlib.rcParams.update(
    {
        "svg.hashsalt": "engram-bench",
        "svg.fonttype": "none",
        "font.size": 8,
        "axes.titlesize": 8,
        "legend.fontsize": 7,
        "path.simplify": False,
    }
)


@dataclass
class FigureSpec:
    name: str
    caption: str
    draw: Callable[[FigureContext], Figure]
    number_ids: list[str] = field(default_factory=list)


@dataclass
class FigureContext:
    numbers: Numbers
    stack_label: str
    calibration: list[CalibrationCell]
    used: list[str] = field(default_factory=list)

    def value(self, number_id: str) -> float:
        self.used.append(number_id)
        return float(self.numbers[number_id].value)

    def display(self, number_id: str) -> str:
        self.used.append(number_id)
        return self.numbers[number_id].display

    def has(self, number_id: str) -> bool:
        return number_id in self.numbers


def _footer(fig: Figure, ctx: FigureContext) -> None:
    fig.text(0.99, 0.005, ctx.stack_label, ha="right", va="bottom", fontsize=6, color="#555555")


# ------------------------------------------------------------------------------------------------------ drawings

HELDOUT_POINTS = ["engram-k3", "engram-k20", "mem0-k3", "mem0-token-matched", "mem0-k20", "engram-reranking-off-k3"]


def _row_family(row: str) -> str:
    return "engram-reranking-off" if "reranking-off" in row else row.split("-k")[0].split("-token")[0]


def draw_acc_vs_tokens(ctx: FigureContext) -> Figure:
    fig, ax = plt.subplots(figsize=(SINGLE, 2.6))
    for row in HELDOUT_POINTS:
        stem = f"heldout.{row}"
        if not ctx.has(f"{stem}.accuracy"):
            continue
        x, y = ctx.value(f"{stem}.tokens"), 100 * ctx.value(f"{stem}.accuracy")
        low, high = 100 * ctx.value(f"{stem}.accuracy_ci_low"), 100 * ctx.value(f"{stem}.accuracy_ci_high")
        family = _row_family(row)
        ax.errorbar(
            [x],
            [y],
            yerr=[[y - low], [high - y]],
            fmt="o" if family != "engram-reranking-off" else "s",
            color=COLORS[family],
            capsize=2,
            markersize=4,
        )
        # k=20 points sit at the right edge: label them on the left so the text stays inside the axes.
        offset, align = ((-5, -12), "right") if row == "mem0-k20" else ((5, -9), "left")
        ax.annotate(
            f"{family} k={ctx.display(f'{stem}.k')}",
            (x, y),
            textcoords="offset points",
            xytext=offset,
            ha=align,
            fontsize=6,
            color=COLORS[family],
        )
    ax.set_xscale("log")
    ticks = [150, 300, 500, 1000, 1500, 2500]
    ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlim(120, 3200)
    ax.set_xlabel("mean retrieved tokens per question (log scale)")
    ax.set_ylabel("held-out accuracy (%)")
    ax.grid(alpha=0.3)
    fig.subplots_adjust(left=0.15, right=0.97, top=0.96, bottom=0.2)
    _footer(fig, ctx)
    return fig


def draw_per_category(ctx: FigureContext) -> Figure:
    rows = [
        r
        for r in ("engram-k3", "mem0-token-matched", "mem0-k3", "engram-reranking-off-k3")
        if ctx.has(f"heldout.{r}.accuracy")
    ]
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.6))
    width = 0.8 / max(len(rows), 1)
    positions = np.arange(len(SCORED_CATEGORIES))
    shades = {"engram-k3": 1.0, "mem0-token-matched": 1.0, "mem0-k3": 0.5, "engram-reranking-off-k3": 1.0}
    for i, row in enumerate(rows):
        values = [
            100 * ctx.value(f"heldout.{row}.category.{c}.accuracy")
            if ctx.has(f"heldout.{row}.category.{c}.accuracy")
            else np.nan
            for c in SCORED_CATEGORIES
        ]
        label = f"{row} (k={ctx.display(f'heldout.{row}.k')})"
        ax.bar(
            positions + (i - (len(rows) - 1) / 2) * width,
            values,
            width,
            label=label,
            color=COLORS[_row_family(row)],
            alpha=shades[row],
        )
    ax.set_xticks(positions, SCORED_CATEGORIES)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(ncol=len(rows), loc="upper center", bbox_to_anchor=(0.5, 1.15), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.subplots_adjust(left=0.07, right=0.99, top=0.86, bottom=0.16)
    _footer(fig, ctx)
    return fig


PERCONV_PAIRS = [("engram-k3", "mem0-k3"), ("engram-k3", "mem0-token-matched"), ("engram-k20", "mem0-k20")]


def draw_perconv_diffs(ctx: FigureContext) -> Figure:
    convs = sorted(
        {
            i.split(".conv.")[1].split(".")[0]
            for i in (n.id for n in ctx.numbers)
            if ".conv." in i and i.startswith("compare.")
        }
    )
    pairs = [(a, b) for a, b in PERCONV_PAIRS if ctx.has(f"compare.{a}_vs_{b}.conv.{convs[0]}.delta")] if convs else []
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.6))
    markers = ["o", "s", "^"]
    for j, (a, b) in enumerate(pairs):
        xs, ys, lo, hi = [], [], [], []
        for i, conv in enumerate(convs):
            stem = f"compare.{a}_vs_{b}.conv.{conv}"
            d = 100 * ctx.value(f"{stem}.delta")
            xs.append(i + (j - 1) * 0.22)
            ys.append(d)
            lo.append(d - 100 * ctx.value(f"{stem}.ci_low"))
            hi.append(100 * ctx.value(f"{stem}.ci_high") - d)
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[j], capsize=2, markersize=4, label=f"{a} − {b}")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(convs)), convs)
    ax.set_ylabel("Δ accuracy, points (95% CI)")
    ax.legend(loc="upper right", frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.subplots_adjust(left=0.08, right=0.99, top=0.97, bottom=0.16)
    _footer(fig, ctx)
    return fig


def draw_reliability(ctx: FigureContext) -> Figure:
    groups = sorted({(c.set_name, c.question) for c in ctx.calibration})
    fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(DOUBLE, 2.6), squeeze=False)
    edges = np.linspace(0, 1, 11)
    for ax, (set_name, question) in zip(axes[0], groups):
        for cell in (c for c in ctx.calibration if (c.set_name, c.question) == (set_name, question)):
            conf = confidences(cell.table.probs)
            hit = correct(cell.table.probs, cell.table.labels).astype(float)
            index = np.minimum((conf * 10).astype(int), 9)
            counts = np.bincount(index, minlength=10)
            filled = counts > 0
            mean_conf = np.bincount(index, weights=conf, minlength=10)[filled] / counts[filled]
            accuracy = np.bincount(index, weights=hit, minlength=10)[filled] / counts[filled]
            ece = ctx.display(f"{cell.stem}.ece")
            ax.plot(
                mean_conf,
                accuracy,
                marker="o",
                markersize=3,
                color=COLORS[cell.backend],
                label=f"{cell.backend} (ECE {ece})",
            )
        ax.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=0.8)
        ax.set_xticks(edges[::2])
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{question}, {set_name} labels")
        ax.set_xlabel("confidence (bin mean)")
        ax.legend(loc="upper left", frameon=False)
    axes[0][0].set_ylabel("accuracy in bin")
    fig.subplots_adjust(left=0.07, right=0.99, top=0.9, bottom=0.18, wspace=0.25)
    _footer(fig, ctx)
    return fig


def draw_tradeoff(ctx: FigureContext) -> Figure:
    prefix, suffix = "tradeoff.theta_", ".theta"
    thetas = sorted(
        n.id[len(prefix) : -len(suffix)] for n in ctx.numbers if n.id.startswith(prefix) and n.id.endswith(suffix)
    )
    xs = [ctx.value(f"tradeoff.theta_{t}.theta") for t in thetas]
    fig, ax = plt.subplots(figsize=(SINGLE, 3.0))
    cost = [1000 * ctx.value(f"tradeoff.theta_{t}.cost") for t in thetas]
    ax.plot(xs, cost, color="black", marker=".", label="C(θ)")
    ax.set_xlabel("escalation threshold θ")
    ax.set_ylabel("cost per 1,000 decisions (USD)")
    right = ax.twinx()
    for eps, style in (("0", "-"), ("0.1", "--")):
        err = [100 * ctx.value(f"tradeoff.theta_{t}.error_eps{eps}") for t in thetas]
        right.plot(xs, err, color="#d62728", linestyle=style, label=f"E(θ), ε_L={eps}")
    kept = [100 * ctx.value(f"tradeoff.theta_{t}.jev_error_kept") for t in thetas]
    right.plot(xs, kept, color="#1f77b4", linestyle=":", label="ε_J(θ), Jev on kept")
    right.set_ylabel("relation error (%)")
    for theta in MARKED_THETAS:
        ax.axvline(float(ctx.value(f"tradeoff.theta_{theta_id(theta)}.theta")), color="#999999", linewidth=0.7)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    fig.legend(handles, [str(h.get_label()) for h in handles], loc="upper center", ncol=2, frameon=False, fontsize=6)
    fig.subplots_adjust(left=0.17, right=0.85, top=0.84, bottom=0.17)
    _footer(fig, ctx)
    return fig


COST_ARMS = [("mem0", "mem0 2.1.0"), ("engram-llm-decider", "engram, LLM decider"), ("engram-jev", "engram, Jev")]


def draw_cost_breakdown(ctx: FigureContext) -> Figure:
    arms = [(a, label) for a, label in COST_ARMS if ctx.has(f"dev.{a}.cost_per_1k")]
    fig, ax = plt.subplots(figsize=(SINGLE, 2.6))
    for i, (arm, _label) in enumerate(arms):
        total = ctx.value(f"dev.{arm}.cost_per_1k")
        if ctx.has(f"dev.{arm}.decision_cost_per_1k"):
            extract = ctx.value(f"dev.{arm}.extract_cost_per_1k")
            decision = ctx.value(f"dev.{arm}.decision_cost_per_1k")
            ax.barh(i, extract, color="#ff7f0e", label="extraction (LLM)" if i == len(arms) - 1 else None)
            ax.barh(i, decision, left=extract, color="#1f77b4", label="decision layer" if i == len(arms) - 1 else None)
        else:
            ax.barh(i, total, color="#bbbbbb", hatch="//", label="not split (all mem0 LLM calls)")
        ax.text(total, i, " " + ctx.display(f"dev.{arm}.cost_per_1k"), va="center", fontsize=7)
    ax.set_yticks(range(len(arms)), [label for _, label in arms])
    ax.set_xlabel("write cost per 1,000 messages (USD)")
    largest = max((ctx.value(f"dev.{a}.cost_per_1k") for a, _ in arms), default=0.0)
    ax.set_xlim(0, largest * 1.25 if largest > 0 else 1.0)  # stand-in runs cost $0
    fig.legend(loc="upper center", ncol=2, frameon=False, fontsize=6)
    fig.subplots_adjust(left=0.42, right=0.96, top=0.82, bottom=0.2)
    _footer(fig, ctx)
    return fig


FIGURES = [
    FigureSpec(
        "acc_vs_tokens",
        "Held-out accuracy against mean retrieved tokens per question (log scale), with "
        "per-question 95% intervals, for every held-out row.",
        draw_acc_vs_tokens,
    ),
    FigureSpec(
        "per_category",
        "Held-out accuracy per LoCoMo category for engram at k=3, mem0 at the token-matched "
        "k, mem0 at k=3 and engram with reranking off.",
        draw_per_category,
    ),
    FigureSpec(
        "perconv_diffs",
        "Per-conversation paired differences (engram minus mem0) with per-question 95% "
        "intervals, at k=3, at the token-matched budget and at k=20.",
        draw_perconv_diffs,
    ),
    FigureSpec(
        "reliability",
        "Reliability diagrams of Jev and the zero-shot open model (laya): accuracy against "
        "mean confidence in 10 equal-width bins, with each model's ECE.",
        draw_reliability,
    ),
    FigureSpec(
        "tradeoff",
        "Escalation cost/error curve on the gold contradiction pairs: cost per decision C(θ), "
        "error E(θ) for the two assumed LLM error rates ε_L, and Jev's error on the decisions it keeps; vertical "
        "lines at the production and act thresholds.",
        draw_tradeoff,
    ),
    FigureSpec(
        "cost_breakdown",
        "Write cost per 1,000 messages on the dev slice, split into extraction and the "
        "decision layer (mem0's calls are not split).",
        draw_cost_breakdown,
    ),
]


def available(numbers: Numbers, calibration: list[CalibrationCell]) -> list[FigureSpec]:
    """The figures whose inputs exist in this build (a stack without calibration data gets no reliability plot)."""
    needs = {
        "acc_vs_tokens": "heldout.q",
        "per_category": "heldout.q",
        "perconv_diffs": "heldout.q",
        "tradeoff": "tradeoff.jev_error",
        "cost_breakdown": "dev.mem0.cost_per_1k",
    }
    out = []
    for spec in FIGURES:
        if spec.name == "reliability":
            if calibration:
                out.append(spec)
        elif needs[spec.name] in numbers:
            out.append(spec)
    return out


def render_figure(spec: FigureSpec, ctx: FigureContext, out_dir: Path) -> list[Path]:
    """Draw once, save in every format with fixed metadata; returns the written paths."""
    ctx.used = []
    fig = spec.draw(ctx)
    spec.number_ids = sorted(set(ctx.used))
    written = []
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}
    for fmt in FORMATS:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=metadata[fmt], dpi=150 if fmt == "png" else None)
        written.append(write_bytes(out_dir / f"{spec.name}.{fmt}", buffer.getvalue()))
    plt.close(fig)
    return written
