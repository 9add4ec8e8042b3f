"""`engram-bench rescore PATH...`: recompute the LLM-free metrics of result files from their stored answers."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.analysis.categories import describe_filter, keep_categories, parse_categories
from bench.analysis.gold import gold_summary, under_gold
from bench.analysis.scoring.rescore import rescored
from bench.data.audit import OFFICIAL, load_errata
from bench.disk.writable import check_folder
from bench.results.schema import read_result, result_files_of, write_result


def rescore(
    paths: list[str] = typer.Argument(..., help="Result files, folders or quoted globs to rescore in place."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if any file would change."),
    gold: str = typer.Option(
        "official",
        "--gold",
        help="official rescores in place; audited-exclude | audited (comma list for several) print each file's "
        "LLM-free metrics under that gold beside the official, and write nothing unless --out is given.",
    ),
    errata_file: Path | None = typer.Option(None, "--errata", help="An errata file (default: the LoCoMo audit's)."),
    out: Path | None = typer.Option(None, "--out", help="With a non-official gold: write the rescored views here."),
    categories: str | None = typer.Option(
        None,
        "--categories",
        help="Summaries over these LoCoMo categories only (codes or names); writes nothing in place.",
    ),
) -> None:
    """Recompute locomo-f1, locomo-adversarial, mem0-f1 and mem0-bleu1 (no model is called; labels stay).

    Files are rewritten IN PLACE (atomically, each whole); --check writes nothing. Copy them first to keep the old."""
    if out is not None:
        check_folder(out, "rescore --out")
    if gold != "official" or categories is not None:
        _under_golds(paths, gold, errata_file, out, categories)
        return
    files = result_files_of(paths)
    # Every file is read and rescored before the first is written: a bad file leaves all of them untouched.
    planned = [(path, before, rescored(before)) for path in files for before in (read_result(path),)]
    changed = [(path, after) for path, before, after in planned if after.to_dict() != before.to_dict()]
    for path, after in changed:
        if not check:
            write_result(path, after)
        typer.echo(f"{'would rewrite' if check else 'rewrote in place'} {path}")
    typer.echo(
        f"rescore: {len(changed)} of {len(files)} file(s) "
        f"{'would be rewritten in place (nothing written: --check)' if check else 'rewritten in place'}"
    )
    if check and changed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("rescore")(rescore)


def _under_golds(
    paths: list[str], gold: str, errata_file: Path | None, out: Path | None, categories: str | None = None
) -> None:
    """Each file's LLM-free metrics under the official gold and under each named one, over the kept categories;
    the views go to --out."""
    kept = parse_categories(categories)
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.sides import parse_golds

    golds = [g for g in parse_golds(gold) if g != OFFICIAL]
    typer.echo(f"rescore: {describe_filter(kept)} (LoCoMo's numbering)")
    errata = load_errata(errata_file)
    files = result_files_of(paths)
    views = [
        (path, [keep_categories(under_gold(rescored(r), g, errata), kept) for g in golds], keep_categories(r, kept))
        for path in files
        for r in (read_result(path),)
    ]
    for path, seen, official in views:
        typer.echo(f"{path}")
        for result in (official, *seen):
            typer.echo(f"   {gold_summary(result)}")
    if out is not None:
        for path, seen, _ in views:
            for g, result in zip(golds, seen, strict=True):
                target = out / g / path.parent.name / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                write_result(target, result)
                typer.echo(f"wrote {target}")
