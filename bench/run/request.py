"""A run's request (what to run) and its services (what it is given), as two separate objects.

`RunRequest` is what a user asks on the command line of `run` (the stack, k's, limit, replicates, mode, where the
results go, the concurrency): the planner reads it and the runner checks it whole before anything happens.
`RunServices` is what the caller injects and a result never depends on: the folders and caches, the progress and
banner output, the slice loader, the embedder and the gateway factory (a grid worker passes its shard's).

The planner (bench.run.planner) stamps each unit it plans with the request (its replicate, run id and --limit
resolved), and the runner runs a unit with the services it is given (`run_arm(arm, slice, request, services)`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import settings
from bench.data.slices import Slice, load_slice
from bench.errors import BenchError
from bench.models.gateway import Gateway
from bench.models.stacks import DEFAULT_STACK
from bench.vocab import RESULTS_DIR, RUNS_DIR


def default_runs_root() -> Path:
    """$ENGRAM_RUNS_DIR when set, else `runs/` in the checkout (bench.settings)."""
    try:
        return settings.current().runs_dir
    except BenchError:
        # Asked at import (a default argument) with a bad ENGRAM_* variable: the checkout's runs/ for now; the
        # command line's root callback names the variable in its one line before any run starts.
        return RUNS_DIR


@dataclass(frozen=True)
class RunRequest:
    """What to run, besides the arm and slice: every field is a `run` option, and each decides what is written."""

    stack: str = DEFAULT_STACK
    ks: tuple[int, ...] | None = None  # --k override of the arm's k
    limit: int | None = None  # --limit N: only the first N questions (marked in the result)
    limit_of: int | None = None  # how many questions the slice asks, when --limit keeps fewer (set by run_arm)
    # --messages N: only the slice's first N messages, every question asked after them (marked in the result)
    messages: int | None = None
    # --replicates N (`run`): replicates 0..N-1 of the run, one after another, side by side as <name>__r<i>.json
    replicates: int = 1
    replicate: int = 0  # replicate i > 0 keys every call afresh (the gateway stamps it) and says so in extras
    mode: str | None = None  # gateway mode; None = replay without keys, live with keys
    strict: bool = False  # any cache miss (even a stand-in's) raises CacheMiss
    # --strict: a run whose replies were mostly unusable in a role, or that stored nothing, stops (bench.run.health);
    # otherwise it warns. The default of `heldout` and `grid --tag`.
    health_strict: bool = False
    # --concurrency N: questions answered at once (and conversations of a pooled slice run at once); None: the
    # stack file's provider `concurrency` (bench.run.planner.calls_in_flight)
    concurrency: int | None = None
    out: Path | None = None  # --out DIR: write the result files into DIR instead of the run folder
    update_committed: bool = False  # --update-committed: write results/<stack>/<slice>/ (never a tag-stamped file)
    run_id: str | None = None  # None: a fresh id per run (prerequisites of a token-matched arm share its id)
    git_tag: str | None = None  # stamped by `heldout`
    arms_dir: Path | None = None  # --arms-dir: read the arm from this folder instead of arms/
    assume_yes: bool = False  # --yes: a run that may send paid calls goes ahead without asking


@dataclass(frozen=True)
class RunServices:
    """What a run is given: where it reads and writes, its caches, its output, and the parts a caller injects."""

    results_root: Path = RESULTS_DIR  # the committed results: written only with update_committed
    # One folder per run: its store, and its results unless `out` says otherwise ($ENGRAM_RUNS_DIR, else runs/).
    runs_root: Path = field(default_factory=default_runs_root)
    subsets: tuple[Path, ...] | None = None  # shipped subsets to read; None = every one under cache/
    cache_dir: Path | None = None  # the local cache; None = the gateway's default
    use_local_cache: bool = True  # False: read only `subsets` (reproduce-dev)
    progress: bool = True
    say: Callable[[str], None] | None = None  # where the banner goes (None: stdout)
    slice_loader: Callable[[str], Slice] = load_slice
    embedder: Any = (
        None  # None: the process-wide MiniLM; reproduce-dev passes recorded vectors (bench.models.embeddings)
    )
    # (request, services, run id, arm, slice) -> the gateway a unit uses; None: `open_gateway`'s own (a grid worker
    # passes one that records into its cache shard and reserves spend from the grid's one budget)
    gateway_factory: Callable[[RunRequest, RunServices, str, str, str], Gateway] | None = None
