"""`engram-bench export --hf OUT_DIR [--push REPO_ID]`: the results as a Hugging Face dataset (see bench.exchange.hfexport)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.writable import check_folder
from bench.errors import ConfigError
from bench.vocab import RESULTS_DIR


def export(
    hf: Path = typer.Option(None, "--hf", help="Write a datasets DatasetDict + parquet + dataset card here."),
    push: str | None = typer.Option(None, "--push", help="Then upload it to this Hub dataset repo (needs a token)."),
    results: Path = typer.Option(RESULTS_DIR, help="The results folder to export."),
) -> None:
    """Export every result's per-question answers, the update sets, the contradiction pairs and calibration items."""
    # local import: bench.exchange.hfexport imports `datasets` (the hf extra), which the base install lacks
    from bench.exchange.hfexport import export_hf, push_export

    if hf is None:
        raise ConfigError("export: expected --hf OUT_DIR (the only export format), found no --hf option")
    check_folder(hf, "export --hf")
    if not results.is_dir():
        raise ConfigError(f"export --results: expected a results folder, found nothing at {results}")
    tables = export_hf(results, hf)
    counts = ", ".join(f"{name} {table.num_rows}" for name, table in tables.items())
    typer.echo(f"export: wrote {hf} ({counts}); load with datasets.load_from_disk({str(hf)!r})")
    if push:
        commit = push_export(hf, push)
        typer.echo(f"export: pushed {hf} to https://huggingface.co/datasets/{push} ({commit})")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
