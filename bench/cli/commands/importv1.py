"""`engram-bench import-v1`: convert the article's published v1 result files into results/v1/."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.writable import check_folder
from bench.exchange.importv1 import import_v1
from bench.vocab import V1_DATA_DIR, V1_RESULTS_DIR


def register(app: typer.Typer) -> None:
    @app.command("import-v1")
    def import_v1_command(
        source: Path = typer.Option(V1_DATA_DIR, help="the engram-eval v1 release (README.md, results/)"),
        out: Path = typer.Option(V1_RESULTS_DIR, help="where the converted result files go (replaced)"),
    ) -> None:
        """Convert the v1 result files into our result schema, with a MANIFEST of sources and hashes."""
        check_folder(out, "import-v1 --out")
        report = import_v1(source, out)
        for note in report.notes:
            typer.echo(f"import-v1: note: {note}")
        typer.echo(f"import-v1: wrote {len(report.written)} files under {out} (manifest {report.manifest})")
