"""`engram-bench paper build|check|appendix`: the paper artefacts from results/."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from bench.vocab import APPENDIX_DIR, DEFAULT_PAPER_STACK_DIR, PAPER_DIR, RESULTS_DIR


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
    ) -> None:
        """Write numbers.json, tables, figures, article.md and the appendix index."""
        from bench.report.build import build  # the build loads matplotlib and the stats stack: only when asked

        started = time.perf_counter()
        default_stack = stack == DEFAULT_PAPER_STACK_DIR
        out_dir = out or (PAPER_DIR if default_stack else PAPER_DIR / stack)
        report = build(results, stack, out_dir, only=only, appendix_dir=APPENDIX_DIR if default_stack else None)
        typer.echo(
            f"paper build: {len(report.written)} files from results/{stack}/ into {out_dir} "
            f"in {time.perf_counter() - started:.1f} s"
        )

    @paper.command("check")
    def check_command(
        stack: str = typer.Option(DEFAULT_PAPER_STACK_DIR, help="results/<stack>/ to recompute from"),
        numbers: Path = typer.Option(PAPER_DIR / "numbers.json", help="the committed numbers.json"),
        results: Path = typer.Option(RESULTS_DIR, help="the results root"),
    ) -> None:
        """Recompute every number; fail naming the id if one differs from numbers.json or the article."""
        from bench.report.check import check

        report = check(results, stack, numbers)
        for problem in report.problems:
            typer.echo(f"paper check: {problem}", err=True)
        if report.problems:
            typer.echo(f"paper check: FAILED, {len(report.problems)} numbers differ", err=True)
            raise typer.Exit(1)
        typer.echo(
            f"paper check: ok, {report.checked_committed} numbers match numbers.json and "
            f"{report.checked_article} match the article (bootstrap intervals within 1.0 point); "
            "tables and article.md are current"
        )

    @appendix.command("run")
    def appendix_run(
        entry: str = typer.Argument(..., help="an entry of appendix_e/INDEX.md"),
        out: Path = typer.Option(PAPER_DIR, help="output directory"),
    ) -> None:
        """Re-execute one appendix entry."""
        from bench.report.appendix import run_entry

        for path in run_entry(entry, out):
            typer.echo(str(path))
