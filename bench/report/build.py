"""The paper build: results/ → numbers.json, tables (Markdown + LaTeX), figures (SVG/PDF/PNG), article.md and the
appendix index. It reads only the result files of one stack directory under ``results/``.

``compute`` does all the arithmetic and returns a ``Paper``; ``write`` renders and writes its parts (all of them, or
the one entry an appendix command names), so ``paper check`` can recompute without writing anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.disk.atomic import write_json, write_text
from bench.errors import EntryError
from bench.registry import attach_info
from bench.report.article import render_article
from bench.report.catalog import FIGURE_SETS, PAPERS, TABLES, PaperContext
from bench.report.figures import FigureContext, render_figure
from bench.report.index import write_index
from bench.report.inputs import ResultSet, ResultView
from bench.report.numbers import Numbers, stable_numbers_json
from bench.report.paper import Paper
from bench.report.tables import Table, render
from bench.vocab import APPENDIX_DIR, DEFAULT_PAPER_STACK_DIR, PAPER_DIR, RESULTS_DIR


def compute(
    results_root: Path = RESULTS_DIR, stack_dir: str = DEFAULT_PAPER_STACK_DIR, view: ResultView | None = None
) -> Paper:
    """The v1 article from results/<stack_dir>/ (another stack, e.g. offline, gives the same tables of its runs)."""
    return compute_paper("v1", results_root, stack_dir, view)


def compute_paper(
    name: str, results_root: Path = RESULTS_DIR, stack_dir: str | None = None, view: ResultView | None = None
) -> Paper:
    """Every number, table and figure of the registered paper `name` (`bench.report.catalog.PAPERS`), read from
    results/<stack_dir or the paper's own>/; nothing is written."""
    spec = PAPERS.get(name, "paper")
    return compute_tables(spec.tables, results_root, stack_dir or spec.stack_dir, view, figures=spec.figures)


def compute_tables(
    names: Sequence[str],
    results_root: Path = RESULTS_DIR,
    stack_dir: str = DEFAULT_PAPER_STACK_DIR,
    view: ResultView | None = None,
    figures: str | None = None,
) -> Paper:
    """The registered tables `names`, in order, from one stack directory (and the figure set `figures`, if any):
    what a paper builds, and what `paper table NAME` builds for one table alone."""
    ctx = PaperContext(ResultSet(results_root, stack_dir, view), Numbers())
    tables: list[Table] = []
    for name in names:
        factory = TABLES.get(name, "table")
        info = TABLES.info(name)
        tables += [attach_info(table, info) for table in factory(ctx)]
    drawn = FIGURE_SETS.get(figures, "figure set")(ctx) if figures is not None else []
    return Paper(ctx.results, ctx.numbers, tables, drawn, ctx.calibration)


@dataclass
class BuildReport:
    written: list[Path]
    entries: list[str]


def build(
    results_root: Path = RESULTS_DIR,
    stack_dir: str = DEFAULT_PAPER_STACK_DIR,
    out_dir: Path = PAPER_DIR,
    only: str | None = None,
    appendix_dir: Path | None = APPENDIX_DIR,
    view: ResultView | None = None,
) -> BuildReport:
    """Compute everything, then write every output (or only the entry ``only`` names). The appendix index is
    written with a full build when ``appendix_dir`` is given."""
    return write(compute(results_root, stack_dir, view), out_dir, only=only, appendix_dir=appendix_dir)


def write(paper: Paper, out_dir: Path, only: str | None = None, appendix_dir: Path | None = None) -> BuildReport:
    entries = paper.entries()
    if only is not None and only not in entries:
        raise EntryError(f"paper build --only: expected one of {', '.join(entries)}, found {only!r}")
    selected = entries if only is None else [only]
    written: list[Path] = []
    ctx = FigureContext(paper.numbers, paper.results.label, paper.calibration)
    for spec in paper.figures:
        if f"figure:{spec.name}" in selected:
            written += render_figure(spec, ctx, out_dir / "figures")
    for table in paper.tables:
        if f"table:{table.name}" in selected:
            for kind in ("md", "tex"):
                written.append(write_text(out_dir / "tables" / f"{table.name}.{kind}", render(table, kind)))
    if "numbers" in selected:
        target = out_dir / "numbers.json"
        written.append(write_json(target, stable_numbers_json(paper.numbers.to_json(), target)))
    if "article" in selected:
        written.append(write_text(out_dir / "article.md", render_article(paper)))
    if only is None and appendix_dir is not None:
        written += write_index(paper, appendix_dir, paper.results.stack_dir, out_dir)
    return BuildReport(written, selected)
