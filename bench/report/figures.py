"""Figures (matplotlib, Agg): every plotted value comes from the number registry (or, for reliability diagrams, the
same probability tables the calibration numbers were computed from), and each figure is written as SVG, PDF and PNG
with fixed metadata so a rebuild does not churn git."""

from __future__ import annotations

import dataclasses
import io
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.text
import matplotlib.ticker
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from bench.analysis.stats.calibration import confidences, correct
from bench.disk.atomic import write_bytes, write_text
from bench.report.calibration import MARKED_THETAS, CalibrationCell, theta_id
from bench.report.fingerprint import figure_fingerprint
from bench.report.heldout import ROW_LABELS
from bench.report.numbers import Numbers
from bench.results.schema import SCORED_CATEGORIES

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


STANDIN_MARK = "offline stand-ins: not the paper's numbers"


def _footer(fig: Figure, ctx: FigureContext) -> None:
    fig.text(0.99, 0.005, ctx.stack_label, ha="right", va="bottom", fontsize=6, color="#555555")
    if "stand-in" not in ctx.stack_label:
        return
    # A stand-in build says so inside every plot, not only in a footer a crop would cut: a faint diagonal mark
    # across each panel (a twin axes shares its panel's mark), drawn over the data so no bar hides it.
    seen: set[tuple[float, ...]] = set()
    for ax in fig.axes:
        bounds = tuple(round(v, 4) for v in ax.get_position().bounds)
        if bounds in seen:
            continue
        seen.add(bounds)
        ax.text(
            0.5,
            0.5,
            STANDIN_MARK,
            transform=ax.transAxes,
            ha="center",
            va="center",
            rotation=20,
            fontsize=7,
            color="#999999",
            alpha=0.35,
            zorder=5,
            clip_on=True,
            wrap=True,
        )


# ------------------------------------------------------------------------------------------------------ drawings

HELDOUT_POINTS = ["engram-k3", "engram-k20", "mem0-k3", "mem0-token-matched", "mem0-k20", "engram-reranking-off-k3"]
# Readable names of the decision models the calibration figures compare.
BACKEND_LABELS = {"jev": "Jev", "laya": "laya (zero-shot 421M open model)"}
QUESTION_TITLES = {"relation_to_candidate": "Relation to the candidate fact", "temporal_status": "Temporal status"}
SET_TITLES = {"escalation": "escalation-labelled decisions", "gold": "gold contradiction pairs"}
# Log-axis ticks come from the 1-2-5 series: neighbours are at least 0.3 decades apart, so thousands-formatted
# labels ("1,000", "2,000") never run together at these figure widths.
MAX_LOG_TICKS = 5


def _row_family(row: str) -> str:
    return "engram-reranking-off" if "reranking-off" in row else row.split("-k")[0].split("-token")[0]


def _row_label(ctx: FigureContext, row: str) -> str:
    return f"{ROW_LABELS[row]} (k={ctx.display(f'heldout.{row}.k')})"


def _thousands(value: float, _position: float | None = None) -> str:
    return f"{value:,.0f}"


def log_ticks(low: float, high: float, most: int = MAX_LOG_TICKS) -> list[float]:
    """1-2-5 ticks inside [low, high]; every other one is dropped until at most `most` remain."""
    exponents = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    ticks = [m * 10.0**e for e in exponents for m in (1, 2, 5) if low <= m * 10.0**e <= high]
    while len(ticks) > most:
        ticks = ticks[::2]
    return ticks


def _padded(low: float, high: float, share: float = 0.08) -> tuple[float, float]:
    pad = (high - low) * share or 1.0
    return low - pad, high + pad


# Where a point's label may go, tried in order: beside the point (offset in points, horizontal and vertical
# alignment), then above the top or below the bottom of its error bar. The first that stays inside the axes and clear
# of every other label, marker and error bar is kept.
LABEL_SPOTS: tuple[tuple[str, tuple[int, int], str, str], ...] = (
    ("point", (6, 0), "left", "center"),
    ("point", (-6, 0), "right", "center"),
    ("point", (5, -9), "left", "baseline"),
    ("point", (5, 3), "left", "baseline"),
    ("point", (-5, -9), "right", "baseline"),
    ("point", (-5, 3), "right", "baseline"),
    ("high", (0, 3), "center", "baseline"),
    ("low", (0, -9), "center", "baseline"),
    ("high", (3, 3), "left", "baseline"),
    ("low", (3, -9), "left", "baseline"),
    ("high", (-3, 3), "right", "baseline"),
    ("low", (-3, -9), "right", "baseline"),
)
CAPSIZE, MARKERSIZE = 2.0, 4.0  # points: error-bar caps and markers of the accuracy figures
CLEARANCE = 3.0  # display pixels kept free around another point's marker and bar
LABEL_GAP = 8.0  # display pixels kept free around a placed label


