"""What a reader sees in each figure: every plotted point inside its axes, tick labels apart, legends off the data,
every name defined, and the interval each caption names."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Annotation
from matplotlib.transforms import Bbox
from statsmodels.stats.proportion import proportion_confint

from bench.report.build import compute, compute_paper
from bench.report.figures import FigureContext, FigureSpec, log_ticks
from bench.report.paper import Paper
from bench.vocab import RESULTS_DIR


@pytest.fixture(scope="module")
def paper_offline() -> Paper:
    return compute(RESULTS_DIR, "offline")


@pytest.fixture(scope="module")
def paper_v3() -> Paper:
    return compute_paper("v3", RESULTS_DIR)


def _draw(paper: Paper, name: str) -> Figure:
    spec = next(f for f in paper.figures if f.name == name)
    fig = spec.draw(FigureContext(paper.numbers, paper.results.label, paper.calibration))
    fig.canvas.draw()
    return fig


def _spec(paper: Paper, name: str) -> FigureSpec:
    return next(f for f in paper.figures if f.name == name)


def _data_points(ax: Axes) -> np.ndarray:
    """Every point drawn in data coordinates: line vertices, error-bar segment ends and bar corners."""
    points = []
    for line in ax.get_lines():
        if line.get_transform() == ax.transData:
            points.append(np.asarray(line.get_xydata(), dtype=float))
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            points += [np.asarray(s, dtype=float) for s in collection.get_segments()]
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_transform() == ax.transData:
            x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
            points.append(np.array([[x, y], [x + w, y + h]], dtype=float))
    stacked = np.vstack(points) if points else np.empty((0, 2))
    return stacked[~np.isnan(stacked).any(axis=1)]


def _inside(ax: Axes, points: np.ndarray) -> bool:
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    eps = 1e-9
    return bool(
        (
            (points[:, 0] >= x0 - eps)
            & (points[:, 0] <= x1 + eps)
            & (points[:, 1] >= y0 - eps)
            & (points[:, 1] <= y1 + eps)
        ).all()
    )


def _papers(request: pytest.FixtureRequest) -> list[Paper]:
    return [request.getfixturevalue(name) for name in ("paper_v1", "paper_offline", "paper_v3")]


def test_every_plotted_point_of_every_figure_lies_inside_its_axes(request: pytest.FixtureRequest) -> None:
    for paper in _papers(request):
        for spec in paper.figures:
            fig = _draw(paper, spec.name)
            for ax in fig.axes:
                points = _data_points(ax)
                assert _inside(ax, points), f"{paper.results.stack_dir}/{spec.name}: a point falls outside its axes"
            plt.close(fig)


def test_the_offline_accuracy_figure_shows_mem0_at_k3_and_the_token_matched_row(paper_offline: Paper) -> None:
    # mem0 at k=3 retrieves about 88 tokens per question offline: a fixed x range starting at 120 dropped it.
    assert paper_offline.numbers["heldout.mem0-k3.tokens"].value < 120
    assert "heldout.mem0-token-matched.accuracy" in paper_offline.numbers
    fig = _draw(paper_offline, "acc_vs_tokens")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert "mem0 (k=3)" in labels and any(label.startswith("mem0, token-matched") for label in labels)
    rows = [n.id for n in paper_offline.numbers if n.id.startswith("heldout.") and n.id.endswith(".tokens")]
    markers = [line for line in ax.get_lines() if line.get_marker() in ("o", "s")]
    assert len(markers) == len(rows)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    for text in ax.texts:  # the point labels stay inside the frame too
        box = text.get_window_extent(renderer)
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, text.get_text()
    plt.close(fig)


def _overlapping(boxes: list[tuple[str, Bbox]]) -> list[tuple[str, str]]:
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


def _too_close(labels: list[tuple[str, Bbox]], horizontal: bool) -> list[tuple[str, str, float]]:
    """Neighbouring tick labels closer than half a label's height (so "1,000" and "1,500" do not run together)."""
    ordered = sorted(labels, key=lambda item: item[1].x0 if horizontal else item[1].y0)
    close = []
    for (a, box_a), (b, box_b) in itertools.pairwise(ordered):
        gap = box_b.x0 - box_a.x1 if horizontal else box_b.y0 - box_a.y1
        if gap < 0.5 * min(box_a.height, box_b.height) / (2 if "\n" in a + b else 1):
            close.append((a, b, float(gap)))
    return close


def test_no_two_tick_labels_of_any_axis_run_together(request: pytest.FixtureRequest) -> None:
    for paper in _papers(request):
        for spec in paper.figures:
            fig = _draw(paper, spec.name)
            renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
            for ax in fig.axes:
                for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
                    labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
                    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
                    assert not _overlapping(boxes), f"{spec.name}: tick labels {_overlapping(boxes)} collide"
                    assert not _too_close(boxes, horizontal), f"{spec.name}: {_too_close(boxes, horizontal)}"
            plt.close(fig)


