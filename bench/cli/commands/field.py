"""`engram-bench field [RESULTS...] [--reference TEXT] [--as terminal|markdown|html] [--out FILE] [--shipped-only]`:
the field's published LoCoMo runs and ours side by side under one scoring; `field --build` writes the shipped table
(docs/field.md, docs/field.html) and `field --check` says whether it is current (the logic lives in
bench.report.field)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.atomic import write_text
from bench.disk.writable import check_file
from bench.errors import ConfigError, DataError
from bench.vocab import REPO_ROOT


def field(
    specs: list[str] = typer.Argument(None, help="More result files (e.g. runs/imported/<name>/), one run per arm."),
    reference: str = typer.Option(
        None,
        "--reference",
        help="Pair every run with the one whose system or source holds this text (default: the first).",
    ),
    kind: str = typer.Option("terminal", "--as", help="terminal | markdown | html."),
    out: Path = typer.Option(None, "--out", help="Write the table here instead of printing it."),
    peer_files: Path = typer.Option(
        None,
        "--peer-files",
        help="Where published files that may not ship are (default $ENGRAM_PEER_FILES or "
        "~/.cache/engram-bench/peer-files); the shipped ones are always read from data/.",
    ),
    shipped_only: bool = typer.Option(
        False, "--shipped-only", help="Only the published files shipped in data/ (what a fresh clone holds)."
    ),
    build: bool = typer.Option(False, "--build", help="Write the shipped table, docs/field.md and docs/field.html."),
    check: bool = typer.Option(False, "--check", help="Exit 1 when docs/field.md or docs/field.html is not current."),
) -> None:
    """Every published file of data/peer-files.toml (the shipped ones, and the others a user put in the peer-files
    folder), our results/v1 and results/v3 runs and the runs named: coverage, accuracy under the official and
    audited-exclude gold with Wilson intervals, per category, the audited-ceiling flag and exact McNemar against a
    reference; each row names its source."""
    # local import: pandas/statsmodels and every reader load only when the table is asked for
    from bench.data.peer_files import default_peer_root
    from bench.report.field import RENDERERS, choose_reference, gather, score_runs

    if build or check:
        _built(specs, build, check, reference, None if kind == "terminal" else kind, out, peer_files, shipped_only)
        return
    if kind not in RENDERERS:
        raise DataError(f"--as: expected one of {', '.join(RENDERERS)}, found {kind!r}")
    if out is not None:
        check_file(out, "field --out")
    peer_root = None if shipped_only else (peer_files or default_peer_root())
    runs, notes = gather(REPO_ROOT, specs or [], peer_root)
    rows = score_runs(runs, choose_reference(runs, reference))
    text = RENDERERS[kind](rows, notes)
    if out is None:
        typer.echo(text, nl=False)
    else:
        write_text(out, text)
        typer.echo(f"wrote {out} ({len(rows)} runs)")


def _built(specs: list[str] | None, build: bool, check: bool, *others: object) -> None:
    """--build writes the shipped table, --check compares it with a fresh build: both from the shipped files only."""
    # local import: pandas/statsmodels and every reader load only when the table is asked for
    from bench.report.field import BUILT, built_tables, stale_tables

    if build and check:
        raise ConfigError("field: expected one of --build or --check, found both")
    if specs or any(o not in (None, False) for o in others):
        raise ConfigError(
            "field --build/--check: expected no results and no other option (the shipped table is built from "
            "the shipped files and results/v1, results/v3 only), found some"
        )
    if build:
        for relative, text in built_tables(REPO_ROOT).items():
            write_text(REPO_ROOT / relative, text)
            typer.echo(f"wrote {relative}")
        return
    problems = stale_tables(REPO_ROOT)
    for problem in problems:
        typer.echo(f"field --check: {problem}", err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"field --check: {' and '.join(BUILT)} are current")


def register(app: typer.Typer) -> None:
    app.command("field")(field)
