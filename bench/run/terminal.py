"""What the terminal shows while a step of more than a few seconds runs, and the global `--quiet` switch.

A step is a rich spinner with its elapsed time on stderr, so stdout stays the command's output (a pipe or `--json`
reader sees nothing of it), and it vanishes when the step ends. `--quiet` silences the spinners and the progress
bars and warnings of the libraries underneath (transformers' weight loading, huggingface_hub and datasets bars,
qdrant's local-mode UserWarnings); it is kept in the environment so worker processes inherit it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from bench import settings
from bench.errors import BenchError

if TYPE_CHECKING:
    from rich.console import Console

QUIET_ENV = settings.QUIET
VERBOSE_ENV = settings.VERBOSE
# Each library's own switch for its progress bars and log noise; set before the library is imported.
THIRD_PARTY_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TQDM_DISABLE": "1",
}
QUIET_LOGGERS = ("transformers", "sentence_transformers", "huggingface_hub", "datasets", "qdrant_client", "mem0")


def is_quiet() -> bool:
    try:
        return settings.current().quiet
    except BenchError:
        # Read at import (bench/__init__), before the command line can report a bad ENGRAM_* variable in its one
        # line: not quiet here; the CLI's root callback then names the variable and exits 2.
        return os.environ.get(QUIET_ENV, "") == "1"


def set_quiet() -> None:
    """Silence spinners, third-party progress bars and third-party warnings for this process and its children."""
    os.environ[QUIET_ENV] = "1"
    quiet_third_parties()


def set_verbosity(*, verbose: bool) -> None:
    """What every command does at its start: third-party progress bars and warnings (mem0's Qdrant UserWarning,
    transformers' "Loading weights" bar) are kept off the first screen unless `--verbose` asks for them. Said in
    the environment either way, so worker processes do the same."""
    os.environ[VERBOSE_ENV] = "1" if verbose else "0"
    if not verbose:
        quiet_third_parties()


def quiet_third_parties() -> None:
    os.environ.update(THIRD_PARTY_QUIET_ENV)
    _filter_third_parties()


def apply_quiet() -> None:
    """The in-process half of `set_quiet` and `set_verbosity` (warning filters and log levels), for a worker
    process that inherited them; a process no command started (a test, a library user) is left as it is."""
    if is_quiet() or os.environ.get(VERBOSE_ENV) == "0":
        _filter_third_parties()


def _filter_third_parties() -> None:
    warnings.filterwarnings("ignore", module=r"qdrant_client(\..*)?")
    # qdrant reports its local-mode warnings at stacklevel=5, so they carry the caller's module (mem0's): matched
    # by their text instead.
    warnings.filterwarnings(
        "ignore", message=r"Payload indexes have no effect in the local Qdrant", category=UserWarning
    )
    warnings.filterwarnings("ignore", module=r"(transformers|sentence_transformers|huggingface_hub)(\..*)?")
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def step(description: str, enabled: bool = True, console: Console | None = None) -> Iterator[None]:
    """A transient spinner, `description` and the elapsed seconds, on stderr while the block runs (nothing when
    quiet, disabled, or stderr is not a terminal)."""
    if not enabled or is_quiet():
        yield
        return

    spinner = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=True,
    )
    with spinner:
        spinner.add_task(description, total=None)
        yield


class PlainProgress:
    """Progress for a run whose output is not a terminal (CI, nohup, a pipe): rich draws nothing there, so this
    prints one plain line per task every `every_s` seconds (and when a task finishes) on stderr. It offers the
    part of rich's Progress the runner uses: a context manager with `add_task` and `advance`."""

    def __init__(self, every_s: float = 5.0, stream: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self.stream = stream
        self.clock = clock
        self._tasks: dict[int, list[Any]] = {}  # id -> [description, total, done, started, last printed]
        self._lock = threading.Lock()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None) -> int:
        with self._lock:
            task = len(self._tasks)
            now = self.clock()
            self._tasks[task] = [description, total, 0.0, now, now]
        return task

    def advance(self, task: int, advance: float = 1.0) -> None:
        with self._lock:
            entry = self._tasks[task]
            entry[2] += advance
            now = self.clock()
            finished = entry[1] is not None and entry[2] >= entry[1]
            if not finished and now - entry[4] < self.every_s:
                return
            entry[4] = now
            description, total, done, started = entry[0], entry[1], entry[2], entry[3]
        share = f" ({done / total:.0%})" if total else ""
        of = f"/{total:g}" if total is not None else ""
        print(f"{description}: {done:g}{of}{share}, {now - started:.0f} s", file=self.stream or sys.stderr, flush=True)


@contextmanager
def progress_bars(enabled: bool) -> Iterator[Any]:
    if enabled and not sys.stderr.isatty():  # rich draws nothing off a terminal: a plain line every few seconds
        with PlainProgress() as plain:
            yield plain
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not enabled,
        transient=True,
    )
    with progress:
        yield progress
