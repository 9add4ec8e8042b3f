"""The v1 article's calibration tables (the numbers, tables and cells are built by bench.report.calibration, which
the reliability figure reads too)."""

from __future__ import annotations

from bench.report.calibration import register
from bench.report.catalog import TABLES, PaperContext
from bench.report.tables import Table


@TABLES.register("calibration")
def calibration_tables(ctx: PaperContext) -> list[Table]:
    """The calibration tables; the cells are kept for the reliability figure."""
    cells, tables = register(ctx.results, ctx.numbers)
    ctx.calibration = cells
    return tables
