"""The `engram-bench` command line.

Commands live one concept per module in `bench.commands`; each module registers itself on the app.
A `BenchError` anywhere becomes one line on stderr and exit code 2, with nothing half-written.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

import bench.commands
from bench.errors import BenchError
from bench.redact import redact
from bench.terminal import set_quiet

app = typer.Typer(
    name="engram-bench",
    help="Reproducible benchmark harness for the engram memory system.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress spinners or bars, and no third-party progress bars or warnings (transformers, qdrant).",
    ),
) -> None:
    """Reproducible benchmark harness for the engram memory system (a group: always take a subcommand)."""
    if quiet:
        set_quiet()


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(bench.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"bench.commands.{info.name}")
        register = getattr(module, "register", None)
        if register is None:
            raise RuntimeError(f"bench/commands/{info.name}.py defines no register(app)")
        register(app)


_register_commands()


def main() -> None:
    try:
        app()
    except BenchError as exc:
        print(f"engram-bench: {redact(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
