"""`engram-bench paper build|check|appendix`: the paper artefacts from results/."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from bench.analysis.categories import parse_categories
from bench.data.audit import check_gold
from bench.disk.writable import check_folder
from bench.errors import ConfigError, NumberError, PaperError
from bench.report.appendix import list_entries, run_entry
from bench.report.catalog import PAPERS, TABLES
from bench.report.gold import paper_view, view_dir, write_gold_note
from bench.run.terminal import step
from bench.vocab import APPENDIX_DIR, DEFAULT_PAPER_STACK_DIR, PAPER_DIR, RESULTS_DIR

# --paper NAME: a paper registered in bench.report.catalog.PAPERS (v1 is the default, the article of results/v1).
PAPER_HELP = "v3: the current paper (results/v3 -> paper/v3); default: the v1 article"
DEFAULT_PAPER = "v1"


def _paper_name(name: str | None) -> str:
    if name is None:
        return DEFAULT_PAPER
    if name not in PAPERS:
        raise ConfigError(f"--paper: expected one of {', '.join(PAPERS.names())}, found {name!r}")
    return name


def _exit_on_problems(command: str, problems: Sequence[object], what: str) -> None:
    """Each problem on its own stderr line, then a FAILED count and exit 1; nothing when there are none."""
    for problem in problems:
        typer.echo(f"{command}: {problem}", err=True)
    if problems:
        typer.echo(f"{command}: FAILED, {len(problems)} {what} differ", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    paper = typer.Typer(
        help="Build and check the paper's numbers, tables, figures and article from results/.", no_args_is_help=True
    )
    appendix = typer.Typer(help="Appendix E: re-run the command behind one table or figure.", no_args_is_help=True)
    paper.add_typer(appendix, name="appendix")
    app.add_typer(paper, name="paper")

    @paper.command("build")
    def build_command(
        stack: str = typer.Option(
            DEFAULT_PAPER_STACK_DIR, help="results/<stack>/ to read: v1 (the article) or offline"
        ),
        out: Path = typer.Option(None, help="output directory (default paper/, or paper/<stack>/ for other stacks)"),
        only: str = typer.Option(None, help="one appendix entry, e.g. table:heldout or figure:acc_vs_tokens"),
        results: Path = typer.Option(RESULTS_DIR, help="the results root"),
        paper_name: str = typer.Option(None, "--paper", help=PAPER_HELP),
        gold: str = typer.Option(
            "official",
            "--gold",
            help="official | audited-exclude | audited: read every result under this gold (default out: "
            "<paper dir>/gold-<gold>/, never over the paper).",
        ),
        categories: str = typer.Option(None, "--categories", help="Keep these LoCoMo categories (codes or names)."),
    ) -> None:
        """Write numbers.json, tables, figures, article.md, the appendix index and gold.md (gold and ceilings)."""
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.build import compute, write

        started = time.perf_counter()
        if out is not None:
            check_folder(out, "paper build --out")
        check_gold(gold)
        kept = parse_categories(categories)
        view = paper_view(gold, kept)
        name = _paper_name(paper_name)
        if name != DEFAULT_PAPER:
            _build_named(name, out, only, results, view, gold, kept, started)
            return
        default_stack = stack == DEFAULT_PAPER_STACK_DIR
        out_dir = out or (PAPER_DIR if default_stack else PAPER_DIR / stack)
        if view is not None and out is None:
            out_dir = view_dir(out_dir, gold, kept)
        # the appendix index names the files a build wrote: only a build into paper/ itself rewrites it (a build
        # with --out writes nothing outside that directory)
        writes_appendix = PAPERS.get(DEFAULT_PAPER).writes_appendix
        appendix = APPENDIX_DIR if writes_appendix and default_stack and view is None and out is None else None
        with step(f"paper build: computing and drawing from results/{stack}/"):
            paper = compute(results, stack, view)
            if view is not None:  # a view may lack what the article prints (category 5): refuse before writing
                _article_renders(paper, gold, categories)
            report = write(paper, out_dir, only=only, appendix_dir=appendix)
            written = [*report.written, *([write_gold_note(out_dir, gold, kept)] if only is None else [])]
        # The same build counts the same: files in out_dir, the appendix index (only a build into paper/ writes
        # it) said apart, where one total once read 37 here and 35 with --out.
        index = [path for path in written if appendix is not None and path.is_relative_to(appendix)]
        beside = f", and the appendix index ({len(index)} files in {appendix})" if index else ""
        typer.echo(
            f"paper build: {len(written) - len(index)} files from results/{stack}/ into {out_dir}{beside} "
            f"(gold {gold}) in {time.perf_counter() - started:.1f} s"
        )

    def _build_named(
        name: str,
        out: Path | None,
        only: str | None,
        results: Path,
        view: Any,
        gold: str,
        kept: Any,
        started: float,
    ) -> None:
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.build import compute_paper, write

        spec = PAPERS.get(name)
        target = out or (spec.out_dir if view is None else view_dir(spec.out_dir, gold, kept))
        with step(f"paper build --paper {name}: computing and drawing from results/{spec.stack_dir}/"):
            report = write(compute_paper(name, results, view=view), target, only=only)
            written = [*report.written, *([write_gold_note(target, gold, kept)] if only is None else [])]
        typer.echo(
            f"paper build --paper {name}: {len(written)} files from results/{spec.stack_dir}/ into {target} "
            f"(gold {gold}) in {time.perf_counter() - started:.1f} s"
        )

    def _article_renders(paper: Any, gold: str, categories: str | None) -> None:
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.article import render_article

        try:
            render_article(paper)
        except NumberError as exc:
            raise PaperError(
                f"paper build --gold {gold} --categories {categories}: expected every number the article prints, "
                f"found one missing under this view ({exc}); keep category 5 or use --paper v3"
            ) from None

    @paper.command("table")
    def table_command(
        names: list[str] = typer.Argument(None, help="registered tables to build, in order (none: list them)"),
        stack: str = typer.Option(DEFAULT_PAPER_STACK_DIR, help="results/<stack>/ to read"),
        out: Path = typer.Option(None, help="output directory (its tables/ gets NAME.md and NAME.tex)"),
        results: Path = typer.Option(RESULTS_DIR, help="the results root"),
    ) -> None:
        """Build registered tables alone (built-in, or from a package's `engram_bench.tables` entry point)."""
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.build import compute_tables, write

        if not names:
            for name in TABLES.names():
                typer.echo(f"{name}  ({TABLES.origin(name)})")
            return
        for name in names:  # an unknown or broken table: one line naming it, before --out or anything is read
            TABLES.get(name, "paper table")
        if out is None:
            raise ConfigError("paper table --out: expected an output directory, found none")
        check_folder(out, "paper table --out")
        paper = compute_tables(names, results, stack)
        # the tables and the numbers they cite, never the article (a table alone does not make the paper)
        for entry in [f"table:{table.name}" for table in paper.tables] + ["numbers"]:
            for path in write(paper, out, only=entry).written:
                typer.echo(str(path))
        typer.echo(
            f"paper table: {len(paper.tables)} table(s) and the {len(paper.numbers)} numbers they registered, from "
            f"results/{stack}/ into {out}"
        )

    @paper.command("check")
    def check_command(
        stack: str = typer.Option(DEFAULT_PAPER_STACK_DIR, help="results/<stack>/ to recompute from"),
        numbers: Path = typer.Option(PAPER_DIR / "numbers.json", help="the committed numbers.json"),
        results: Path = typer.Option(RESULTS_DIR, help="the results root"),
        paper_name: str = typer.Option(None, "--paper", help=PAPER_HELP),
    ) -> None:
        """Recompute every number; fail naming the id if one differs from numbers.json or the article."""
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.check import check

        name = _paper_name(paper_name)
        if name != DEFAULT_PAPER:
            _check_named(name, results)
            return
        with step(f"paper check: recomputing every number from results/{stack}/"):
            report = check(results, stack, numbers)
        _exit_on_problems("paper check", report.problems, "numbers")
        typer.echo(
            f"paper check: ok, {report.checked_committed} numbers match numbers.json and "
            f"{report.checked_article} match the article (bootstrap intervals within 1.0 point); "
            "tables and article.md are current"
        )

    def _check_named(name: str, results: Path) -> None:
        # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s) stays out of `engram-bench --help`
        from bench.report.check import check_paper

        spec = PAPERS.get(name)
        with step(f"paper check --paper {name}: recomputing every number from results/{spec.stack_dir}/"):
            report = check_paper(name, results)
        _exit_on_problems(f"paper check --paper {name}", report.problems, "numbers or files")
        committed = spec.out_dir.relative_to(PAPER_DIR.parent) / "numbers.json"
        typer.echo(
            f"paper check --paper {name}: ok, {report.checked_committed} numbers match {committed} and all "
            f"{report.checked_article} printed numbers of results/{spec.stack_dir}/{spec.article_numbers} match at "
            "their printed precision; tables are current"
        )

    @appendix.command("list")
    def appendix_list() -> None:
        """Every entry of appendix_e/INDEX.md: what it writes and how many result files it reads."""
        entries = list_entries()
        width = max((len(e["entry"]) for e in entries), default=0)
        for e in entries:
            outputs = ", ".join(e.get("outputs", []))
            typer.echo(f"{e['entry']:<{width}}  writes {outputs}; reads {len(e.get('reads', []))} result files")
        typer.echo(f"{len(entries)} entries; re-run one with `engram-bench paper appendix run ENTRY`")

    @appendix.command("run")
    def appendix_run(
        entry: str = typer.Argument(..., help="an entry of appendix_e/INDEX.md"),
        out: Path = typer.Option(PAPER_DIR, help="output directory"),
    ) -> None:
        """Re-execute one appendix entry."""
        check_folder(out, "paper appendix run --out")
        for path in run_entry(entry, out):
            typer.echo(str(path))