@dataclass(frozen=True)
class PointLabel:
    x: float
    y: float
    low: float
    high: float
    text: str
    color: str
    size: float = MARKERSIZE  # the marker's size, points


def point_box(ax: Axes, p: PointLabel, pad: float = 0.0) -> Bbox:
    """A point's marker and error bar with its caps, in display pixels (plus `pad` on every side)."""
    half = max(CAPSIZE, p.size / 2) * ax.figure.dpi / 72
    cap = ax.figure.dpi / 72  # half a cap line's width, generously
    (x, y), (_, low), (_, high) = ax.transData.transform([(p.x, p.y), (p.x, p.low), (p.x, p.high)])
    bar = Bbox.from_extents(x - half, low - cap, x + half, high + cap)
    marker = Bbox.from_extents(x - half, y - half, x + half, y + half)
    return Bbox.union([bar, marker]).padded(pad)


def _annotate(ax: Axes, p: PointLabel, spot: tuple[str, tuple[int, int], str, str]) -> matplotlib.text.Annotation:
    anchor, offset, align, valign = spot
    y = {"point": p.y, "high": p.high, "low": p.low}[anchor]
    return ax.annotate(
        p.text, (p.x, y), textcoords="offset points", xytext=offset, ha=align, va=valign, fontsize=6, color=p.color
    )


def _overlap(a: Bbox, b: Bbox) -> float:
    """The area two boxes share (0 when apart)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def place_labels(fig: Figure, ax: Axes, points: list[PointLabel]) -> None:
    """Label each point beside itself where the label covers no other label, no other point's marker or error bar
    (with CLEARANCE pixels around them) and not its own. Greedy, in the order given; a point with no free spot takes
    the spot inside the axes that covers the least."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    boxes = [point_box(ax, p, CLEARANCE) for p in points]
    own_boxes = [point_box(ax, p) for p in points]
    labels: list[Bbox] = []
    for i, p in enumerate(points):
        blocked = [own_boxes[i]] + boxes[:i] + boxes[i + 1 :] + labels
        best: tuple[float, tuple[str, tuple[int, int], str, str]] | None = None
        for spot in LABEL_SPOTS:
            label = _annotate(ax, p, spot)
            box = label.get_window_extent(renderer)
            label.remove()
            if not (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1):
                continue
            covered = sum(_overlap(box, other) for other in blocked)
            if _nearer_another(box, own_boxes[i], own_boxes[:i] + own_boxes[i + 1 :]):
                covered += box.width * box.height  # a label read as another point's is as bad as a hidden one
            if best is None or covered < best[0]:
                best = (covered, spot)
            if covered == 0:
                break
        chosen = _annotate(ax, p, best[1] if best else LABEL_SPOTS[0])
        labels.append(chosen.get_window_extent(renderer).padded(LABEL_GAP))


def _gap(a: Bbox, b: Bbox) -> float:
    """The shortest distance between two boxes in display pixels (0 when they touch or overlap)."""
    return float(np.hypot(max(b.x0 - a.x1, a.x0 - b.x1, 0.0), max(b.y0 - a.y1, a.y0 - b.y1, 0.0)))


def _nearer_another(label: Bbox, own: Bbox, others: list[Bbox]) -> bool:
    """True when the label sits closer to some other point than to its own (a reader would pair it wrongly)."""
    return any(_gap(label, other) < _gap(label, own) for other in others)


