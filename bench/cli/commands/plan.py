"""`engram-bench plan ARM --slice S --stack X`: calls, tokens and dollars per role before anything is sent."""

from __future__ import annotations

import json
import math

import typer

from bench.cli.options import parse_ks
from bench.models.stacks import DEFAULT_STACK, STACK_NAMES
from bench.run.plan import make_plans, plans_summary


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
    plans = make_plans(arm, slice_name, stack, ks=parse_ks(k), limit=limit)
    if len(plans) == 1:  # an arm that ingests the slice: one unit, one table
        if as_json:
            typer.echo(json.dumps(plans[0].to_json(), indent=2, sort_keys=True))
            return
        for line in plans[0].table():
            typer.echo(line)
        return
    # a token-matched arm: the units its run takes, prerequisites first, and their total
    if as_json:
        units = [p.to_json() for p in plans]
        total = {
            "units": units,
            "usd": math.fsum(p.usd for p in plans),
            "calls": sum(p.calls for p in plans),
            "calls_to_send": sum(p.calls_to_send for p in plans),
        }
        typer.echo(json.dumps(total, indent=2, sort_keys=True))
        return
    for estimate in plans:
        for line in estimate.table():
            typer.echo(line)
        typer.echo("")
    typer.echo(plans_summary(plans))


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
