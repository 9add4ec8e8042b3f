"""The v3 paper's accuracy-vs-tokens figure: one panel per retrieval budget (tight k = 3, generous), each system a
point at its pooled mean retrieved tokens and judge accuracy. Every plotted value is a registered number."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.figure import Figure

from bench.report.figures import DOUBLE, FigureContext, FigureSpec

BUDGETS = {
    "tight": ("L0", "T0R", "T0R-LLM", "engram_v2", "mem0", "Jev-Mem"),
    "generous": ("engram_v2", "Jev-Mem", "mem0", "full_context", "T0R"),
}
TITLES = {"tight": "tight budget (k = 3)", "generous": "generous budget"}
COLORS = {
    "T0R": "#1f77b4",
    "T0R-LLM": "#17becf",
    "L0": "#7f7f7f",
    "engram_v2": "#2ca02c",
    "mem0": "#d62728",
    "Jev-Mem": "#9467bd",
    "full_context": "#000000",
}
LABELS = {"engram_v2": "engram v2", "full_context": "full context"}
# T0R and T0R-LLM sit a few tokens apart at k = 3: T0R's label goes below-left so the two stay readable.
OFFSETS = {("tight", "T0R"): ((-4, -9), "right")}
# The tight budget spans one decade at most (linear axis); the generous one spans two (log axis).
LOG_X = {"tight": False, "generous": True}


def draw_acc_vs_tokens_v3(ctx: FigureContext) -> Figure:
    fig, axes = plt.subplots(1, 2, figsize=(DOUBLE, 2.6))
    for ax, (budget, keys) in zip(axes, BUDGETS.items(), strict=True):
        for key in keys:
            x = ctx.value(f"v3.{budget}.{key}.tokens")
            y = 100 * ctx.value(f"t3.{budget}.{key}")
            ax.plot([x], [y], "o", color=COLORS[key], markersize=4)
            k = f" k={ctx.display(f'v3.{budget}.{key}.k')}" if key != "full_context" else ""
            offset, align = OFFSETS.get((budget, key), ((4, 3), "left"))
            ax.annotate(
                f"{LABELS.get(key, key)}{k}",
                (x, y),
                textcoords="offset points",
                xytext=offset,
                ha=align,
                fontsize=6,
                color=COLORS[key],
            )
        if LOG_X[budget]:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_title(TITLES[budget])
        ax.set_xlabel("mean retrieved tokens per question" + (" (log)" if LOG_X[budget] else ""))
        ax.margins(x=0.25, y=0.15)
    axes[0].set_ylabel("judge accuracy (%)")
    fig.text(0.99, 0.005, ctx.stack_label, ha="right", va="bottom", fontsize=6, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


FIGURES = [
    FigureSpec(
        "v3_acc_vs_tokens",
        "Judge accuracy against mean retrieved tokens on the 778 LoCoMo held-out questions, at the tight budget "
        "(k = 3) and at each system's generous budget.",
        draw_acc_vs_tokens_v3,
    )
]
