"""The v1 article's held-out tables (the numbers and tables are built by bench.report.heldout, which the figures
read too)."""

from __future__ import annotations

from bench.report.catalog import TABLES, PaperContext
from bench.report.heldout import register
from bench.report.tables import Table


@TABLES.register("heldout")
def heldout_tables(ctx: PaperContext) -> list[Table]:
    """The held-out tables: accuracy by budget, per category, per conversation."""
    return register(ctx.results, ctx.numbers)[1]
