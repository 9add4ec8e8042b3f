"""A reader compares two systems question by question: differences, the per-question interval, refusals."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from bench.analysis.stats import paired_differences, per_question_ci
from bench.errors import BenchError, QuestionSetMismatch


def _side(name: str, labels: dict[str, int]) -> pd.Series:
    return pd.Series(labels, name=name)


def test_differences_align_by_question_id_not_by_position() -> None:
    a = _side("engram", {"q1": 1, "q2": 1, "q3": 0})
    b = _side("mem0", {"q3": 1, "q1": 0, "q2": 1})  # same ids, different order
    d = paired_differences(a, b)
    assert d.to_dict() == {"q1": 1.0, "q2": 0.0, "q3": -1.0}


def test_per_question_interval_matches_a_hand_computation_and_statistics_stdev() -> None:
    a = _side("A", {"q1": 1, "q2": 1, "q3": 0, "q4": 0, "q5": 1})
    b = _side("B", {"q1": 0, "q2": 1, "q3": 1, "q4": 0, "q5": 0})
    d = paired_differences(a, b)  # [1, 0, -1, 0, 1]
    ci = per_question_ci(d)
    # mean 0.2; sample variance 2.8/4 = 0.7; half width 1.96·√0.7/√5.
    half = 1.96 * math.sqrt(0.7) / math.sqrt(5)
    assert ci.estimate == pytest.approx(0.2)
    assert (ci.low, ci.high) == pytest.approx((0.2 - half, 0.2 + half))
    library_half = 1.96 * statistics.stdev(d.tolist()) / math.sqrt(len(d))
    assert ci.high - ci.estimate == pytest.approx(library_half)
    assert ci.points().estimate == pytest.approx(20.0)


def test_identical_answers_give_a_zero_width_interval_at_zero() -> None:
    a = _side("A", {"q1": 1, "q2": 0})
    ci = per_question_ci(paired_differences(a, a.rename("B")))
    assert (ci.estimate, ci.low, ci.high) == (0.0, 0.0, 0.0)


def test_mismatched_question_sets_are_refused_naming_the_first_differing_id() -> None:
    a = _side("engram-k3", {"conv-30:1": 1, "conv-30:2": 1, "conv-30:9": 0})
    b = _side("mem0-k3", {"conv-30:1": 1, "conv-30:2": 0, "conv-30:7": 1})
    with pytest.raises(QuestionSetMismatch) as caught:
        paired_differences(a, b)
    message = str(caught.value)
    assert "'conv-30:7'" in message and "in mem0-k3 but not in engram-k3" in message
    assert "\n" not in message
    assert isinstance(caught.value, BenchError)


def test_a_question_answered_twice_on_one_side_is_refused() -> None:
    a = pd.Series([1, 0], index=["q1", "q1"], name="pooled")
    b = _side("other", {"q1": 1})
    with pytest.raises(QuestionSetMismatch, match="'q1' twice"):
        paired_differences(a, b)


def test_an_empty_comparison_is_refused() -> None:
    with pytest.raises(BenchError, match="at least one question"):
        per_question_ci(pd.Series([], dtype=float))
