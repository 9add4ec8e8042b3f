"""`engram-bench plan ARM --slice S --stack X`: calls, tokens and dollars per role before anything is sent."""

from __future__ import annotations

import json

import typer

from bench.models.stacks import DEFAULT_STACK, STACK_NAMES
from bench.run.plan import make_plan
from bench.run.runner import parse_ks


def plan(
    arm: str = typer.Argument(..., help="An arm in arms/ (see `engram-bench arms`)."),
    slice_name: str = typer.Option("dev", "--slice", help="A slice (see `engram-bench slices`)."),
    stack: str = typer.Option(DEFAULT_STACK, "--stack", help=f"{' | '.join(STACK_NAMES)}."),
    k: str = typer.Option(None, "--k", help="Override the arm's k, e.g. 3 or 3,20."),
    limit: int = typer.Option(None, "--limit", help="Only the first N questions, as `run --limit N`."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Estimate a run before spending: calls per role, how many the caches hold, tokens and dollars from the
    stack's prices, and whether the budget allows it. Sends nothing, writes nothing."""
    if stack not in STACK_NAMES:
        from bench.errors import ConfigError

        raise ConfigError(f"--stack: expected one of {', '.join(STACK_NAMES)}, found {stack!r}")
    estimate = make_plan(arm, slice_name, stack, ks=parse_ks(k), limit=limit)
    if as_json:
        typer.echo(json.dumps(estimate.to_json(), indent=2, sort_keys=True))
        return
    for line in estimate.table():
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
