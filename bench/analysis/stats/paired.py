"""Paired comparison of two systems answering the same questions.

Each side is a pandas Series of 0/1 correctness indexed by question id. Every comparison in the article is paired:
d_i = A_i - B_i over the same question ids, and the per-question 95% interval is mean(d) ± z·sd(d)/√n with the
sample standard deviation (n − 1), exactly as the original `heldout_report.py` computed it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.errors import QuestionSetMismatch, ResultError

Z_95 = 1.96


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval, all on the same scale (fractions, not points)."""

    estimate: float
    low: float
    high: float

    def points(self) -> Interval:
        """The same interval in percentage points, as tables print it."""
        return Interval(100 * self.estimate, 100 * self.low, 100 * self.high)

    def clipped(self, lowest: float, highest: float) -> Interval:
        """The interval with its bounds held inside [lowest, highest], the values the quantity can take."""
        return Interval(self.estimate, max(self.low, lowest), min(self.high, highest))


def _side_name(series: pd.Series, default: str) -> str:
    return str(series.name) if series.name is not None else default


def require_same_questions(a: pd.Series, b: pd.Series) -> None:
    """Refuse two sides whose question ids differ, naming the first id (in sorted order) found on one side only.

    Duplicated ids are refused too: pooling files that answer a question twice would weight it twice.
    """
    for side, default in ((a, "A"), (b, "B")):
        duplicated = side.index[side.index.duplicated()]
        if len(duplicated):
            raise QuestionSetMismatch(
                f"{_side_name(side, default)}: expected each question id once, found {duplicated[0]!r} twice"
            )
    only_a = a.index.difference(b.index)
    only_b = b.index.difference(a.index)
    if len(only_a) or len(only_b):
        first_a = sorted(map(str, only_a))[0] if len(only_a) else None
        first_b = sorted(map(str, only_b))[0] if len(only_b) else None
        if first_b is None or (first_a is not None and first_a <= first_b):
            where, missing_from, qid = _side_name(a, "A"), _side_name(b, "B"), first_a
        else:
            where, missing_from, qid = _side_name(b, "B"), _side_name(a, "A"), first_b
        raise QuestionSetMismatch(
            f"question sets differ: expected the same ids on both sides, found {qid!r} in {where} "
            f"but not in {missing_from} ({len(only_a)} only in {_side_name(a, 'A')}, "
            f"{len(only_b)} only in {_side_name(b, 'B')})"
        )


def paired_differences(a: pd.Series, b: pd.Series) -> pd.Series:
    """d_i = a_i − b_i for every question id, aligned by id (sorted), after checking both sides have the same ids."""
    require_same_questions(a, b)
    a_sorted = a.sort_index().astype(float)
    b_sorted = b.reindex(a_sorted.index).astype(float)
    return (a_sorted - b_sorted).rename("d")


def per_question_ci(d: pd.Series | np.ndarray, z: float = Z_95) -> Interval:
    """mean(d) ± z·sd(d)/√n, sample SD (ddof=1). One question gives a zero-width interval (no spread to estimate)."""
    values = np.asarray(d, dtype=float)
    n = values.size
    if n == 0:
        raise ResultError("paired differences: expected at least one question, found none")
    mean = float(values.mean())
    if n == 1:
        return Interval(mean, mean, mean)
    half_width = z * float(values.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half_width, mean + half_width)


def accuracy(correct: pd.Series | np.ndarray) -> float:
    """Share of questions answered correctly (0/1 or bool values)."""
    values = np.asarray(correct, dtype=float)
    return float(values.mean()) if values.size else float("nan")
