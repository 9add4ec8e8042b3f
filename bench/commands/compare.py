"""`engram-bench compare A B [C ...]`: the paired comparison of result sets (the logic lives in bench.compare)."""

from __future__ import annotations

import json
import sys

import typer

from bench.errors import ResultError


def compare(
    sets: list[str] = typer.Argument(..., help="Result sets: a file, a directory or a quoted glob. A vs each other."),
    include_unscored: bool = typer.Option(False, "--all", help="Also count unscored questions (adversarial)."),
    draws: int = typer.Option(10_000, help="Bootstrap draws."),
    seed: int | None = typer.Option(None, help="Bootstrap seed (default: derived from the two labels)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Paired comparison: Δ in points, per-question CI, conversation-cluster bootstrap, McNemar, per-group rows."""
    # pandas and the statistics stack load here, not at CLI start-up.
    from bench.compare import comparison_report, load_result_set, render_report, report_json

    if len(sets) < 2:
        raise ResultError(f"compare: expected at least two result sets (A B [C ...]), found {len(sets)}")
    if draws < 1:
        raise ResultError(f"compare --draws: expected a positive number of draws, found {draws}")
    loaded = [load_result_set(spec) for spec in sets]
    reports = [comparison_report(loaded[0], other, include_unscored, draws, seed) for other in loaded[1:]]
    for report in reports:
        for warning in report["warnings"]:
            print(f"engram-bench compare: {warning}", file=sys.stderr)
    if as_json:
        typer.echo(json.dumps([report_json(r) for r in reports], indent=2, default=str))
        return
    typer.echo("\n\n".join(render_report(r) for r in reports))


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
