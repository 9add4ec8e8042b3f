"""`engram-bench rejudge SPEC... --judge lexical|mem0-lenient|strict`: judge stored answers again, into new files."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.analysis.rejudge import judge_bills, judge_choice, judge_entry, rejudge_files
from bench.disk.writable import check_folder
from bench.errors import ResultError
from bench.models.provider import shown_model
from bench.results.schema import result_files_of
from bench.vocab import RUNS_DIR


def rejudge(
    paths: list[str] = typer.Argument(..., help="Result files, folders or quoted globs whose answers to judge again."),
    judge: str = typer.Option(..., "--judge", help="lexical (offline stand-in) | mem0-lenient | strict (a prompt)."),
    stack: str = typer.Option(
        None, "--stack", help="Whose judge model gets the prompt (e.g. paper); lexical: offline."
    ),
    out: Path = typer.Option(RUNS_DIR / "rejudge", "--out", help="Root of the new files: <out>/<judge>/<path>."),
    mode: str = typer.Option(None, "--mode", help="Gateway mode: live | replay | record (default from keys)."),
    yes: bool = typer.Option(False, "--yes", help="Allow paid judge calls (a judge on a paid stack)."),
    gold: str = typer.Option(
        "official",
        "--gold",
        help="Judge against this gold: official | audited (the LoCoMo audit's corrected answers) | audited-exclude.",
    ),
) -> None:
    """Re-judge the answers of result files; each new file points at its original, which is left untouched."""
    choice = judge_choice(judge, stack)
    check_folder(out, "rejudge --out")
    files = result_files_of(paths)
    if judge_bills(choice) and mode != "replay" and not yes:
        raise ResultError(
            f"rejudge --judge {judge} --stack {stack}: judging {len(files)} file(s) may send paid calls; "
            "pass --yes to allow it, or --mode replay to use only recorded judgings"
        )
    written = rejudge_files(files, choice, out, mode, gold)
    for target, result in written:
        typer.echo(
            f"{target}: {result.accuracy.correct}/{result.accuracy.n} correct, judged by {shown_model(result.models['judge'])} "
            f"against the {gold} gold"
        )
    if written:
        # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
        from bench.analysis.judge_probe import rate_line

        typer.echo(rate_line(judge_entry(written[0][1])))


def register(app: typer.Typer) -> None:
    app.command("rejudge")(rejudge)
