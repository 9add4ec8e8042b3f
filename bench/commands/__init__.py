"""CLI command modules. Each module here defines `register(app: typer.Typer) -> None`.

`bench.cli` discovers every module in this package, so adding a command never edits a shared file.
"""
