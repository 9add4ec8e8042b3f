"""Resuming a pooled run: the parts already finished are kept in a sidecar, so the same command run again after an
interruption (Ctrl-C, SIGKILL, a reboot) answers only the parts still missing and writes the same result.

A pooled slice (`locomo`, every `longmemeval:` slice: one part per question) runs each part on its own fresh store,
so a finished part is final: its answers, store figures, audit, trace, the calls it made (keys, hits, misses) and what
its replies were like (health) no longer depend on anything else. Each finished part is written at once, atomically,
as one file of the sidecar folder

    <runs>/<stack>/<slice-dir>/<arm>/partial/<fingerprint>/part-<index>.pickle

(under DIR/runs/ with --out DIR), and the folder is removed when the result files have landed. A run looks there
first: the parts it finds are taken as they are (printed: "resuming: 40 of 500 parts already done"), the others run.

The fingerprint is the sha256 of everything that decides what a part produces: the arm (its hash), the stack and its
models, the slice (name, data sha256, questions), the k's, the options that change a result (--limit, --messages,
--mode, --strict, the replicate, where the result goes) and the harness's own source (every .py and prompt file under
bench/ and engram/). Any difference is another fingerprint, so a sidecar is never read by a run it does not match:
changed code or arguments start afresh. Pickle is the format because a part's record is the harness's own Python
objects, read back only by the same code (the fingerprint sees to it), and must come back exactly as they were.

A resumed result equals an uninterrupted one except `timing` and the `calls` hit/miss counters, as for any re-run
(the interrupted part's calls are in the call cache and replay as hits).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench.disk.atomic import write_bytes
from bench.errors import ResultError
from bench.run.health import RunHealth
from bench.run.ingest import PartRun
from bench.run.output import partial_folder
from bench.run.planner import PlanUnit
from bench.run.request import RunServices
from bench.vocab import BENCH_DIR

PART_FILE = "part-{index:05d}.pickle"
SOURCE_ROOTS = (BENCH_DIR, BENCH_DIR.parent / "engram")
SOURCE_SUFFIXES = (".py", ".txt", ".toml")


@dataclass(frozen=True)
class TapCounts:
    """What one part's calls were through one tap: the keys it requested, how many the cache served."""

    keys: frozenset[str]
    hits: int
    misses: int


@dataclass(frozen=True)
class FinishedPart:
    """One finished part of a pooled run, as the final assembly needs it."""

    index: int
    conversation: str
    run: PartRun
    seconds: float
    system_calls: TapCounts
    answer_calls: Mapping[int | None, TapCounts]
    system_health: RunHealth
    answer_health: Mapping[int | None, RunHealth]


@cache
def source_sha256() -> str:
    """The harness's own code and prompts, hashed: a sidecar written by other code is never read."""
    digest = hashlib.sha256()
    for root in SOURCE_ROOTS:
        for path in sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
            digest.update(f"{path.relative_to(root.parent)}\n".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def fingerprint(unit: PlanUnit, targets: Iterable[Path]) -> str:
    """The sha256 of everything that decides what the unit's parts produce (see the module doc)."""
    request, the_slice, stack = unit.request, unit.the_slice, unit.stack
    material = {
        "arm": unit.arm.hash,
        "stack": stack.name,
        "models": dict(sorted(stack.models.items())),
        "slice": the_slice.name,
        "data": the_slice.dataset_sha256,
        "questions": [q.id for q in the_slice.questions],
        "messages": len(the_slice.messages),
        "ks": [k if k is not None else "all" for k in unit.ks],
        "request": [request.limit, request.messages, request.mode, request.strict, request.replicate],
        "targets": sorted(str(path.resolve()) for path in targets),
        "source": source_sha256(),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class PartProgress:
    """The sidecar of one pooled run: finished parts saved one file each, read back by a run with the same
    fingerprint, removed with `finish` once the result has landed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_unit(cls, unit: PlanUnit, services: RunServices, targets: Iterable[Path]) -> PartProgress:
        stack, the_slice, arm = unit.stack.name, unit.the_slice.name, unit.arm.name
        return cls(partial_folder(services.runs_root, stack, the_slice, arm) / fingerprint(unit, targets)[:24])

    def finished(self, parts: Iterable[Any]) -> dict[int, FinishedPart]:
        """The parts already done, by index; a part file that cannot be read back, or names another part, is one
        line naming it (delete the folder to start afresh)."""
        by_index = dict(enumerate(parts))
        done: dict[int, FinishedPart] = {}
        for path in sorted(self.folder.glob("part-*.pickle")) if self.folder.is_dir() else ():
            try:
                saved = pickle.loads(path.read_bytes())
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
                raise ResultError(
                    f"{path}: expected a finished part of an interrupted run, found an unreadable file ({exc}); "
                    f"delete {self.folder} to run every part afresh"
                ) from None
            part = by_index.get(saved.index) if isinstance(saved, FinishedPart) else None
            if part is None or part.conversation != saved.conversation or saved.run.part != part:
                raise ResultError(
                    f"{path}: expected a finished part of this run's slice, found one that is not; delete "
                    f"{self.folder} to run every part afresh"
                )
            done[saved.index] = saved
        return done

    def others(self) -> list[Path]:
        """The sidecars beside this one: unfinished runs of the same arm and slice whose code or arguments differ."""
        parent = self.folder.parent
        return sorted(p for p in parent.iterdir() if p.is_dir() and p != self.folder) if parent.is_dir() else []

    def save(self, finished: FinishedPart) -> None:
        """Keep one finished part, atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_bytes(self.folder / PART_FILE.format(index=finished.index), pickle.dumps(finished), "a finished part")

    def finish(self) -> None:
        """The result has landed: the sidecar is no longer needed."""
        shutil.rmtree(self.folder, ignore_errors=True)
        parent = self.folder.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
