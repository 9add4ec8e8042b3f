"""`engram-bench view RESULT [RESULT_B] [--out report.html]`, or `view FOLDER` for a gallery of its results."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.errors import ResultError


def view(
    results: list[str] = typer.Argument(..., help="A result file, two to compare (A B), or one results folder."),
    out: Path | None = typer.Option(
        None, "--out", help="Where to write: default report.html, or gallery/ (index.html + one report per file)."
    ),
) -> None:
    """Write a self-contained HTML report (no network; opens from file://), or a gallery for a results folder."""
    from bench.view.report import write_gallery, write_report

    if not 1 <= len(results) <= 2:
        raise ResultError(f"view: expected RESULT [RESULT_B] or one results folder, found {len(results)} arguments")
    folders = [r for r in results if Path(r).is_dir()]
    if folders and len(results) > 1:
        raise ResultError(f"view: expected result files to compare, found the folder {folders[0]}")
    if folders:
        written = write_gallery(folders[0], out or Path("gallery"))
    else:
        written = write_report(results, out or Path("report.html"))
    typer.echo(f"wrote {written}")


def register(app: typer.Typer) -> None:
    app.command("view")(view)
