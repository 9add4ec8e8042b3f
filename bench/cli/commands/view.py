"""`engram-bench view RESULT [RESULT_B] [--out report.html]`, or `view FOLDER` for a gallery of its results."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.analysis.categories import parse_categories
from bench.data.audit import check_gold
from bench.disk.writable import check_file, check_folder
from bench.errors import ResultError
from bench.view.report import write_gallery, write_report


def view(
    results: list[str] = typer.Argument(..., help="A result file, two to compare (A B), or one results folder."),
    out: Path | None = typer.Option(
        None, "--out", help="Where to write: default report.html, or gallery/ (index.html + one report per file)."
    ),
    gold: str = typer.Option("official", "--gold", help="official | audited-exclude | audited (LoCoMo audit)."),
    categories: str | None = typer.Option(
        None, "--categories", help="Keep these categories: LoCoMo codes (1,2,3,4) or names."
    ),
) -> None:
    """Write a self-contained HTML report (no network; opens from file://), or a gallery for a results folder."""
    check_gold(gold)
    kept = parse_categories(categories)

    if not 1 <= len(results) <= 2:
        raise ResultError(f"view: expected RESULT [RESULT_B] or one results folder, found {len(results)} arguments")
    folders = [r for r in results if Path(r).is_dir()]
    if folders and len(results) > 1:
        raise ResultError(f"view: expected result files to compare, found the folder {folders[0]}")
    if folders:
        if out is not None and out.suffix.lower() in (".html", ".htm"):
            # A gallery is a folder (index.html + one report per file); a folder named x.html surprised its user.
            raise ResultError(f"view --out {out}: expected a folder for the gallery of {folders[0]}, found a file name")
        check_folder(out or Path("gallery"), "view --out")
    else:
        check_file(out or Path("report.html"), "view --out")
    if folders:
        written = write_gallery(folders[0], out or Path("gallery"), gold=gold, categories=kept)
    else:
        written = write_report(results, out or Path("report.html"), gold=gold, categories=kept)
    typer.echo(f"wrote {written}")


def register(app: typer.Typer) -> None:
    app.command("view")(view)
