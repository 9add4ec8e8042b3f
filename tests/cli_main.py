"""Run the engram-bench command line in-process, as a user's shell would, and return its exit code."""

from __future__ import annotations

import pytest

from bench.cli.program import main


def exit_code_of(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """`engram-bench ARGV...` in this process: 0 when the command returns, else the code it exits with."""
    monkeypatch.setattr("sys.argv", ["engram-bench", *argv])
    try:
        main()
    except SystemExit as exited:
        return int(exited.code or 0)
    return 0