def test_log_ticks_are_few_and_far_apart() -> None:
    ticks = log_ticks(60, 2500)
    assert 2 <= len(ticks) <= 5
    assert all(b / a >= 2 for a, b in itertools.pairwise(ticks))  # at least 0.3 decades between neighbours
    assert log_ticks(100, 3200) == [100, 200, 500, 1000, 2000]


def test_the_legends_cover_no_data_axes(paper_v1: Paper) -> None:
    for name in ("perconv_diffs", "reliability", "per_category", "tradeoff"):
        fig = _draw(paper_v1, name)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
        assert legends, name
        for legend, ax in itertools.product(legends, fig.axes):
            assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), name
        plt.close(fig)


def test_the_reliability_diagram_counts_its_bins_and_names_its_models_in_words(paper_v1: Paper) -> None:
    fig = _draw(paper_v1, "reliability")
    count_axes = [ax for ax in fig.axes if ax.get_ylabel() == "items in bin" or ax.get_subplotspec().rowspan.start == 1]
    assert len(count_axes) == len({(c.set_name, c.question) for c in paper_v1.calibration})
    # the bars of one panel add up to the items of its label set, per model
    first = paper_v1.calibration[0]
    heights = sum(p.get_height() for p in count_axes[0].patches)
    same_panel = [c for c in paper_v1.calibration if (c.set_name, c.question) == (first.set_name, first.question)]
    assert heights == sum(len(c.table.labels) for c in same_panel)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles and not any("_" in t for t in titles), titles  # words, not code identifiers
    legend_texts = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert any("laya" in t and "zero-shot" in t for t in legend_texts), legend_texts
    caption = _spec(paper_v1, "reliability").caption
    assert "zero-shot" in caption
    # every name the figure prints is defined in the caption
    for name in (
        "Jev",
        "laya",
        "ECE (expected calibration error)",
        "relation to the candidate fact",
        "temporal status",
        "escalation-labelled decisions",
        "gold contradiction pairs",
        "fewer than 5 items",
    ):
        assert name in caption, name
    # a bin of fewer than 5 items is faded, in the count panel and as a hollow point off the line
    faded_bars = [p for p in count_axes[0].patches if p.get_alpha() is not None and p.get_alpha() < 1]
    assert all(p.get_height() < 5 for p in faded_bars)
    assert all(p.get_height() >= 5 for p in count_axes[0].patches if p not in faded_bars and p.get_height() > 0)
    plt.close(fig)


def test_per_category_shows_each_category_size_and_an_interval_per_bar(paper_v1: Paper) -> None:
    fig = _draw(paper_v1, "per_category")
    ax = fig.axes[0]
    assert all("n = " in t.get_text() for t in ax.get_xticklabels())
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert bars and all(c.errorbar is not None for c in bars)
    assert "heldout.engram-k3.category.multi-hop.accuracy_ci_low" in paper_v1.numbers
    plt.close(fig)


def test_the_tradeoff_figure_labels_every_line_and_defines_both_error_rates(paper_v1: Paper) -> None:
    fig = _draw(paper_v1, "tradeoff")
    labelled = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_transform() == ax.transData:
                assert line.get_label() in labelled, line.get_label()
    caption = _spec(paper_v1, "tradeoff").caption
    assert "ε_J(θ), Jev's error on the decisions it keeps" in caption
    assert "ε_L, the LLM's error on the escalated decisions" in caption
    plt.close(fig)


def test_the_tradeoff_figure_keeps_legend_note_and_threshold_labels_apart_and_names_its_two_axes(
    paper_v1: Paper,
) -> None:
    fig = _draw(paper_v1, "tradeoff")
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    left, right = fig.axes[0], fig.axes[1]
    frame = left.get_window_extent(renderer)
    thresholds = [t for t in left.texts if "θ=" in t.get_text()]
    assert len(thresholds) == 2
    for text in thresholds:  # inside the frame
        box = text.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    legend = fig.legends[0].get_window_extent(renderer)
    note = next(t for t in fig.texts if t.get_text().startswith("ε_L:")).get_window_extent(renderer)
    above_axes = left.get_tightbbox(renderer).y1
    assert not legend.overlaps(note) and note.y0 > frame.y1 and legend.y0 > frame.y1 and note.y0 >= above_axes - 1
    assert "black" in left.get_ylabel() and "red" in right.get_ylabel()
    assert right.yaxis.label.get_color() != left.yaxis.label.get_color()  # told apart by colour too
    plt.close(fig)


