"""The command line: the typer app and `main` (`program`), one module per command (`commands`), terminal output.

`main` is also reachable here because an editable install made before bench/ was split into packages has an
`engram-bench` script that imports `main` from this package. It is loaded on first use: the app imports every command, which `bench.run.terminal`'s users (the runner) must not pay for.
"""

from importlib import import_module
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "main":
        return import_module("bench.cli.program").main
    raise AttributeError(f"module 'bench.cli.program' has no attribute {name!r}")
