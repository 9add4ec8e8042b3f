"""The registered figure sets: which figures each paper draws from its numbers.

Kept apart from the drawing modules on purpose: a figure's fingerprint hashes the source of the module that draws it
(bench.report.fingerprint), so registering a set there would mark every committed figure as changed.
"""

from __future__ import annotations

from bench.report.catalog import FIGURE_SETS, PaperContext
from bench.report.figures import FigureSpec, available
from bench.report.v3.figure import FIGURES as V3_FIGURES


@FIGURE_SETS.register("v1")
def v1_figures(ctx: PaperContext) -> list[FigureSpec]:
    """The v1 article's figures whose inputs this build has (a stack without calibration data: no reliability)."""
    return available(ctx.numbers, ctx.calibration)


@FIGURE_SETS.register("v3")
def v3_figures(ctx: PaperContext) -> list[FigureSpec]:
    """The v3 paper's accuracy-vs-tokens figure."""
    return list(V3_FIGURES)