def test_the_cost_labels_stay_inside_the_frame_and_the_small_decision_slice_is_named(paper_v1: Paper) -> None:
    fig = _draw(paper_v1, "cost_breakdown")
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, text.get_text()
    # the range is fitted: the widest label ends near the right edge, not a third of the frame short of it
    assert max(t.get_window_extent(renderer).x1 for t in ax.texts) > frame.x1 - 0.06 * frame.width
    footer = next(t for t in fig.texts if t.get_text() == paper_v1.results.label).get_window_extent(renderer)
    assert not footer.overlaps(ax.xaxis.label.get_window_extent(renderer))  # the footer clear of the axis label
    jev_decision = paper_v1.numbers["dev.engram-jev.decision_cost_per_1k"].display
    assert jev_decision == "$0.125"
    assert any(jev_decision in t.get_text() for t in ax.texts)
    plt.close(fig)


def test_each_caption_names_the_interval_it_draws(paper_v1: Paper) -> None:
    captions = {f.name: f.caption for f in paper_v1.figures}
    assert "Wilson" in captions["acc_vs_tokens"] and "Wilson" in captions["per_category"]
    assert "Wald" in captions["perconv_diffs"]
    # the numbers behind them say the same
    assert "Wilson" in (paper_v1.numbers["heldout.engram-k3.accuracy_ci_low"].note or "")
    assert "Wald" in (paper_v1.numbers["heldout.mem0-k3.ci_low"].note or "")


def test_a_stand_in_build_marks_every_panel_inside_the_plot_and_the_article_build_does_not(
    paper_offline: Paper, paper_v1: Paper
) -> None:
    from bench.report.figures import STANDIN_MARK

    for spec in paper_offline.figures:
        fig = _draw(paper_offline, spec.name)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        marked = [ax for ax in fig.axes if any(t.get_text() == STANDIN_MARK for t in ax.texts)]
        assert marked, spec.name
        for ax in marked:
            text = next(t for t in ax.texts if t.get_text() == STANDIN_MARK)
            drawn = [*ax.patches, *ax.lines, *ax.collections]
            assert all(text.get_zorder() > a.get_zorder() for a in drawn), spec.name  # no bar hides the mark
            mark = text.get_window_extent(renderer)
            frame = ax.get_window_extent(renderer)
            assert (
                frame.x0 <= mark.x0 + mark.width / 2 <= frame.x1 and frame.y0 <= mark.y0 + mark.height / 2 <= frame.y1
            )
        plt.close(fig)
    for spec in paper_v1.figures:
        fig = _draw(paper_v1, spec.name)
        assert not any(t.get_text() == STANDIN_MARK for ax in fig.axes for t in ax.texts), spec.name
        plt.close(fig)


# ------------------------------------------------------------------------------------------ accuracy-vs-tokens labels


def _points(fig: Figure, ax: Axes) -> list[tuple[float, Bbox, list[Bbox]]]:
    """Per error-bar point: its x in data, its marker's rendered box, and the rendered boxes of its bar and caps."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    out = []
    for container in ax.containers:
        if not isinstance(container, ErrorbarContainer):
            continue
        data_line, caps, bars = container.lines
        assert data_line is not None
        parts = [cap.get_window_extent(renderer) for cap in caps]
        for collection in bars:
            half = max(collection.get_linewidths()) * fig.dpi / 72 / 2
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = ax.transData.transform(segment)
                parts.append(Bbox.from_extents(min(x0, x1) - half, min(y0, y1), max(x0, x1) + half, max(y0, y1)))
        out.append((float(data_line.get_xdata()[0]), data_line.get_window_extent(renderer), parts))
    return out


def _distance(a: Bbox, b: Bbox) -> float:
    dx = max(b.x0 - a.x1, a.x0 - b.x1, 0.0)
    dy = max(b.y0 - a.y1, a.y0 - b.y1, 0.0)
    return float(np.hypot(dx, dy))


def assert_labels_beside_their_points(fig: Figure, ax: Axes, where: str) -> int:
    """No point label covers another point's marker, bar or caps, or another label; each label is nearer its own
    point than any other and within a few points of it; no marker sits on another point's bar. Returns the labels
    checked."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    points = _points(fig, ax)
    labels = [t for t in ax.texts if isinstance(t, Annotation)]
    boxes = [t.get_window_extent(renderer) for t in labels]
    near = 12 * fig.dpi / 72  # a label starts at most 12 pt from its point
    for text, box in zip(labels, boxes, strict=True):
        own = [i for i, (x, _, _) in enumerate(points) if np.isclose(x, text.xy[0])]
        assert len(own) == 1, f"{where}: label {text.get_text()!r} anchored on {len(own)} points"
        for i, (_, marker, parts) in enumerate(points):
            if i == own[0]:
                continue
            hit = [b for b in [marker, *parts] if b.overlaps(box)]
            assert not hit, f"{where}: label {text.get_text()!r} lies on another point's marker or error bar"
        distances = [_distance(box, Bbox.union([marker, *parts])) for _, marker, parts in points]
        assert distances[own[0]] <= near, f"{where}: label {text.get_text()!r} is {distances[own[0]]:.0f} px away"
        assert distances[own[0]] == min(distances), f"{where}: label {text.get_text()!r} is nearer another point"
    assert not _overlapping([(t.get_text(), b) for t, b in zip(labels, boxes, strict=True)]), where
    for (_, marker, _), (_, _, other_parts) in itertools.permutations(points, 2):
        assert not any(marker.overlaps(b) for b in other_parts), f"{where}: a marker sits on another point's bar"
    return len(labels)


