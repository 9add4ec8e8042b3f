"""The exact McNemar test counts only the questions on which the two systems disagree."""

from __future__ import annotations

from math import comb

import pandas as pd
import pytest
from scipy.stats import binomtest

from bench.analysis.stats import discordance, mcnemar_exact_p


def _original_formula(b: int, c: int) -> float:
    """The article's harness: min(1, 2·Σ_{i≤min(b,c)} C(n,i)/2^n), 1.0 with no discordant questions."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


def test_paired_table_counts_each_kind_of_question() -> None:
    a = pd.Series({"q1": 1, "q2": 1, "q3": 0, "q4": 0, "q5": 1}, name="A")
    b = pd.Series({"q1": 1, "q2": 0, "q3": 1, "q4": 0, "q5": 0}, name="B")
    table = discordance(a, b)
    assert (table.both, table.only_a, table.only_b, table.neither) == (1, 2, 1, 1)
    assert table.n == 5
    assert table.table().tolist() == [[1, 2], [1, 1]]


def test_hand_computed_p_values() -> None:
    assert mcnemar_exact_p(3, 0) == pytest.approx(0.25)  # 2 · 1/8
    assert mcnemar_exact_p(5, 1) == pytest.approx(2 * 7 / 64)  # 2 · (C(6,0)+C(6,1)) / 2^6
    assert mcnemar_exact_p(4, 4) == 1.0
    assert mcnemar_exact_p(0, 0) == 1.0


@pytest.mark.parametrize("b, c", [(1, 0), (2, 7), (10, 10), (33, 86), (120, 29), (44, 49), (0, 15)])
def test_p_value_agrees_with_scipy_binomtest_and_the_original_formula(b: int, c: int) -> None:
    p = mcnemar_exact_p(b, c)
    assert p == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)
    assert p == pytest.approx(_original_formula(b, c), rel=1e-9)


def test_negative_counts_are_a_programming_error() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 3)
