"""How calibrated a decision model is: confidence, ECE, Brier, NLL and temperature scaling on plain arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.analysis.stats import (
    brier_scores,
    calibration_summary,
    cross_fit_probs,
    expected_calibration_error,
    fit_temperature,
    nll_scores,
    probability_matrix,
    score_intervals,
    with_temperature,
)
from bench.errors import BenchError

# Four binary decisions: conf 0.9 right (bin 9), 0.8 wrong (bin 8), 0.6 and 0.65 right (bin 6).
PROBS = np.array([[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.65, 0.35]])
LABELS = np.array([0, 1, 0, 0])


def test_ece_by_hand() -> None:
    # bin 9: ¼·|1 − 0.9|; bin 8: ¼·|0 − 0.8|; bin 6: ½·|1 − 0.625|.
    assert expected_calibration_error(PROBS, LABELS) == pytest.approx(0.025 + 0.2 + 0.1875)


def test_a_perfectly_calibrated_bin_has_no_error() -> None:
    probs = np.array([[0.75, 0.25]] * 4)
    assert expected_calibration_error(probs, np.array([0, 0, 0, 1])) == pytest.approx(0.0)


def test_brier_and_nll_by_hand() -> None:
    assert brier_scores(PROBS, LABELS) == pytest.approx([0.02, 1.28, 0.32, 0.245])
    assert nll_scores(PROBS, LABELS) == pytest.approx([-math.log(p) for p in (0.9, 0.2, 0.6, 0.65)])


def test_items_become_a_matrix_over_every_option_and_label() -> None:
    table = probability_matrix([{"update": 0.7, "new": 0.3}, {"new": 1.0}], ["update", "duplicate"])
    assert table.options == ("update", "new", "duplicate")
    assert table.probs.tolist() == [[0.7, 0.3, 0.0], [0.0, 1.0, 0.0]]
    assert table.labels.tolist() == [0, 2]
    # A label the model gave no probability: Brier counts it (1 + 1 = 2, the worst), NLL is floored at 1e-12.
    assert brier_scores(table.probs, table.labels)[1] == pytest.approx(2.0)
    assert nll_scores(table.probs, table.labels)[1] == pytest.approx(-math.log(1e-12))


def test_mismatched_items_and_labels_are_refused() -> None:
    with pytest.raises(BenchError, match="one label per distribution"):
        probability_matrix([{"a": 1.0}], ["a", "b"])
    with pytest.raises(BenchError, match="probability matrix"):
        expected_calibration_error(np.array([0.5, 0.5]), np.array([0]))


def test_temperature_one_changes_nothing_and_larger_t_flattens() -> None:
    assert with_temperature(PROBS, 1.0) == pytest.approx(PROBS)
    flatter = with_temperature(PROBS, 3.0)
    assert np.all(flatter.max(axis=1) < PROBS.max(axis=1))
    assert flatter.sum(axis=1) == pytest.approx(np.ones(4))


def test_fitted_temperature_minimises_nll_like_a_fine_grid_search() -> None:
    rng = np.random.default_rng(4)
    # An overconfident model: right only 70% of the time at about 0.95 confidence.
    labels = (rng.random(200) > 0.7).astype(int)
    probs = np.tile([0.95, 0.05], (200, 1))
    t = fit_temperature(probs, labels)
    grid = np.exp(np.linspace(math.log(0.05), math.log(20), 4001))
    best_on_grid = grid[np.argmin([nll_scores(with_temperature(probs, g), labels).mean() for g in grid])]
    assert t > 1.0
    assert t == pytest.approx(best_on_grid, rel=5e-3)


def test_no_items_means_temperature_one() -> None:
    assert fit_temperature(np.zeros((0, 2)), np.zeros(0, dtype=int)) == 1.0


def test_cross_fit_tempers_each_half_with_the_other_halfs_temperature() -> None:
    rng = np.random.default_rng(9)
    probs = rng.dirichlet([1.0, 1.0, 1.0], size=30)
    labels = rng.integers(0, 3, size=30)
    tempered = cross_fit_probs(probs, labels)
    even, odd = np.arange(30) % 2 == 0, np.arange(30) % 2 == 1
    t_odd = fit_temperature(probs[odd], labels[odd])
    assert tempered[even] == pytest.approx(with_temperature(probs[even], t_odd))


def test_summary_and_bootstrap_intervals_bracket_the_point_scores() -> None:
    summary = calibration_summary(PROBS, LABELS)
    assert (summary.n, summary.accuracy) == (4, 0.75)
    assert summary.mean_confidence == pytest.approx(0.7375)
    intervals = score_intervals(PROBS, LABELS, seed=1, draws=2_000)
    for name, value in (("brier", summary.brier), ("nll", summary.nll)):
        assert intervals[name].low <= value <= intervals[name].high
        assert intervals[name].draws == 2_000 and intervals[name].seed == 1
