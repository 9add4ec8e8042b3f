"""`make paper` twice, or on another CPU, leaves the tree clean: a figure is rewritten only when what it draws
changes (its fingerprint: data and style), never because a rasteriser rounded a few pixels differently."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from bench.report.figures import FigureContext, FigureSpec, render_figure


def _context() -> FigureContext:
    return FigureContext(numbers=None, stack_label="test stack", calibration=[])  # type: ignore[arg-type]


def _bars(heights: list[float]) -> FigureSpec:
    def draw(_: FigureContext) -> Figure:
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.bar(["mem0", "engram"], heights, color="#1f77b4")
        ax.set_ylabel("accuracy")
        return fig

    return FigureSpec("bars", "two bars", draw)


def test_an_unchanged_figure_is_not_rewritten_even_if_its_png_differs_by_a_few_pixels(tmp_path: Path) -> None:
    paths = render_figure(_bars([0.61, 0.74]), _context(), tmp_path)
    png = tmp_path / "bars.png"
    other_cpu = bytearray(png.read_bytes())
    other_cpu[-40] ^= 0x01  # what another machine's rasteriser might have produced
    png.write_bytes(bytes(other_cpu))
    stamps = {p: p.stat().st_mtime_ns for p in paths}

    again = render_figure(_bars([0.61, 0.74]), _context(), tmp_path)

    assert again == paths and {p: p.stat().st_mtime_ns for p in paths} == stamps
    assert png.read_bytes() == bytes(other_cpu)  # left alone: the drawing did not change
    assert (tmp_path / "bars.fingerprint").read_text().strip().isalnum()


def test_a_changed_value_or_a_missing_file_redraws_the_figure(tmp_path: Path) -> None:
    render_figure(_bars([0.61, 0.74]), _context(), tmp_path)
    before = (tmp_path / "bars.fingerprint").read_text()
    svg_before = (tmp_path / "bars.svg").read_text()

    render_figure(_bars([0.61, 0.79]), _context(), tmp_path)
    assert (tmp_path / "bars.fingerprint").read_text() != before
    assert (tmp_path / "bars.svg").read_text() != svg_before

    (tmp_path / "bars.pdf").unlink()
    render_figure(_bars([0.61, 0.79]), _context(), tmp_path)
    assert (tmp_path / "bars.pdf").is_file()


def test_a_last_digit_of_float_noise_does_not_change_the_fingerprint(tmp_path: Path) -> None:
    render_figure(_bars([0.61, 0.74]), _context(), tmp_path)
    first = (tmp_path / "bars.fingerprint").read_text()
    render_figure(_bars([0.61 + 1e-13, 0.74]), _context(), tmp_path)
    assert (tmp_path / "bars.fingerprint").read_text() == first
