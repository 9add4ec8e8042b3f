"""What the paper build reads: the result files of one stack under ``results/``, and nothing else.

``ResultSet`` indexes the schema-v1 result files by (slice, arm, k) and serves the supplementary inputs (calibration
items, regression pairs, trade-off inputs, the article's number list) that the v1 import copied next to them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from bench.errors import ResultError
from bench.models.stacks import OFFLINE_STACK
from bench.report.numbers import SourceFile
from bench.results.schema import Result, iter_results
from bench.vocab import heldout_conversation, heldout_slice, is_heldout

# How every table and figure is labelled, by stack: the paper's numbers are never confused with stand-ins.
STACK_LABELS = {
    "paper": "paper v1, Claude + Jev",
    OFFLINE_STACK: "offline stand-ins — not the paper's numbers",
    "paper-v3": "paper v3, gpt-4o-mini + Jev, imported per-question labels",
}
ARTICLE_NUMBERS = "article_numbers.tsv"


@dataclass(frozen=True)
class ResultView:
    """A way of reading every result (a gold, a category filter): the function, and what every label then says."""

    apply: Callable[[Result], Result]
    note: str

    def __call__(self, result: Result) -> Result:
        return self.apply(result)


@dataclass(frozen=True)
class Loaded:
    source: SourceFile
    result: Result


class ResultSet:
    """The result files of one stack directory (``results/<stack_dir>/``)."""

    def __init__(self, results_root: Path, stack_dir: str, view: ResultView | None = None) -> None:
        self.results_root = Path(results_root)
        self.stack_dir = stack_dir
        # `paper build --gold/--categories`: every result is read through the view (cited by the file's own hash)
        self.view = view
        self.root = self.results_root / stack_dir
        if not self.root.is_dir():
            raise ResultError(f"{self.root}: expected a results directory, found none")

    def cite(self, path: Path) -> SourceFile:
        """A file as numbers.json cites it: ``results/<stack_dir>/<relative path>`` and its sha256."""
        relative = path.relative_to(self.root).as_posix()
        return SourceFile(f"results/{self.stack_dir}/{relative}", hashlib.sha256(path.read_bytes()).hexdigest())

    @cached_property
    def results(self) -> dict[tuple[str, str, int | None], Loaded]:
        loaded: dict[tuple[str, str, int | None], Loaded] = {}
        for path, result in iter_results(self.root):
            seen = self.view(result) if self.view is not None else result
            loaded[(result.slice, result.arm, result.k)] = Loaded(self.cite(path), seen)
        return loaded

    @cached_property
    def stack(self) -> str:
        stacks = {item.result.stack for item in self.results.values()}
        if len(stacks) != 1:
            raise ResultError(f"{self.root}: expected result files of one stack, found {sorted(stacks) or 'none'}")
        return stacks.pop()

    @property
    def label(self) -> str:
        base = STACK_LABELS[self.stack]
        return f"{base} · {self.view.note}" if self.view is not None else base

    def get(self, slice_name: str, arm: str, k: int | None) -> Loaded | None:
        return self.results.get((slice_name, arm, k))

    def require(self, slice_name: str, arm: str, k: int | None) -> Loaded:
        found = self.get(slice_name, arm, k)
        if found is None:
            name = f"{arm}__k{k}.json" if k is not None else f"{arm}.json"
            raise ResultError(f"{self.root}: expected a result file for slice {slice_name}, {name}; found none")
        return found

    def heldout_conversations(self) -> list[str]:
        return sorted({heldout_conversation(s) for (s, _, _) in self.results if is_heldout(s)})

    def heldout(self, arm: str, k: int | None) -> list[Loaded]:
        """One file per held-out conversation for (arm, k), sorted by conversation; all or nothing."""
        convs = self.heldout_conversations()
        found = [self.get(heldout_slice(c), arm, k) for c in convs]
        missing = [c for c, f in zip(convs, found) if f is None]
        if missing and len(missing) < len(convs):
            raise ResultError(
                f"{self.root}/heldout/{missing[0]}: expected {arm}__k{k}.json like the other conversations, found none"
            )
        return [f for f in found if f is not None]

    def supplementary(self, name: str) -> tuple[SourceFile, Any]:
        path = self.root / "supplementary" / name
        if not path.is_file():
            raise ResultError(f"{path}: expected a supplementary input, found none")
        return self.cite(path), json.loads(path.read_text(encoding="utf-8"))

    def has_supplementary(self, name: str) -> bool:
        return (self.root / "supplementary" / name).is_file()

    def article_numbers_path(self) -> Path:
        return self.root / ARTICLE_NUMBERS
