"""The cost/error trade-off of escalating unsure decisions, and the token-matched k."""

from __future__ import annotations

import pytest

from bench.analysis.stats import THETAS, cost_error_curve, jev_alone_error, token_matched_k
from bench.errors import BenchError

CONF = [0.4, 0.6, 0.9, 0.95]
EXACT = [False, True, False, True]


def test_thresholds_are_the_articles_fourteen() -> None:
    assert THETAS[0] == 0.30 and THETAS[-1] == 0.95 and len(THETAS) == 14
    assert 0.85 in THETAS


def test_curve_by_hand() -> None:
    curve = cost_error_curve(CONF, EXACT, cost_jev=0.001, cost_llm=0.1, thetas=[0.5], llm_errors=[0.0, 0.1])
    # θ=0.5 escalates the 0.4 item (¼); Jev errs on 1 of the 3 kept.
    assert curve["escalated"].tolist() == [0.25, 0.25]
    assert curve["cost"].tolist() == pytest.approx([0.001 + 0.025] * 2)
    assert curve["error"].tolist() == pytest.approx([0.75 / 3, 0.75 / 3 + 0.025])


def test_a_confidence_equal_to_theta_is_kept() -> None:
    curve = cost_error_curve([0.85, 0.9], [True, True], 0.0, 1.0, thetas=[0.85], llm_errors=[0.0])
    assert curve["escalated"].item() == 0.0


def test_escalating_everything_leaves_only_the_llm_error() -> None:
    curve = cost_error_curve(CONF, EXACT, 0.0, 1.0, thetas=[1.0], llm_errors=[0.1])
    assert curve[["escalated", "jev_error_kept"]].values.tolist() == [[1.0, 0.0]]
    assert curve["error"].item() == pytest.approx(0.1)


def test_jev_alone_error_and_refusals() -> None:
    assert jev_alone_error(EXACT) == 0.5
    with pytest.raises(BenchError, match="one exactness flag per confidence"):
        cost_error_curve([0.5], [True, False], 0.0, 1.0)


def test_token_matched_k_is_the_closest_mean_and_ties_take_the_smaller_k() -> None:
    assert token_matched_k({3: 159.1, 4: 211.6, 5: 263.9, 6: 315.2}, 290.0).k == 6
    assert token_matched_k({4: 100.0, 5: 200.0}, 150.0).k == 4
    with pytest.raises(BenchError, match="at least one k"):
        token_matched_k({}, 100.0)
