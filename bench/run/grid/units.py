"""A grid's unit as a worker receives it: one arm on one slice for one replicate, named for the driver's files and
reports, and holding the unit the run planner resolved (bench.run.planner), which the worker runs as it is.

The layout of a grid's results tree is here too (`result_relpath`, `replicate_root`): the driver, the worker and the
spec all name files by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bench.results.schema import file_name, slice_dir
from bench.run.planner import PlanUnit

REPLICATES_DIR = "replicates"  # replicate i > 0 of a grid lives under <out>/replicates/r<i>/ (same tree below)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Unit:
    """One arm on one slice for one replicate, answered at `ks`; `after` names the units it reads (a token-matched
    arm's sweep and reference) and `reads` the result files it reads, relative to its results tree."""

    arm: str
    slice_name: str
    replicate: int
    ks: tuple[int | None, ...]
    arm_hash: str
    token_matched: bool = False
    after: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    named: bool = True  # False: added by the grid because a token-matched arm reads it
    # The planner's unit (built arm, slice and stack; the driver sets its request before shipping it): what the
    # worker runs. None only for a unit made by hand (a test of an executor that never runs it).
    planned: PlanUnit | None = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        """A stable, file-safe name: the same unit of the same grid has the same id across driver restarts."""
        return unit_id(self.arm, self.slice_name, self.replicate)

    @property
    def label(self) -> str:
        return f"{self.arm} on {self.slice_name}" + (f" (replicate {self.replicate})" if self.replicate else "")

    def relative_targets(self, stack: str) -> list[str]:
        """The files this unit may write, relative to the grid's output root (a token-matched arm writes one of
        its candidate k's, whichever matches)."""
        return [result_relpath(stack, self.slice_name, self.arm, k, self.replicate) for k in self.ks]


def unit_id(arm: str, slice_name: str, replicate: int) -> str:
    return _UNSAFE.sub("_", f"{arm}__{slice_dir(slice_name)}__r{replicate}")


def replicate_root(replicate: int) -> str:
    """The results tree of a replicate, relative to the grid's output root ("" for the first)."""
    return f"{REPLICATES_DIR}/r{replicate}" if replicate else ""


def result_relpath(stack: str, slice_name: str, arm: str, k: int | None, replicate: int = 0) -> str:
    """`[replicates/r<i>/]<stack>/<slice-dir>/<arm>[__k<k>].json`: the layout of results/ (what `heldout` and
    `run --update-committed` write), so a grid's files are named as the committed ones are."""
    parts = [p for p in (replicate_root(replicate), stack, slice_dir(slice_name), file_name(arm, k)) if p]
    return "/".join(parts)
