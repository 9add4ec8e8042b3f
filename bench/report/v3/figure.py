"""The v3 paper's accuracy-vs-tokens figure: one panel per retrieval budget (tight k = 3, generous) on one shared
accuracy scale, each system a point at its pooled mean retrieved tokens and judge accuracy with the Wilson 95%
interval the v1 figure draws, every system named in full in the legend. Every plotted value is a registered number."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from bench.report.figures import (
    CAPSIZE,
    DOUBLE,
    FigureContext,
    FigureSpec,
    PointLabel,
    _padded,
    dodge,
    place_labels,
)

BUDGETS = {
    "tight": ("L0", "T0R", "T0R-LLM", "engram_v2", "mem0", "Jev-Mem"),
    "generous": ("engram_v2", "Jev-Mem", "mem0", "full_context", "T0R"),
}
TITLES = {"tight": "tight budget: k = 3 for every system", "generous": "generous budget: each system's own k"}
COLORS = {
    "T0R": "#1f77b4",
    "T0R-LLM": "#17becf",
    "L0": "#7f7f7f",
    "engram_v2": "#2ca02c",
    "mem0": "#d62728",
    "Jev-Mem": "#9467bd",
    "full_context": "#000000",
}
# The paper's short names with what each system retrieves, so the figure reads without the paper beside it.
NAMES = {
    "T0R": "T0R: raw turns, cosine shortlist reranked by Jev",
    "T0R-LLM": "T0R-LLM: raw turns, shortlist reranked by gpt-4o-mini",
    "L0": "L0: raw turns by cosine similarity only",
    "engram_v2": "engram v2: extracted facts",
    "mem0": "mem0 2.1.0: extracted memories",
    "Jev-Mem": "Jev-Mem: Jev-built memory",
    "full_context": "full context: the whole conversation",
}
MARKERS = {"T0R": "o", "T0R-LLM": "D", "L0": "v", "engram_v2": "s", "mem0": "^", "Jev-Mem": "P", "full_context": "*"}
V3_MARKERSIZE = 5.5  # larger than v1's: seven marker shapes must be told apart
# The tight budget spans one decade at most (linear axis); the generous one spans two (log axis).
LOG_X = {"tight": False, "generous": True}


def _points(ctx: FigureContext, budget: str) -> list[PointLabel]:
    points = []
    for key in BUDGETS[budget]:
        stem = f"v3.{budget}.{key}"
        k = f"k={ctx.display(f'{stem}.k')}" if key != "full_context" else "all turns"
        points.append(
            PointLabel(
                ctx.value(f"{stem}.tokens"),
                100 * ctx.value(f"t3.{budget}.{key}"),
                100 * ctx.value(f"{stem}.accuracy_ci_low"),
                100 * ctx.value(f"{stem}.accuracy_ci_high"),
                k,
                COLORS[key],
                V3_MARKERSIZE,
            )
        )
    return points


def _x_axis(ax: Axes, budget: str, xs: list[float]) -> None:
    """The x range fitted to the points with room for their labels; log for the generous budget."""
    if LOG_X[budget]:
        ax.set_xscale("log")
        ax.set_xlim(min(xs) / 2, max(xs) * 2.5)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    else:
        ax.set_xlim(*_padded(min(xs), max(xs), 0.15))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("mean retrieved tokens per question" + (" (log scale)" if LOG_X[budget] else ""))


def draw_acc_vs_tokens_v3(ctx: FigureContext) -> Figure:
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 3.3), sharey=True)
    panels = {budget: _points(ctx, budget) for budget in BUDGETS}
    every = [p for points in panels.values() for p in points]
    # One accuracy scale for both budgets, fitted to every interval.
    axes[0].set_ylim(*_padded(min(p.low for p in every), max(p.high for p in every), 0.1))
    for ax, (budget, points) in zip(axes, panels.items(), strict=True):
        _x_axis(ax, budget, [p.x for p in points])
        ax.set_title(TITLES[budget])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("judge accuracy (%), Wilson 95% interval")
    fig.subplots_adjust(left=0.08, right=0.99, top=0.72, bottom=0.17, wspace=0.06)
    handles = {}
    for ax, (budget, points) in zip(axes, panels.items(), strict=True):
        points = dodge(ax, points)  # after the layout: it works in display pixels
        for key, p in zip(BUDGETS[budget], points, strict=True):
            handles[key] = ax.errorbar(
                [p.x],
                [p.y],
                yerr=[[p.y - p.low], [p.high - p.y]],
                fmt=MARKERS[key],
                color=p.color,
                capsize=CAPSIZE,
                markersize=p.size + (2 if MARKERS[key] == "*" else 0),
                label=NAMES[key],
            )
        if budget != "tight":  # at the tight budget every k is 3, as the title says
            place_labels(fig, ax, points)
    order = [key for key in NAMES if key in handles]
    fig.legend(
        [handles[k] for k in order], [NAMES[k] for k in order], loc="upper center", ncol=2, frameon=False, fontsize=7
    )
    fig.text(0.99, 0.005, ctx.stack_label, ha="right", va="bottom", fontsize=6, color="#555555")
    return fig


FIGURES = [
    FigureSpec(
        "v3_acc_vs_tokens",
        "Judge accuracy against mean retrieved tokens on the 778 LoCoMo held-out questions, with Wilson 95% "
        "intervals of accuracy, at the tight budget (k = 3, left) and at each system's generous budget (right), on "
        "one accuracy scale; points whose intervals would touch at nearly the same token count are drawn a few "
        "pixels apart so each stays readable.",
        draw_acc_vs_tokens_v3,
    )
]
