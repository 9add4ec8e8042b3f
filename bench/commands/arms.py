"""`engram-bench arms`: every declared arm with its resolved settings and canonical hash."""

from __future__ import annotations

import json

import typer

from bench.arms import load_all_arms


def arms(
    as_json: bool = typer.Option(False, "--json", help="Print the resolved arms as JSON (settings, models, k, hash)."),
) -> None:
    """List the arms in arms/*.toml after inheritance, each with its hash (the hash goes into every result)."""
    loaded = load_all_arms()
    if as_json:
        listing = [
            {
                **arm.resolved(),
                "hash": arm.hash,
                "description": arm.description,
                "extends": list(arm.lineage[1:]),
                "import_only": arm.import_only,
            }
            for arm in loaded
        ]
        typer.echo(json.dumps(listing, indent=2, sort_keys=True))
        return
    typer.echo(f"{'arm':<22} {'system':<13} {'k':<22} {'hash':<12}  description")
    for arm in loaded:
        if arm.token_match is not None:
            k = f"matched to {arm.token_match.reference_arm}@{arm.token_match.reference_k}"
        else:
            k = ",".join(map(str, arm.k)) if arm.k else "all"
            k += "".join(f" {name}:{','.join(map(str, ks))}" for name, ks in sorted(arm.k_by_slice.items()))
        note = "[import only] " if arm.import_only else ""
        typer.echo(f"{arm.name:<22} {arm.system:<13} {k:<22} {arm.hash[:12]}  {note}{arm.description}")


def register(app: typer.Typer) -> None:
    app.command("arms")(arms)
