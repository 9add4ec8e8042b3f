"""The run of a test that runs an arm from its own folder (arms/, runs/, out/, cache/ inside it), quietly:
`run_arm(name, slice, *folder_options(folder, limit))`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.bench.run_args import RunArgs, run_args


def folder_options(folder: Path, limit: int | None = None, **extra: Any) -> RunArgs:
    given: dict[str, Any] = {
        "arms_dir": folder / "arms",
        "runs_root": folder / "runs",
        "out": folder / "out",
        "cache_dir": folder / "cache",
        "progress": False,
        "limit": limit,
    }
    return run_args(**{**given, **extra})
