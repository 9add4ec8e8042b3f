"""`engram-bench slices`: what each slice holds, counted from the data."""

from __future__ import annotations

import json

import typer

from bench.data.slices import describe_slice, load_slice, slice_names


def slices(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """List every slice with its message, question and checkpoint counts (heldout:<conv> is also accepted for every
    conversation but the dev one, conv-26)."""
    # The description is for the listing only: a result file's extras carry the summary, and stay as they were.
    summaries = [load_slice(name).summary() | {"description": describe_slice(name)} for name in slice_names()]
    if as_json:
        typer.echo(json.dumps(summaries, indent=2))
        return
    typer.echo(f"{'slice':<18} {'messages':>8} {'questions':>9} {'unscored':>8}  checkpoints  by category")
    typer.echo("  (checkpoints: the sessions after which the questions are asked; unscored: adversarial questions)")
    for s in summaries:
        categories = ", ".join(f"{name} {count}" for name, count in s["by_category"].items())
        categories += "".join(f", {name} {n} unscored" for name, n in s.get("unscored_by_category", {}).items())
        checkpoints = ",".join(str(c) for c in s["checkpoints"])
        typer.echo(
            f"{s['name']:<18} {s['messages']:>8} {s['questions']:>9} {s['unscored']:>8}  {checkpoints:<11}  {categories}"
        )
        if s.get("description"):
            typer.echo(f"  {s['description']}")


def register(app: typer.Typer) -> None:
    app.command("slices")(slices)
