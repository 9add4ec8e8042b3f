"""`engram-bench stacks`: every stack file in stacks/, with its description and the model behind each role."""

from __future__ import annotations

import json
from typing import Any

import typer

from bench.models.stacks import StackSpec, is_paid, stack_specs


def describe(spec: StackSpec) -> dict[str, Any]:
    """One stack as `stacks --json` prints it: roles, per-provider settings and prices, and whether it bills."""
    used = sorted({ref.provider for ref in spec.roles.values()})
    providers = {}
    for provider in used:
        settings = spec.settings(provider)
        providers[provider] = {
            "paid": is_paid(provider, settings) if not spec.import_only else None,
            "base_url": settings.base_url,
            "concurrency": settings.concurrency,
            "timeout_s": settings.timeout_s,
            "retries": settings.retries,
            "max_retry_after_s": settings.max_retry_after_s,
            "prices_per_mtok": {
                model: {"input": price.input_per_mtok, "output": price.output_per_mtok}
                for model, price in sorted(settings.prices.items())
            },
        }
    return {
        "name": spec.name,
        "file": spec.path.name,
        "description": spec.description,
        "label": spec.label,
        "runnable": not spec.import_only,
        "roles": {role: str(ref) for role, ref in spec.roles.items()},
        "providers": providers,
    }


def stacks(
    as_json: bool = typer.Option(False, "--json", help="Print every stack's roles, providers and prices as JSON."),
) -> None:
    """List the stacks (stacks/*.toml): which model serves each role. Run one with `run ARM --stack NAME`."""
    listing = [describe(spec) for spec in stack_specs().values()]
    if as_json:
        typer.echo(json.dumps(listing, indent=2, sort_keys=True))
        return
    typer.echo(f"{'stack':<10} {'runs':<12} description")
    for item in listing:
        runs = "yes" if item["runnable"] else "import only"
        typer.echo(f"{item['name']:<10} {runs:<12} {item['description']}")


def register(app: typer.Typer) -> None:
    app.command("stacks")(stacks)
