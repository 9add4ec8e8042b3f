"""Where a run writes and who may write there: the one rule for a result's folder and file name, the run folder
that holds a run's store, fresh run ids, the refusal to replace a held-out or --out result, and the per-arm lock."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from bench.disk.atomic import write_text
from bench.errors import ResultError, RunLocked
from bench.results.schema import file_name, read_result, slice_dir
from bench.run.request import RunRequest, RunServices, default_runs_root
from bench.vocab import RESULTS_DIR

STORE_DIR = "store"
PARTIAL_DIR = "partial"


LOCK_FILE = ".run.lock"


LOCK_OWNER_FILE = ".run.lock.pid"


def output_dir(
    stack: str,
    slice_name: str,
    arm: str,
    run_id: str,
    *,
    out: Path | None = None,
    update_committed: bool = False,
    results_root: Path = RESULTS_DIR,
    runs_root: Path | None = None,
) -> Path:
    """The one rule for where a run's result files go (files inside are named `<arm>[__k<k>].json`):

    - `update_committed`: the committed tree, `results/<stack>/<slice-dir>/` (what `heldout` and
      `run --update-committed` write; a tag-stamped file there is never replaced by `run`);
    - `out`: exactly that folder (`--out DIR`);
    - otherwise the run's own fresh folder `runs/<stack>/<slice-dir>/<arm>/<run-id>/`, which also holds its store.
    """
    if update_committed:
        return Path(results_root) / stack / slice_dir(slice_name)
    if out is not None:
        return Path(out)
    return run_folder(runs_root or default_runs_root(), stack, slice_name, arm, run_id)


def run_folder(runs_root: Path, stack: str, slice_name: str, arm: str, run_id: str) -> Path:
    """`runs/<stack>/<slice-dir>/<arm>/<run-id>/`: one run's store (and its results by default)."""
    return _arm_runs(runs_root, stack, slice_name, arm) / run_id


def new_run_id() -> str:
    """A fresh, sortable run id: UTC time to the second and a random suffix (two runs in one second differ)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def refuse_clobbering(targets: Sequence[Path], request: RunRequest) -> None:
    """`run` never replaces a tag-stamped (held-out) result, and `--out DIR` never overwrites a result in DIR."""
    for path in targets:
        if not path.is_file():
            continue
        if request.update_committed and request.git_tag is None:
            tag = read_result(path).provenance.git_tag
            if tag is not None:
                raise ResultError(
                    f"{path}: a result stamped with tag {tag!r} exists; expected `run` to leave tag-stamped "
                    f"results alone (held-out results are written once, by `engram-bench heldout --tag`)"
                )
        elif request.out is not None:
            raise ResultError(f"{path}: expected --out to name a folder without this result, found one")


@contextmanager
def run_lock(runs_root: Path, stack: str, slice_name: str, arm: str) -> Iterator[Path]:
    """One run of an arm on a slice and stack at a time per checkout: a second one is refused, naming the holder.

    The lock is an OS file lock (`filelock`), so it is released however the holder ends; the holder's pid sits in
    a file beside it only to be named in the refusal.
    """
    folder = _arm_runs(runs_root, stack, slice_name, arm)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / LOCK_FILE, timeout=0)
    owner = folder / LOCK_OWNER_FILE
    try:
        lock.acquire()
    except Timeout:
        raise RunLocked(
            f"{folder / LOCK_FILE}: another run of {arm} on {slice_name} ({stack} stack) holds this lock "
            f"({_lock_holder(owner)}); expected no concurrent run of the same arm in one checkout"
        ) from None
    try:
        write_text(owner, f"{os.getpid()}\n")
        yield folder
    finally:
        owner.unlink(missing_ok=True)
        lock.release()


def _lock_holder(owner: Path) -> str:
    try:
        return f"pid {int(owner.read_text().split()[0])}"
    except (OSError, ValueError, IndexError):
        return "pid unknown"


def partial_folder(runs_root: Path, stack: str, slice_name: str, arm: str) -> Path:
    """`runs/<stack>/<slice-dir>/<arm>/partial/`: the finished parts of interrupted runs (bench.run.resume)."""
    return _arm_runs(runs_root, stack, slice_name, arm) / PARTIAL_DIR


def _arm_runs(runs_root: Path, stack: str, slice_name: str, arm: str) -> Path:
    return Path(runs_root) / stack / slice_dir(slice_name) / arm


def target_path(
    request: RunRequest, services: RunServices, stack: str, slice_name: str, arm: str, k: int | None
) -> Path:
    assert request.run_id is not None
    folder = output_dir(
        stack,
        slice_name,
        arm,
        request.run_id,
        out=request.out,
        update_committed=request.update_committed,
        results_root=services.results_root,
        runs_root=services.runs_root,
    )
    return folder / replicate_name(file_name(arm, k), request)


def replicate_name(name: str, request: RunRequest) -> str:
    """`<arm>[__k<k>].json`, or `<arm>[__k<k>]__r<i>.json` for replicate i of a `run --replicates N` (N > 1): the
    replicates of one run side by side. (A grid keeps each replicate's tree apart instead: bench.run.grid.)"""
    if request.replicates <= 1:
        return name
    return name.removesuffix(".json") + f"__r{request.replicate}.json"