def dodge(ax: Axes, points: list[PointLabel]) -> list[PointLabel]:
    """Points whose markers or error bars would touch (nearly the same x, overlapping intervals) are spread apart
    horizontally, evenly about their mean position, so every marker and bar stays readable; the x axis must be final
    (scale, limits and layout) before this is called. Others keep their x."""
    half = max(CAPSIZE, *(p.size / 2 for p in points)) * ax.figure.dpi / 72
    step = 2 * half + CLEARANCE
    display = [float(ax.transData.transform((p.x, p.y))[0]) for p in points]
    group = list(range(len(points)))  # union-find over touching pairs

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, j in itertools.combinations(range(len(points)), 2):
        a, b = points[i], points[j]
        if abs(display[i] - display[j]) < step and a.low <= b.high and b.low <= a.high:
            group[root(j)] = root(i)
    moved = list(display)
    for r in {root(i) for i in range(len(points))}:
        members = sorted((i for i in range(len(points)) if root(i) == r), key=lambda i: (display[i], points[i].y))
        centre = sum(display[i] for i in members) / len(members)
        for rank, i in enumerate(members):
            moved[i] = centre + (rank - (len(members) - 1) / 2) * step
    out = []
    for p, x in zip(points, moved, strict=True):
        data_x = float(ax.transData.inverted().transform((x, 0.0))[0])
        out.append(dataclasses.replace(p, x=data_x))
    return out


def draw_acc_vs_tokens(ctx: FigureContext) -> Figure:
    fig, ax = plt.subplots(figsize=(SINGLE, 2.6))
    rows = [row for row in HELDOUT_POINTS if ctx.has(f"heldout.{row}.accuracy")]
    points = []
    for row in rows:
        stem = f"heldout.{row}"
        low, high = 100 * ctx.value(f"{stem}.accuracy_ci_low"), 100 * ctx.value(f"{stem}.accuracy_ci_high")
        y = 100 * ctx.value(f"{stem}.accuracy")
        points.append(
            PointLabel(ctx.value(f"{stem}.tokens"), y, low, high, _row_label(ctx, row), COLORS[_row_family(row)])
        )
    # The x range follows the data (log scale: a factor either side), so no row can fall outside the axes.
    xs = [p.x for p in points]
    x_low, x_high = min(xs, default=100.0) / 1.5, max(xs, default=1000.0) * 1.5
    ax.set_xscale("log")
    ax.set_xlim(x_low, x_high)
    ax.set_xticks(log_ticks(x_low, x_high))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_thousands))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_ylim(*_padded(min((p.low for p in points), default=0.0), max((p.high for p in points), default=100.0), 0.1))
    ax.set_xlabel("mean retrieved tokens per question (log scale)")
    ax.set_ylabel("held-out accuracy (%)")
    ax.grid(alpha=0.3)
    fig.subplots_adjust(left=0.15, right=0.97, top=0.96, bottom=0.2)
    points = dodge(ax, points)  # after the layout: it works in display pixels
    for row, p in zip(rows, points, strict=True):
        ax.errorbar(
            [p.x],
            [p.y],
            yerr=[[p.y - p.low], [p.high - p.y]],
            fmt="o" if _row_family(row) != "engram-reranking-off" else "s",
            color=p.color,
            capsize=CAPSIZE,
            markersize=MARKERSIZE,
            markeredgecolor="white",  # a thin white rim keeps a marker readable against a neighbour's bar
            markeredgewidth=0.5,
            label=p.text,
        )
    place_labels(fig, ax, points)  # last: it measures the final layout
    _footer(fig, ctx)
    return fig


