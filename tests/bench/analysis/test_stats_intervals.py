"""A reader sees the uncertainty of a single accuracy, and what a table of n paired questions could detect."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm
from statsmodels.stats.power import TTestPower

from bench.analysis.stats import minimum_detectable_effect, observed_mde, wilson_interval
from bench.errors import BenchError


def _wilson_by_hand(k: int, n: int, z: float = norm.ppf(0.975)) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("k, n", [(30, 35), (31, 35), (447, 610), (0, 20), (20, 20)])
def test_wilson_interval_matches_the_score_formula(k: int, n: int) -> None:
    interval = wilson_interval(k, n)
    assert interval.estimate == pytest.approx(k / n)
    assert (interval.low, interval.high) == pytest.approx(_wilson_by_hand(k, n))
    assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0


def test_a_perfect_score_still_has_a_lower_bound_below_one() -> None:
    assert wilson_interval(30, 30).low < 0.9


def test_impossible_counts_are_refused_in_one_line() -> None:
    with pytest.raises(BenchError, match="0 <= correct <= n"):
        wilson_interval(36, 35)


def test_mde_is_the_effect_the_t_test_detects_with_80_percent_power() -> None:
    mde = minimum_detectable_effect(610, sd=0.5)
    power = TTestPower().power(effect_size=mde / 0.5, nobs=610, alpha=0.05, alternative="two-sided")
    assert power == pytest.approx(0.80, abs=1e-6)
    # Close to the normal approximation (z_.975 + z_.8)·sd/√n, a little larger for the t distribution.
    normal = (norm.ppf(0.975) + norm.ppf(0.8)) * 0.5 / math.sqrt(610)
    assert normal < mde < normal * 1.01


def test_a_small_table_can_only_detect_large_effects() -> None:
    assert minimum_detectable_effect(35, sd=0.4) > 3 * minimum_detectable_effect(610, sd=0.4)


def test_observed_mde_uses_the_sample_sd_of_the_differences() -> None:
    d = np.array([1, 0, -1, 0, 1, 0, 0, 1] * 10, dtype=float)
    assert observed_mde(d) == pytest.approx(minimum_detectable_effect(80, float(d.std(ddof=1))))


def test_mde_needs_spread_and_two_questions() -> None:
    with pytest.raises(BenchError, match="positive sd"):
        observed_mde(np.zeros(10))
    with pytest.raises(BenchError, match="at least 2"):
        minimum_detectable_effect(1, sd=0.5)
