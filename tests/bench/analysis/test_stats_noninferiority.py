"""Is one system at most a margin worse than another? The paired non-inferiority test, on cases worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bench.analysis.stats import (
    Z_ONE_SIDED_95,
    cluster_bootstrap_draws,
    conversation_bound,
    noninferiority,
    noninferiority_from_differences,
)
from bench.errors import ResultError


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def _from_discordant(only_a: int, only_b: int, n: int) -> np.ndarray:
    """Per-question differences of a paired 0/1 table: +1 where only A is right, -1 where only B is."""
    return np.array([1.0] * only_a + [-1.0] * only_b + [0.0] * (n - only_a - only_b))


def test_ten_questions_worked_by_hand() -> None:
    # d = two +1, one -1, seven 0: mean 0.1; squared deviations 2·0.81 + 1.21 + 7·0.01 = 2.9; var = 2.9/9.
    d = [1, 0, 0, -1, 0, 1, 0, 0, 0, 0]
    test = noninferiority_from_differences(d, margin=-0.05)
    se = math.sqrt(2.9 / 9) / math.sqrt(10)
    assert test.n == 10
    assert test.mean_difference == pytest.approx(0.1)
    assert test.se == pytest.approx(se)
    assert test.lower_bound == pytest.approx(0.1 - 1.645 * se)
    assert test.lower_bound == pytest.approx(-0.1953, abs=1e-4)
    assert test.p_one_sided == pytest.approx(_normal_sf((0.1 + 0.05) / se))
    assert not test.non_inferior  # the bound (-19.5 points) is below the -5 point margin


def test_a_large_sample_with_no_difference_is_non_inferior() -> None:
    # 1,000 questions, 30 won by each side: the bound is -1.645·sqrt(60/999)/sqrt(1000) ≈ -1.27 points.
    test = noninferiority_from_differences(_from_discordant(30, 30, 1000), margin=-0.05)
    assert test.mean_difference == 0.0
    assert test.lower_bound == pytest.approx(-Z_ONE_SIDED_95 * math.sqrt(60 / 999) / math.sqrt(1000))
    assert test.non_inferior
    assert test.p_one_sided < 1e-4


@pytest.mark.parametrize(
    "only_a, only_b, n, se, bound, p",
    [
        # The v3 paper's recorded figures for T0R k=6 vs engram v2 k=3 and T0R k=3 vs T0R-LLM k=3 (778 questions).
        (69, 73, 778, 0.015325420976256223, -0.030351705680748683, 0.0017108478555534767),
        (28, 31, 778, 0.009878320615324874, -0.020105878543314817, 1.496969482928101e-06),
    ],
)
def test_matches_the_papers_recorded_figures_from_its_discordant_counts(
    only_a: int, only_b: int, n: int, se: float, bound: float, p: float
) -> None:
    test = noninferiority_from_differences(_from_discordant(only_a, only_b, n), margin=-0.05)
    assert test.mean_difference == pytest.approx((only_a - only_b) / n)
    assert test.se == pytest.approx(se, rel=1e-12)
    assert test.lower_bound == pytest.approx(bound, rel=1e-12)
    assert test.p_one_sided == pytest.approx(p, rel=1e-9)
    assert test.non_inferior


def test_series_are_paired_by_question_id_not_by_position() -> None:
    a = pd.Series({"c1:0": 1, "c1:1": 0, "c1:2": 1, "c1:3": 1})
    b = pd.Series({"c1:3": 1, "c1:2": 0, "c1:1": 1, "c1:0": 1})  # same ids, another order
    test = noninferiority(a, b, margin=-0.1)
    assert test.mean_difference == pytest.approx(0.0)  # d = 0, -1, +1, 0
    assert test.se == pytest.approx(math.sqrt(2 / 3) / 2)
    assert test.conversation_bound is None


def test_conversation_bootstrap_bound_is_the_5th_percentile_of_the_cluster_draws() -> None:
    rng = np.random.default_rng(7)
    ids = [f"conv-{c}:{i}" for c in range(5) for i in range(40)]
    a = pd.Series(rng.integers(0, 2, size=200), index=ids)
    b = pd.Series(rng.integers(0, 2, size=200), index=ids)
    clusters = pd.Series([i.split(":")[0] for i in ids], index=ids)
    test = noninferiority(a, b, clusters=clusters, draws=2000, seed=11)
    bound = test.conversation_bound
    assert bound is not None and (bound.clusters, bound.draws, bound.seed) == (5, 2000, 11)
    d = (a - b).sort_index().to_numpy(dtype=float)
    draws = cluster_bootstrap_draws(d, clusters.sort_index().to_numpy(), draws=2000, seed=11)
    assert bound.p5 == float(np.quantile(draws, 0.05, method="higher"))
    assert bound.p5 < test.mean_difference
    # ~5% of draws fall below it
    assert 0.04 <= float((draws < bound.p5).mean()) <= 0.05


def test_constant_differences_give_a_bound_equal_to_the_mean() -> None:
    bound = conversation_bound(np.full(12, 0.25), np.repeat(["x", "y", "z"], 4), draws=500, seed=1)
    assert bound.p5 == pytest.approx(0.25)
    test = noninferiority_from_differences(np.zeros(12), margin=-0.05)
    assert test.se == 0.0 and test.lower_bound == 0.0 and test.p_one_sided == 0.0 and test.non_inferior


@pytest.mark.parametrize(
    "d, margin, message",
    [([1.0], -0.05, "at least two paired questions"), ([1.0, 0.0], 0.05, "negative margin")],
)
def test_refuses_what_it_cannot_test(d: list[float], margin: float, message: str) -> None:
    with pytest.raises(ResultError, match=message):
        noninferiority_from_differences(d, margin=margin)


def test_refuses_questions_without_a_conversation() -> None:
    a = pd.Series({"q1": 1, "q2": 0})
    b = pd.Series({"q1": 0, "q2": 0})
    with pytest.raises(ResultError, match="no.*for 'q2'|none for 'q2'"):
        noninferiority(a, b, clusters=pd.Series({"q1": "c1"}))
