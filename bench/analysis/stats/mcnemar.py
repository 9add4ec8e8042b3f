"""Exact McNemar test on the discordant questions of a paired comparison.

Only questions where exactly one side is correct carry information: under the null, each is equally likely to favour
either side, so the count favouring A is Binomial(b + c, 1/2). statsmodels computes the two-sided exact p-value,
min(1, 2·P(X ≤ min(b, c))) = min(1, 2·Σ_{i ≤ min(b,c)} C(b+c, i) / 2^(b+c)), the original's formula; it is 1.0 when
there are no discordant questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from bench.analysis.stats.paired import require_same_questions


@dataclass(frozen=True)
class Discordance:
    """The 2×2 paired table: both correct, only A, only B, both wrong."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    def table(self) -> np.ndarray:
        """Rows: A correct / wrong; columns: B correct / wrong (statsmodels' layout)."""
        return np.array([[self.both, self.only_a], [self.only_b, self.neither]])


def discordance(a: pd.Series, b: pd.Series) -> Discordance:
    """Count the four cells of the paired table for two 0/1 series indexed by the same question ids."""
    require_same_questions(a, b)
    a_ok = a.sort_index().astype(bool)
    b_ok = b.reindex(a_ok.index).astype(bool)
    return Discordance(
        both=int((a_ok & b_ok).sum()),
        only_a=int((a_ok & ~b_ok).sum()),
        only_b=int((~a_ok & b_ok).sum()),
        neither=int((~a_ok & ~b_ok).sum()),
    )


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (1.0 when both are zero)."""
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be non-negative, got {only_a} and {only_b}")
    if only_a + only_b == 0:
        return 1.0
    result = mcnemar(np.array([[0, only_a], [only_b, 0]]), exact=True)
    return float(min(1.0, result.pvalue))
