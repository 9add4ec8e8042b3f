"""Holm's step-down adjustment over a family of tests declared in advance, on cases worked by hand."""

from __future__ import annotations

import pytest

from bench.analysis.stats import DeclaredFamily, holm
from bench.errors import ResultError

FOUR = DeclaredFamily("four", ("T1", "T2", "T3", "T4"))


def test_four_tests_worked_by_hand() -> None:
    # Ascending: T4 0.005·4 = 0.02; T1 0.01·3 = 0.03; T3 0.03·2 = 0.06; T2 0.04·1 = 0.04, carried up to 0.06.
    adjusted = holm(FOUR, {"T1": 0.01, "T2": 0.04, "T3": 0.03, "T4": 0.005})
    assert list(adjusted) == ["T1", "T2", "T3", "T4"]  # the family's order, not the sorted one
    assert {k: round(v.adjusted, 12) for k, v in adjusted.items()} == {"T1": 0.03, "T2": 0.06, "T3": 0.06, "T4": 0.02}
    assert {k for k, v in adjusted.items() if v.rejected} == {"T1", "T4"}
    assert adjusted["T2"].p == 0.04


def test_step_down_stops_at_the_first_non_rejection() -> None:
    # 0.001·3 = 0.003 rejected; 0.02·2 = 0.04 rejected; 0.049·1 = 0.049 rejected at 0.05 but not at 0.045.
    family = DeclaredFamily("three", ("a", "b", "c"))
    ps = {"a": 0.049, "b": 0.001, "c": 0.02}
    assert all(v.rejected for v in holm(family, ps).values())
    strict = holm(family, ps, alpha=0.045)
    assert (strict["b"].rejected, strict["c"].rejected, strict["a"].rejected) == (True, True, False)


def test_adjusted_values_are_capped_at_one() -> None:
    adjusted = holm(DeclaredFamily("two", ("x", "y")), {"x": 0.5, "y": 0.6})
    assert adjusted["x"].adjusted == 1.0 and adjusted["y"].adjusted == 1.0


def test_a_single_test_is_not_adjusted() -> None:
    assert holm(DeclaredFamily("one", ("only",)), {"only": 0.03})["only"].adjusted == pytest.approx(0.03)


@pytest.mark.parametrize(
    "p_values, message",
    [
        ({"T1": 0.01, "T2": 0.02, "T3": 0.03}, "no p-value for T4"),
        ({"T1": 0.01, "T2": 0.02, "T3": 0.03, "T4": 0.04, "T5": 0.001}, "undeclared test T5"),
        ({"T1": 0.01, "T2": 1.2, "T3": 0.03, "T4": 0.04}, r"in \[0, 1\], found 1.2 for T2"),
    ],
)
def test_the_family_cannot_shrink_or_grow_after_the_fact(p_values: dict[str, float], message: str) -> None:
    with pytest.raises(ResultError, match=message):
        holm(FOUR, p_values)


def test_a_family_declares_each_member_once() -> None:
    with pytest.raises(ResultError, match="'S1' twice"):
        DeclaredFamily("dup", ("S1", "S2", "S1"))
    with pytest.raises(ResultError, match="at least one member"):
        DeclaredFamily("empty", ())
