"""What the terminal shows while a step of more than a few seconds runs, and the global `--quiet` switch.

A step is a rich spinner with its elapsed time on stderr, so stdout stays the command's output (a pipe or `--json`
reader sees nothing of it), and it vanishes when the step ends. `--quiet` silences the spinners and the progress
bars and warnings of the libraries underneath (transformers' weight loading, huggingface_hub and datasets bars,
qdrant's local-mode UserWarnings); it is kept in the environment so worker processes inherit it.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from bench import settings

if TYPE_CHECKING:
    from rich.console import Console

QUIET_ENV = settings.QUIET
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
    return settings.current().quiet


def set_quiet() -> None:
    """Silence spinners, third-party progress bars and third-party warnings for this process and its children."""
    os.environ[QUIET_ENV] = "1"
    os.environ.update(THIRD_PARTY_QUIET_ENV)
    apply_quiet()


def apply_quiet() -> None:
    """The in-process half of `set_quiet` (warning filters and log levels), for a process that inherited it."""
    if not is_quiet():
        return
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
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

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
