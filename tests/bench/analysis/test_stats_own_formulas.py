"""The statistics the base install computes with scipy alone (Wilson, exact McNemar, Holm, Cohen's kappa, the
paired t-test's detectable effect) give what the textbook formulas give by hand, and exactly what statsmodels gives
(it is in the test extra only, for this cross-check), so no printed number moved when statsmodels left the base
install."""

from __future__ import annotations

import itertools
import warnings

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


# --------------------------------------------------------------------------------- against statsmodels


@pytest.fixture(scope="module")
def sm() -> object:
    return pytest.importorskip("statsmodels.api")


def test_wilson_bounds_are_bit_for_bit_statsmodels_for_every_count_up_to_80(sm: object) -> None:
    from statsmodels.stats.proportion import proportion_confint

    for n in range(1, 81):
        for correct in range(n + 1):
            interval = wilson_interval(correct, n)
            assert (interval.low, interval.high) == proportion_confint(correct, n, alpha=1 - 0.95, method="wilson")


def test_exact_mcnemar_is_bit_for_bit_statsmodels(sm: object) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    for only_a, only_b in itertools.product(range(40), repeat=2):
        if only_a + only_b:
            expected = min(1.0, mcnemar(np.array([[0, only_a], [only_b, 0]]), exact=True).pvalue)
            assert mcnemar_exact_p(only_a, only_b) == expected


def test_holm_is_bit_for_bit_statsmodels_on_random_families(sm: object) -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for size in range(1, 9):
        for _ in range(6):  # statsmodels takes ~50 ms a call here
            p = np.round(rng.random(size) * rng.choice([1.0, 0.1]), 3)  # rounding makes ties too
            members = tuple(f"S{i}" for i in range(size))
            ours = holm(DeclaredFamily("random", members), dict(zip(members, p, strict=True)))
            rejected, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
            assert [a.adjusted for a in ours.values()] == adjusted.tolist()
            assert [a.rejected for a in ours.values()] == rejected.tolist()


def test_kappa_is_bit_for_bit_statsmodels_on_every_small_table(sm: object) -> None:
    from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its z value divides by 0 on a constant judge
        for cells in itertools.product(range(7), repeat=4):
            table = np.array(cells).reshape(2, 2)
            rows, columns = table.sum(1), table.sum(0)
            if (rows > 0).sum() == 1 and (columns > 0).sum() == 1 and rows.argmax() == columns.argmax():
                continue  # both judges constant on the same label: undefined, and the comparison says so
            if table.sum():
                assert cohens_kappa(table) == statsmodels_kappa(table).kappa


def test_the_detectable_effect_solves_the_power_equation_and_is_statsmodels_within_its_tolerance(sm: object) -> None:
    from statsmodels.stats.power import TTestPower

    for n in (2, 3, 10, 35, 199, 610, 1540):
        ours = minimum_detectable_effect(n, 1.0)
        assert paired_t_power(ours, n) == pytest.approx(0.8, abs=1e-12)
        # statsmodels' root finder stops earlier (its power there is off by up to ~1e-6) and may return the
        # mirror-image negative root
        theirs = TTestPower().solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
        assert ours == pytest.approx(abs(float(np.asarray(theirs).item())), rel=1e-5)
