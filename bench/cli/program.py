"""The `engram-bench` command line.

Commands live one concept per module in `bench.cli.commands`; each module registers itself on the app.
A `BenchError` anywhere becomes one line on stderr and exit code 2, with nothing half-written.
"""

from __future__ import annotations

import re
import signal
import sqlite3
import sys
from dataclasses import replace
from types import FrameType
from typing import Any

import typer

import bench.cli.commands
from bench import settings
from bench.disk.atomic import written
from bench.disk.writable import disk_refused
from bench.errors import BenchError, RegistryError
from bench.models.redact import redact
from bench.registry import Registry, import_modules
from bench.run.terminal import set_quiet, set_verbosity

_TYPER_DISPLAY_TYPE = typer.core._TyperParameter.display_type  # typer 0.29.2, pinned in requirements.lock


def _display_type(self: Any, ctx: Any) -> str:
    """The type column of --help. typer shows a flag as `--all <bool>` and a repeated value as `<list[Path]>`: a
    flag takes no value, so it shows none, and a repeated value shows its element's type (the `...` beside an
    argument's name, or the option given again, says that it repeats)."""
    if getattr(self, "is_flag", False):
        return ""
    shown = str(_TYPER_DISPLAY_TYPE(self, ctx))
    repeated = re.fullmatch(r"<list\[(.*)\]>", shown)
    return f"<{repeated[1].lower()}>" if repeated else shown  # <list[Path]> -> <path>, as an option's Path shows


typer.core._TyperParameter.display_type = _display_type  # type: ignore[method-assign]

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
        help="No progress spinners or bars either (third-party bars and warnings are off unless --verbose).",
    ),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        help="Show third-party progress bars and warnings (transformers' weight loading, mem0's Qdrant warnings).",
    ),
) -> None:
    """Reproducible benchmark harness for the engram memory system (a group: always take a subcommand)."""
    # The one reading of the ENGRAM_* variables: validated here (a bad one is one line, exit 2, before the command
    # does anything) and installed for the command's duration; the code below reads it, never os.environ.
    told = settings.Settings.from_env()
    set_verbosity(verbose=(verbose or told.verbose) and not quiet)
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
    for module in import_modules(bench.cli.commands.__name__):
        register = getattr(module, "register", None)
        if register is None:
            raise RegistryError(f"module {module.__name__}: expected a function register(app), found none")
        before = {id(part) for _, part in _command_names(app)}
        register(app)
        for name, part in _command_names(app):
            if id(part) not in before:
                COMMANDS.add(name, part, origin=module.__name__)


_register_commands()


INTERRUPTED = 130  # the shell's code for a SIGINT ending (and typer's for Ctrl-C)
TERMINATED = 128 + signal.SIGTERM  # the shell's code for a SIGTERM ending


class Terminated(KeyboardInterrupt):
    """SIGTERM (a plain `kill`, a job scheduler's timeout), raised in the main thread so the command stops the way
    Ctrl-C stops it: finally blocks and exit handlers run, so every server the run started (a memory system's
    adapter and its workers, the gateway endpoint) is stopped with it instead of outliving it. Python's default for
    SIGTERM ends the process at once and runs none of them."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # The servers go first: a worker thread waiting on one's reply is freed at once (the connection closes), where
    # waiting for it to answer before the exit handlers run could take the server's whole time limit.
    process = sys.modules.get("bench.systems.process")  # loaded only by a run that started a server
    if process is not None:
        process.stop_all_servers()
    raise Terminated()


def _raised_by_sigterm(exc: BaseException) -> bool:
    """Whether Terminated is in the chain an exception was raised from (typer wraps it in click's Exit(130))."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, Terminated):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _stopped(*, by_sigterm: bool) -> None:
    """One line on what a stopped command kept, and the shell's exit code for how it was stopped."""
    how = "stopped by SIGTERM" if by_sigterm else "interrupted"
    print(f"engram-bench: {how}; {kept_summary()}", file=sys.stderr)
    sys.exit(TERMINATED if by_sigterm else INTERRUPTED)


def main() -> None:
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        _main()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main() -> None:
    try:
        app()
    except BenchError as exc:
        print(f"engram-bench: {redact(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as Terminated
        _stopped(by_sigterm=_raised_by_sigterm(exc))
    except SystemExit as exc:
        if exc.code == INTERRUPTED:  # typer turns Ctrl-C (and Terminated) into a silent exit 130: say what was kept
            _stopped(by_sigterm=_raised_by_sigterm(exc))
        raise
    except OSError as exc:
        # A full disk deep inside a library (engram's store, a lock file) has no BenchError of its own.
        refused = disk_refused(exc, exc.filename or "a file", "it")
        if refused is None:
            raise
        print(f"engram-bench: {redact(str(refused))}", file=sys.stderr)
        sys.exit(refused.exit_code)
    except sqlite3.OperationalError as exc:
        if "disk is full" not in str(exc) and "readonly" not in str(exc):
            raise
        print(f"engram-bench: a SQLite database could not be written ({exc}); free some space", file=sys.stderr)
        sys.exit(2)


def kept_summary() -> str:
    """What an interrupted command leaves behind: every file it finished (each written whole, atomically) and the
    model calls already in the cache; never a half-written file."""
    if not written:
        files = "no file was written"
    elif len(written) == 1:
        files = f"kept {written[0]}"
    else:
        files = f"kept {len(written)} files written before it (the last: {written[-1]})"
    if "bench.models.gateway" not in sys.modules:  # a command that makes no model calls has no cache to speak of
        return f"{files}; nothing is half-written"
    return f"{files}; nothing is half-written, and model calls already answered stay in the call cache for a re-run"


if __name__ == "__main__":
    main()
