"""`engram-bench rescore PATH...`: recompute the LLM-free metrics of result files from their stored answers."""

from __future__ import annotations

import typer

from bench.results.schema import read_result, result_files_of, write_result


def rescore(
    paths: list[str] = typer.Argument(..., help="Result files, folders or quoted globs to rescore in place."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if any file would change."),
) -> None:
    """Recompute locomo-f1, locomo-adversarial, mem0-f1 and mem0-bleu1 (no model is called; labels stay)."""
    from bench.analysis.scoring.rescore import rescored

    files = result_files_of(paths)
    # Every file is read and rescored before the first is written: a bad file leaves all of them untouched.
    planned = [(path, before, rescored(before)) for path in files for before in (read_result(path),)]
    changed = [(path, after) for path, before, after in planned if after.to_dict() != before.to_dict()]
    for path, after in changed:
        if not check:
            write_result(path, after)
        typer.echo(f"{'would rescore' if check else 'rescored'} {path}")
    typer.echo(f"rescore: {len(changed)} of {len(files)} file(s) {'would change' if check else 'changed'}")
    if check and changed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("rescore")(rescore)
