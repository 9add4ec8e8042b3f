"""`engram-bench datasets`: every registered dataset with its slices, its categories (code, name, scored) and the
other numberings it knows, built in or from an installed package."""

from __future__ import annotations

import json
from typing import Any

import typer

from bench.data.datasets import DATASETS
from bench.errors import RegistryError


def datasets(
    as_json: bool = typer.Option(False, "--json", help="Print every dataset's declaration as JSON."),
) -> None:
    """List the datasets: their slices and categories (`run ARM --slice NAME` runs a slice)."""
    listing: list[dict[str, Any]] = []
    for name in DATASETS.names():
        try:
            record = DATASETS.get(name).to_json()
        except RegistryError as exc:  # an installed package that does not load: listed with why, not fatal
            listing.append({"name": name, "error": str(exc)})
            continue
        origin = DATASETS.info(name)
        if origin.plugin:
            record["package"] = f"{origin.distribution} {origin.version}"
        listing.append(record)
    if as_json:
        typer.echo(json.dumps(listing, indent=2, sort_keys=True))
        return
    for record in listing:
        if "error" in record:
            typer.echo(f"{record['name']}: does not load: {record['error']}")
            continue
        slices = ", ".join(record["slices"]) or "(no slice: read by a script)"
        typer.echo(
            f"{record['name']}: {record['description']}" + (f" [{record['package']}]" if "package" in record else "")
        )
        typer.echo(f"  slices: {slices}")
        categories = []
        for category in record["categories"]:
            code = f"{category['code']} " if category["code"] is not None else ""
            categories.append(f"{code}{category['name']}" + ("" if category["scored"] else " (not scored)"))
        typer.echo(f"  categories: {', '.join(categories)}")
        for numbering, labels in record["numberings"].items():
            typer.echo(f"  {numbering} names them: {', '.join(f'{code} {label}' for code, label in labels.items())}")


def register(app: typer.Typer) -> None:
    app.command("datasets")(datasets)
