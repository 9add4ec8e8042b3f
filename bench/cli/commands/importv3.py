"""`engram-bench import-v3`: convert the v3 paper's published per-question labels into results/v3/."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.writable import check_folder
from bench.exchange.importv3 import V3_RESULTS_DIR, import_v3


def register(app: typer.Typer) -> None:
    @app.command("import-v3")
    def import_v3_command(
        out: Path = typer.Option(V3_RESULTS_DIR, help="where the converted result files go (replaced)"),
    ) -> None:
        """Convert data/engram-eval-v3 (labels, manifest, aggregate inputs) into our result schema, stack paper-v3."""
        check_folder(out, "import-v3 --out")
        report = import_v3(out)
        typer.echo(
            f"import-v3: {report.results} result files and {len(report.written) - report.results} inputs under {out} "
            f"(manifest {report.manifest})"
        )
