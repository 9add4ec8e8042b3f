"""`engram-bench schema [--out FILE]`: the result-file schema as JSON Schema, generated from `bench.results.schema`."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from bench.disk.atomic import write_text
from bench.disk.writable import check_file
from bench.results.schema import result_json_schema


def schema_text() -> str:
    """The schema as the committed docs/result.schema.json spells it: sorted keys, two-space indent, final newline."""
    return json.dumps(result_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema(
    out: Path | None = typer.Option(None, "--out", help="Write the schema to this file instead of printing it."),
) -> None:
    """Print (or write) the JSON Schema every result file under results/ validates against."""
    if out is not None:
        check_file(out, "schema --out")
    text = schema_text()
    if out is None:
        typer.echo(text, nl=False)
        return
    write_text(out, text)
    typer.echo(f"schema: wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
