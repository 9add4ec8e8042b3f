"""The `engram-bench` command line.

Commands live one concept per module in `bench.cli.commands`; each module registers itself on the app.
A `BenchError` anywhere becomes one line on stderr and exit code 2, with nothing half-written.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import replace
from typing import Any

import typer

import bench.cli.commands
from bench import settings
from bench.cli.terminal import set_quiet
from bench.errors import BenchError, RegistryError
from bench.models.redact import redact
from bench.registry import Registry

app = typer.Typer(
    name="engram-bench",
    help="Reproducible benchmark harness for the engram memory system.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress spinners or bars, and no third-party progress bars or warnings (transformers, qdrant).",
    ),
) -> None:
    """Reproducible benchmark harness for the engram memory system (a group: always take a subcommand)."""
    # The one reading of the ENGRAM_* variables: validated here (a bad one is one line, exit 2, before the command
    # does anything) and installed for the command's duration; the code below reads it, never os.environ.
    told = settings.Settings.from_env()
    if quiet:
        set_quiet()  # also in the environment, so worker processes inherit it
        told = replace(told, quiet=True)
    settings.install(told)
    ctx.call_on_close(settings.uninstall)


#: command name -> the callback (or sub-app) that serves it; a name two modules add is one RegistryError
COMMANDS: Registry[Any] = Registry(
    "command", hint="a module in bench/cli/commands/ whose register(app) adds the command to the app"
)


def _command_names(application: typer.Typer) -> list[tuple[str, Any]]:
    """(name, callback or sub-app) of every command and group on the app, in the order they were added."""
    names: list[tuple[str, Any]] = []
    for command in application.registered_commands:
        callback = command.callback
        name = command.name or (callback.__name__.replace("_", "-") if callback is not None else "")
        names.append((name, callback))
    for group in application.registered_groups:
        names.append((group.name or "", group.typer_instance))
    return names


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(bench.cli.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"bench.cli.commands.{info.name}")
        register = getattr(module, "register", None)
        if register is None:
            raise RegistryError(f"bench/cli/commands/{info.name}.py: expected a function register(app), found none")
        before = {id(part) for _, part in _command_names(app)}
        register(app)
        for name, part in _command_names(app):
            if id(part) not in before:
                COMMANDS.add(name, part, origin=module.__name__)


_register_commands()


def main() -> None:
    try:
        app()
    except BenchError as exc:
        print(f"engram-bench: {redact(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