def test_acc_vs_tokens_labels_sit_beside_their_own_points_clear_of_every_other_bar(
    request: pytest.FixtureRequest,
) -> None:
    for paper in _papers(request)[:2]:  # v1 and offline (v3's figure is checked below)
        fig = _draw(paper, "acc_vs_tokens")
        ax = fig.axes[0]
        checked = assert_labels_beside_their_points(fig, ax, f"{paper.results.stack_dir}/acc_vs_tokens")
        assert checked == len(_points(fig, ax)) >= 5  # every point labelled
        plt.close(fig)


def test_points_at_the_same_token_count_are_drawn_apart_and_the_caption_says_so(paper_offline: Paper) -> None:
    # offline, engram k=3 with and without reranking retrieve the same tokens and their intervals overlap
    rows = ("engram-k3", "engram-reranking-off-k3")
    tokens = [paper_offline.numbers[f"heldout.{row}.tokens"].value for row in rows]
    assert abs(tokens[0] - tokens[1]) / tokens[0] < 0.05
    fig = _draw(paper_offline, "acc_vs_tokens")
    ax = fig.axes[0]
    labels = {t.get_text(): t.xy[0] for t in ax.texts if isinstance(t, Annotation)}
    shown = [
        labels[next(name for name in labels if name.startswith(start))] for start in ("engram (k=3)", "engram, rer")
    ]
    apart = abs(ax.transData.transform((shown[0], 1.0))[0] - ax.transData.transform((shown[1], 1.0))[0])
    assert apart >= 4 * fig.dpi / 72  # at least a marker's width between their centres
    assert "drawn a few pixels apart" in _spec(paper_offline, "acc_vs_tokens").caption
    plt.close(fig)


def test_the_v3_figure_draws_each_systems_wilson_interval_on_one_scale_and_names_every_system_in_full(
    paper_v3: Paper,
) -> None:
    fig = _draw(paper_v3, "v3_acc_vs_tokens")
    panels = [ax for ax in fig.axes if ax.containers]
    assert len(panels) == 2
    assert panels[0].get_ylim() == panels[1].get_ylim()  # one accuracy scale
    n = int(paper_v3.numbers["v3.H1.n"].value)
    bars = 0
    for ax, budget in zip(panels, ("tight", "generous"), strict=True):
        for container in (c for c in ax.containers if isinstance(c, ErrorbarContainer)):
            (segment,) = container.lines[2][0].get_segments()
            low, high = sorted(segment[:, 1])
            y = float(container.lines[0].get_ydata()[0])
            key = next(
                k.split(".")[2]
                for k in (x.id for x in paper_v3.numbers)
                if k.startswith(f"t3.{budget}.") and np.isclose(100 * paper_v3.numbers[k].value, y)
            )
            # the interval recomputed here from the pooled accuracy: Wilson 95% over the held-out questions
            expected = proportion_confint(round(y / 100 * n), n, alpha=0.05, method="wilson")
            assert np.allclose([low, high], 100 * np.asarray(expected)), (budget, key)
            bars += 1
        assert_labels_beside_their_points(fig, ax, f"v3/{budget}")
    assert bars == 11
    names = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert len(names) == 7
    for short in ("T0R", "T0R-LLM", "L0", "engram v2", "mem0 2.1.0", "Jev-Mem", "full context"):
        spelled = [name for name in names if name.split(":")[0] == short]
        assert len(spelled) == 1 and len(spelled[0].split(":")[1].split()) >= 2, (short, names)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for legend, ax in itertools.product(fig.legends, fig.axes):
        assert not legend.get_window_extent(renderer).overlaps(ax.get_tightbbox(renderer))
        assert (
            fig.bbox.x0 <= legend.get_window_extent(renderer).x0 <= legend.get_window_extent(renderer).x1 <= fig.bbox.x1
        )
    assert "Wilson 95%" in _spec(paper_v3, "v3_acc_vs_tokens").caption
    plt.close(fig)
