"""CLI command modules. Each module here defines `register(app: typer.Typer) -> None`.

`bench.cli.program` discovers every module in this package, so adding a command never edits a shared file.
"""
