"""Figures rebuild byte-identically (no git churn) and carry their stack label."""

from __future__ import annotations

from pathlib import Path

from bench.report.figures import FigureContext, render_figure
from bench.report.paper import Paper


def test_a_figure_rebuilds_byte_identically_in_every_format(paper_v1: Paper, tmp_path: Path) -> None:
    ctx = FigureContext(paper_v1.numbers, paper_v1.results.label, paper_v1.calibration)
    spec = next(f for f in paper_v1.figures if f.name == "acc_vs_tokens")
    first = render_figure(spec, ctx, tmp_path / "a")
    second = render_figure(spec, ctx, tmp_path / "b")
    assert [p.suffix for p in first] == [".svg", ".pdf", ".png"]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name
    svg = first[0].read_text()
    assert "paper v1, Claude + Jev" in svg and "engram (k=3)" in svg
    # the plotted values are registered numbers
    assert "heldout.engram-k3.accuracy" in spec.number_ids and "heldout.mem0-k20.tokens" in spec.number_ids


def test_each_paper_figure_exists(paper_v1: Paper) -> None:
    names = {f.name for f in paper_v1.figures}
    assert names == {"acc_vs_tokens", "per_category", "perconv_diffs", "reliability", "tradeoff", "cost_breakdown"}
