"""The statistics come from statsmodels (Wilson, exact McNemar, Holm, Cohen's kappa) and scipy (the paired t-test's
power); the checks here are by hand, so a wrong call (a swapped table, the wrong method name) fails them. The detectable
effect keeps its own root finder, because statsmodels' solver is wrong at n = 1540: the last test shows that case."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bench.analysis.metric_compare import cohens_kappa
from bench.analysis.stats import minimum_detectable_effect, wilson_interval
from bench.analysis.stats.intervals import paired_t_power
from bench.analysis.stats.mcnemar import mcnemar_exact_p
from bench.analysis.stats.multiplicity import DeclaredFamily, holm

# ---------------------------------------------------------------------------------------------- by hand


def test_two_judges_who_agree_on_35_of_50_at_even_and_60_40_rates_have_kappa_0_4() -> None:
    # observed agreement 35/50 = 0.7; chance 0.5·0.6 + 0.5·0.4 = 0.5; (0.7 − 0.5) / (1 − 0.5) = 0.4
    assert cohens_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-12)


def test_judges_who_always_disagree_at_even_rates_have_kappa_minus_one() -> None:
    assert cohens_kappa(np.array([[0, 12], [12, 0]])) == pytest.approx(-1.0, abs=1e-12)


def test_one_system_ahead_on_nine_of_ten_discordant_questions_is_significant_at_5_percent() -> None:
    # 2·(C(10,0) + C(10,1)) / 2^10 = 22/1024
    assert mcnemar_exact_p(9, 1) == pytest.approx(22 / 1024, abs=1e-15)
    assert mcnemar_exact_p(0, 5) == pytest.approx(2 / 32, abs=1e-15)
    assert mcnemar_exact_p(4, 4) == 1.0  # the doubled tail passes 1 when the sides tie: capped


def test_holm_rejects_the_two_smallest_of_four_and_stops_at_the_third() -> None:
    family = DeclaredFamily("four probes", ("recall", "dates", "names", "places"))
    adjusted = holm(family, {"recall": 0.01, "dates": 0.04, "names": 0.03, "places": 0.005})
    # sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> running max 0.06
    assert {m: round(a.adjusted, 12) for m, a in adjusted.items()} == {
        "recall": 0.03,
        "dates": 0.06,
        "names": 0.06,
        "places": 0.02,
    }
    # 0.005 <= 0.05/4 and 0.01 <= 0.05/3 reject; 0.03 > 0.05/2 stops, so 0.04 is kept too (step-down)
    assert [m for m, a in adjusted.items() if a.rejected] == ["recall", "places"]


def test_at_the_detectable_effect_simulated_paired_t_tests_reject_about_80_percent() -> None:
    n, sd = 35, 0.5
    effect = minimum_detectable_effect(n, sd)
    rng = np.random.default_rng(20261205)
    differences = rng.normal(effect, sd, size=(40_000, n))
    rejected = stats.ttest_1samp(differences, 0.0, axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.80, abs=0.01)  # 40k trials: the binomial sd is 0.002
    assert paired_t_power(effect / sd, n) == pytest.approx(0.80, abs=1e-9)
    assert paired_t_power(0.0, n) == pytest.approx(0.05, abs=1e-12)  # no effect: rejects at the level


# ------------------------------------------------------------------- where statsmodels' solver is wrong


def test_at_1540_questions_statsmodels_solves_to_a_negative_effect_and_ours_to_the_positive_one() -> None:
    from statsmodels.stats.power import TTestPower

    theirs = float(np.asarray(TTestPower().solve_power(None, 1540, 0.05, 0.8, alternative="two-sided")).item())
    ours = minimum_detectable_effect(1540, 1.0)
    assert theirs < 0  # the library's answer, which is why bench.analysis.stats solves it itself
    assert ours > 0 and ours == pytest.approx(-theirs, rel=1e-5)
    assert paired_t_power(ours, 1540) == pytest.approx(0.8, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 10, 35, 199, 610, 1540])
def test_the_detectable_effect_reaches_80_percent_power_to_twelve_digits(n: int) -> None:
    assert paired_t_power(minimum_detectable_effect(n, 1.0), n) == pytest.approx(0.8, abs=1e-12)


def test_wilson_bounds_stay_inside_zero_and_one_for_every_count_up_to_80() -> None:
    for n in range(1, 81):
        for correct in range(n + 1):
            interval = wilson_interval(correct, n)
            assert 0.0 <= interval.low and interval.high <= 1.0
            # rounding leaves a bound at 0 or all correct a hair inside (5.6e-17 at 0/3, 1 − 1e-16 at 10/10), never more
            assert interval.low <= correct / n + 1e-15 and correct / n - 1e-15 <= interval.high