def draw_per_category(ctx: FigureContext) -> Figure:
    rows = [
        r
        for r in ("engram-k3", "mem0-token-matched", "mem0-k3", "engram-reranking-off-k3")
        if ctx.has(f"heldout.{r}.accuracy")
    ]
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.8))
    width = 0.8 / max(len(rows), 1)
    positions = np.arange(len(SCORED_CATEGORIES))
    shades = {"engram-k3": 1.0, "mem0-token-matched": 1.0, "mem0-k3": 0.5, "engram-reranking-off-k3": 1.0}
    for i, row in enumerate(rows):
        stem = f"heldout.{row}.category"
        present = [c for c in SCORED_CATEGORIES if ctx.has(f"{stem}.{c}.accuracy")]
        values = np.array(
            [100 * ctx.value(f"{stem}.{c}.accuracy") if c in present else np.nan for c in SCORED_CATEGORIES]
        )
        low = np.array(
            [100 * ctx.value(f"{stem}.{c}.accuracy_ci_low") if c in present else np.nan for c in SCORED_CATEGORIES]
        )
        high = np.array(
            [100 * ctx.value(f"{stem}.{c}.accuracy_ci_high") if c in present else np.nan for c in SCORED_CATEGORIES]
        )
        ax.bar(
            positions + (i - (len(rows) - 1) / 2) * width,
            values,
            width,
            yerr=[values - low, high - values],
            error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#333333"},
            label=_row_label(ctx, row),
            color=COLORS[_row_family(row)],
            alpha=shades[row],
        )
    first = rows[0] if rows else None
    names = [
        f"{c}\nn = {ctx.display(f'heldout.{first}.category.{c}.n')}"
        if first and ctx.has(f"heldout.{first}.category.{c}.n")
        else c
        for c in SCORED_CATEGORIES
    ]
    ax.set_xticks(positions, names)
    ax.set_ylabel("accuracy (%), Wilson 95% CI")
    ax.set_ylim(0, 100)
    ax.legend(ncol=len(rows), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.subplots_adjust(left=0.075, right=0.99, top=0.88, bottom=0.2)
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
    fig, ax = plt.subplots(figsize=(DOUBLE, 2.8))
    markers = ["o", "s", "^"]
    extent = [0.0]  # the zero line is always in view
    for j, (a, b) in enumerate(pairs):
        xs, ys, lo, hi = [], [], [], []
        for i, conv in enumerate(convs):
            extent += [100 * ctx.value(f"compare.{a}_vs_{b}.conv.{conv}.ci_{end}") for end in ("low", "high")]
            stem = f"compare.{a}_vs_{b}.conv.{conv}"
            d = 100 * ctx.value(f"{stem}.delta")
            xs.append(i + (j - 1) * 0.22)
            ys.append(d)
            lo.append(d - 100 * ctx.value(f"{stem}.ci_low"))
            hi.append(100 * ctx.value(f"{stem}.ci_high") - d)
        label = f"{_row_label(ctx, a)} − {_row_label(ctx, b)}"
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[j], capsize=2, markersize=4, label=label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylim(*_padded(min(extent), max(extent)))
    ax.set_xticks(range(len(convs)), convs)
    ax.set_ylabel("Δ accuracy, points (Wald 95% CI)")
    # Above the axes, never over a point.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=max(len(pairs), 1), frameon=False, fontsize=6)
    ax.grid(axis="y", alpha=0.3)
    fig.subplots_adjust(left=0.08, right=0.99, top=0.9, bottom=0.14)
    _footer(fig, ctx)
    return fig


def _reliability_bins(cell: CalibrationCell) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per equal-width bin (10 of them): items, mean confidence and accuracy (NaN where a bin is empty)."""
    conf = confidences(cell.table.probs)
    hit = correct(cell.table.probs, cell.table.labels).astype(float)
    index = np.minimum((conf * 10).astype(int), 9)
    counts = np.bincount(index, minlength=10)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(index, weights=conf, minlength=10) / counts
        accuracy = np.bincount(index, weights=hit, minlength=10) / counts
    return counts, mean_conf, accuracy


FEW_ITEMS = 5  # a reliability bin with fewer items is drawn faded and kept off the line
FADED = 0.35


def draw_reliability(ctx: FigureContext) -> Figure:
    groups = sorted({(c.set_name, c.question) for c in ctx.calibration})
    columns = max(len(groups), 1)
    fig, axes = plt.subplots(
        2, columns, figsize=(DOUBLE, 3.6), squeeze=False, sharex="col", gridspec_kw={"height_ratios": [3, 1]}
    )
    edges = np.linspace(0, 1, 11)
    backends = sorted({c.backend for c in ctx.calibration})
    bar_width = 0.1 / max(len(backends), 1)
    for column, (set_name, question) in enumerate(groups):
        ax, counts_ax = axes[0][column], axes[1][column]
        eces = []
        for cell in (c for c in ctx.calibration if (c.set_name, c.question) == (set_name, question)):
            counts, mean_conf, accuracy = _reliability_bins(cell)
            solid = counts >= FEW_ITEMS
            few = (counts > 0) & ~solid
            ax.plot(
                mean_conf[solid],
                accuracy[solid],
                marker="o",
                markersize=3,
                color=COLORS[cell.backend],
                label=BACKEND_LABELS.get(cell.backend, cell.backend),
            )
            # A bin of 1-4 items says little about accuracy: its point is faded, hollow and left off the line.
            ax.plot(
                mean_conf[few],
                accuracy[few],
                linestyle="none",
                marker="o",
                markersize=3,
                markerfacecolor="none",
                color=COLORS[cell.backend],
                alpha=FADED,
            )
            shift = (backends.index(cell.backend) - (len(backends) - 1) / 2) * bar_width
            for solid_bins, alpha in ((solid, 1.0), (~solid, FADED)):
                counts_ax.bar(
                    edges[:-1][solid_bins] + 0.05 + shift,
                    counts[solid_bins],
                    bar_width,
                    color=COLORS[cell.backend],
                    alpha=alpha,
                )
            eces.append(
                f"{BACKEND_LABELS.get(cell.backend, cell.backend).split(' ')[0]} {ctx.display(f'{cell.stem}.ece')}"
            )
        ax.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=0.8)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.04, 1.04)  # points at 0 and 1 drawn whole
        ax.set_title(
            f"{QUESTION_TITLES.get(question, question)}\n{SET_TITLES.get(set_name, set_name)}\nECE: {', '.join(eces)}",
            fontsize=7,
        )
        counts_ax.set_xticks(edges[::2])
        counts_ax.set_xlabel("confidence (10 equal-width bins)")
        ax.tick_params(labelbottom=False)
    axes[0][0].set_ylabel("accuracy in bin")
    axes[1][0].set_ylabel("items in bin")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels) or 1, frameon=False)
    fig.subplots_adjust(left=0.08, right=0.97, top=0.76, bottom=0.15, wspace=0.25, hspace=0.12)
    _footer(fig, ctx)
    return fig


def draw_tradeoff(ctx: FigureContext) -> Figure:
    prefix, suffix = "tradeoff.theta_", ".theta"
    thetas = sorted(
        n.id[len(prefix) : -len(suffix)] for n in ctx.numbers if n.id.startswith(prefix) and n.id.endswith(suffix)
    )
    xs = [ctx.value(f"tradeoff.theta_{t}.theta") for t in thetas]
    fig, ax = plt.subplots(figsize=(SINGLE, 3.4))
    cost = [1000 * ctx.value(f"tradeoff.theta_{t}.cost") for t in thetas]
    ax.plot(xs, cost, color="black", marker=".", label="cost C(θ), left axis")
    ax.set_xlabel("escalation threshold θ")
    # The two y axes are told apart by what they name and by colour: the left one is the black cost line's, the
    # right one (in red) the error lines'.
    ax.set_ylabel("cost per 1,000 decisions (USD), black line")
    right = ax.twinx()
    for eps, style in (("0", "-"), ("0.1", "--")):
        err = [100 * ctx.value(f"tradeoff.theta_{t}.error_eps{eps}") for t in thetas]
        right.plot(xs, err, color="#d62728", linestyle=style, label=f"error E(θ) if ε_L = {eps}, right axis")
    kept = [100 * ctx.value(f"tradeoff.theta_{t}.jev_error_kept") for t in thetas]
    right.plot(xs, kept, color="#1f77b4", linestyle=":", label="ε_J(θ): Jev's error on kept decisions, right axis")
    right.set_ylabel("relation error (%), red and blue lines", color=RIGHT_AXIS)
    right.tick_params(axis="y", colors=RIGHT_AXIS)
    right.spines["right"].set_color(RIGHT_AXIS)
    # Each threshold is named beside its line, inside the frame, where the curves are not: the escalation threshold
    # at mid-height (below the error curves, above the still-low cost), the act threshold at the foot of its line.
    for theta, name, height in zip(MARKED_THETAS, ("escalate", "act"), (0.5, 0.03)):
        at = float(ctx.value(f"tradeoff.theta_{theta_id(theta)}.theta"))
        ax.axvline(at, color="#999999", linewidth=0.7)
        ax.text(
            at,
            height,
            f" {name} θ={at:.2f} ",
            transform=ax.get_xaxis_transform(),
            fontsize=6,
            va="bottom",
            ha="right",
            color="#555555",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.8},
        )
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    legend = fig.legend(
        handles, [str(h.get_label()) for h in handles], loc="upper left", ncol=1, frameon=False, fontsize=6
    )
    # The legend, then the definition of ε_L below it, then the axes below both: each in its own band.
    fig.canvas.draw()
    legend_box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    note = fig.text(
        0.02,
        legend_box.y0 - 0.01,
        "ε_L: assumed error of the LLM on escalated decisions",
        fontsize=6,
        color="#333333",
        va="top",
    )
    note_box = note.get_window_extent().transformed(fig.transFigure.inverted())
    fig.subplots_adjust(left=0.17, right=0.85, top=note_box.y0 - 0.05, bottom=0.14)  # room for the top tick label
    _footer(fig, ctx)
    return fig


RIGHT_AXIS = "#b22222"
COST_ARMS = [("mem0", "mem0 2.1.0"), ("engram-llm-decider", "engram, LLM decider"), ("engram-jev", "engram, Jev")]


def draw_cost_breakdown(ctx: FigureContext) -> Figure:
    arms = [(a, label) for a, label in COST_ARMS if ctx.has(f"dev.{a}.cost_per_1k")]
    fig, ax = plt.subplots(figsize=(SINGLE, 2.8))
    for i, (arm, _label) in enumerate(arms):
        total = ctx.value(f"dev.{arm}.cost_per_1k")
        text = ctx.display(f"dev.{arm}.cost_per_1k")
        if ctx.has(f"dev.{arm}.decision_cost_per_1k"):
            extract = ctx.value(f"dev.{arm}.extract_cost_per_1k")
            decision = ctx.value(f"dev.{arm}.decision_cost_per_1k")
            ax.barh(i, extract, color="#ff7f0e", label="extraction (LLM)" if i == len(arms) - 1 else None)
            # A dark edge keeps a slice of a few hundredths of the bar visible; its value is printed beside it.
            ax.barh(
                i,
                decision,
                left=extract,
                color="#1f77b4",
                edgecolor="#0b3d66",
                linewidth=0.8,
                label="decision layer" if i == len(arms) - 1 else None,
            )
            text += f"\n(decision {ctx.display(f'dev.{arm}.decision_cost_per_1k')})"
        else:
            ax.barh(i, total, color="#bbbbbb", hatch="//", label="not split (all mem0 LLM calls)")
        ax.annotate(text, (total, i), textcoords="offset points", xytext=(3, 0), va="center", fontsize=6)
    ax.set_yticks(range(len(arms)), [label for _, label in arms])
    ax.set_xlabel("write cost per 1,000 messages (USD)")
    fig.legend(loc="upper center", ncol=2, frameon=False, fontsize=6)
    # Bottom room for the axis label and, below it, the footer: the two never share a line.
    fig.subplots_adjust(left=0.4, right=0.97, top=0.82, bottom=0.24)
    _fit_to_labels(fig, ax, [ctx.value(f"dev.{a}.cost_per_1k") for a, _ in arms])
    _footer(fig, ctx)
    return fig


def _fit_to_labels(fig: Figure, ax: Axes, totals: list[float]) -> None:
    """The x range fitted to the bars and their value labels: the right edge sits just past the widest label, so
    the bars fill the frame instead of a fixed share of it. A label is a fixed width in pixels beside its bar, so
    the range solves total / x_max * width + label <= width for every bar."""
    largest = max(totals, default=0.0)
    if largest <= 0:  # stand-in runs cost $0: any range shows nothing
        ax.set_xlim(0, 1.0)
        return
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    width = ax.get_window_extent(renderer).width
    labels = [t.get_window_extent(renderer).width + 3 * fig.dpi / 72 for t in ax.texts]  # text + 3 pt offset
    need = max(
        (total * width / max(width - label, width * 0.2) for total, label in zip(totals, labels, strict=False)),
        default=largest,
    )
    ax.set_xlim(0, max(need, largest) * 1.03)


ACCURACY_INTERVAL = "Wilson 95% intervals"
DIFFERENCE_INTERVAL = "per-question Wald 95% intervals (mean d ± 1.96·sd/√n)"
FIGURES = [
    FigureSpec(
        "acc_vs_tokens",
        "Held-out accuracy against mean retrieved tokens per question (log scale), with "
        f"{ACCURACY_INTERVAL} of accuracy, for every held-out row; points whose intervals would touch at nearly the "
        "same token count are drawn a few pixels apart so each stays readable.",
        draw_acc_vs_tokens,
    ),
    FigureSpec(
        "per_category",
        "Held-out accuracy per LoCoMo category (n questions under each) for engram at k=3, mem0 at the "
        f"token-matched k, mem0 at k=3 and engram with reranking off, with {ACCURACY_INTERVAL}.",
        draw_per_category,
    ),
    FigureSpec(
        "perconv_diffs",
        "Per-conversation paired differences (engram minus mem0, points) with "
        f"{DIFFERENCE_INTERVAL}, at k=3, at the token-matched budget and at k=20.",
        draw_perconv_diffs,
    ),
    FigureSpec(
        "reliability",
        "Reliability diagrams of two decision models answering engram's typed questions: Jev (TypeSafe's typed "
        "decision model, the one engram uses) and laya, a zero-shot 421M open model shown for contrast. Top: "
        "accuracy against mean confidence (the probability of the chosen option) in 10 equal-width bins, the "
        "dashed diagonal being perfect calibration; bins with fewer than 5 items are drawn faded, hollow and off "
        "the line. Bottom: the number of items in each bin (faded: fewer than 5). Panels: 'relation to the "
        "candidate fact' asks how a new fact relates to a stored one (new, duplicate, refinement, update, "
        "contradiction), 'temporal status' whether a fact is past, current, planned or hypothetical; on the "
        "escalation-labelled decisions (decisions Jev was unsure of, those escalation sends to the LLM, labelled "
        "by claude-sonnet-4-6) and on the 50 gold contradiction pairs. ECE (expected calibration error): the item-weighted mean "
        "of |accuracy − mean confidence| over the bins.",
        draw_reliability,
    ),
    FigureSpec(
        "tradeoff",
        "Escalation cost/error curve on the gold contradiction pairs: cost per decision C(θ); ε_J(θ), Jev's error "
        "on the decisions it keeps (confidence ≥ θ); and the overall error E(θ) = (1 − p_esc)·ε_J(θ) + p_esc·ε_L "
        "for two assumed values of ε_L, the LLM's error on the escalated decisions (not measured); vertical lines "
        "at the production escalation threshold and the act threshold.",
        draw_tradeoff,
    ),
    FigureSpec(
        "cost_breakdown",
        "Write cost per 1,000 messages on the dev slice, split into extraction and the "
        "decision layer (mem0's calls are not split); the decision layer's cost is printed beside each split bar.",
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


FINGERPRINT_SUFFIX = ".fingerprint"


def render_figure(spec: FigureSpec, ctx: FigureContext, out_dir: Path) -> list[Path]:
    """Draw once; save in every format with fixed metadata, but only when what the figure draws changed: its
    fingerprint (bench.report.fingerprint: data and style, never pixels) is kept in `<name>.fingerprint` beside it,
    so a rebuild on another CPU, whose PNG rasteriser rounds a few pixels differently, leaves the files alone.
    Returns the figure's paths (written now or already current)."""
    ctx.used = []
    fig = spec.draw(ctx)
    spec.number_ids = sorted(set(ctx.used))
    paths = [out_dir / f"{spec.name}.{fmt}" for fmt in FORMATS]
    sidecar = out_dir / f"{spec.name}{FINGERPRINT_SUFFIX}"
    fingerprint = figure_fingerprint(fig, spec.draw)
    current = sidecar.is_file() and sidecar.read_text(encoding="utf-8").strip() == fingerprint
    if current and all(path.is_file() for path in paths):
        plt.close(fig)
        return paths
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}
    for fmt, path in zip(FORMATS, paths, strict=True):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=metadata[fmt], dpi=150 if fmt == "png" else None)
        write_bytes(path, buffer.getvalue(), f"figure {spec.name} ({fmt})")
    write_text(sidecar, fingerprint + "\n", f"the fingerprint of figure {spec.name}")  # last: a crash redraws
    plt.close(fig)
    return paths
