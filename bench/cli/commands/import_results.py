"""`engram-bench import-results FILE... [--format FORMAT] [--name ARM] [--out DIR]`: peers' per-question LoCoMo
results as result files on the `imported` stack (the logic lives in bench.exchange.import_results)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.writable import check_folder, check_name
from bench.exchange.import_results import NOT_STATED, import_files
from bench.vocab import RUNS_DIR


def import_results(
    files: list[Path] = typer.Argument(..., help="Published per-question result files."),
    fmt: str = typer.Option(
        None,
        "--format",
        help="eval-results (EverMemOS/MemOS) | mem0 (evals.py) | zep-grades | omb (Open Memory Benchmark) | locomo "
        "(task_eval output); detected from the file when left out.",
    ),
    name: str = typer.Option("imported", "--name", help="The arm name the imported files carry."),
    out: Path = typer.Option(None, "--out", help="Root of the new files (default runs/imported/<name>/)."),
    judge: str = typer.Option(
        None, "--judge", help="The judge the source used, when the file does not state it (e.g. openai/gpt-4o-mini)."
    ),
) -> None:
    """Import, check the file's own aggregates against its rows, and write one result per conversation (and per
    judgment run); then `compare` pairs it with any arm on the questions both hold."""
    check_name(name, "import-results --name")
    target = check_folder(out or RUNS_DIR / "imported" / name, "import-results --out")
    written = import_files(files, fmt, name, target, judge or NOT_STATED, say=typer.echo)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo(f"import-results: {len(written)} file(s) from {len(files)} source file(s)")


def register(app: typer.Typer) -> None:
    app.command("import-results")(import_results)
