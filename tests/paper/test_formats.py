"""Numbers print the way the article prints them."""

from __future__ import annotations

import pytest

from bench.errors import FormatError
from bench.report.formats import show


@pytest.mark.parametrize(
    ("value", "kind", "printed"),
    [
        (0.7327868852459016, "pct", "73.3%"),
        (538 / 800, "pct", "67.2%"),  # Python's float rounding, as the original build printed it
        (0.14918, "pp", "+14.9"),
        (-0.02295, "pp", "-2.3"),
        (1461.95, "trunc", "1,461"),  # token means are truncated, not rounded
        (7674.67, "ms", "7,675 ms"),
        (2.43e-14, "p", "2.4e-14"),
        (1.26675857173081e-06, "p", "1.3e-06"),
        (0.6789, "p", "0.679"),
        ((30, 35), "frac", "30/35"),
        (70.008, "x", "70.0×"),
        (0.002368, "usd6", "$0.002368"),
        (18.6955861875, "usd2", "$18.70"),
        (None, "pct", "–"),
    ],
)
def test_each_kind_prints_like_the_article(value: object, kind: str, printed: str) -> None:
    assert show(value, kind) == printed


def test_an_unknown_kind_or_a_nan_is_refused() -> None:
    with pytest.raises(FormatError, match="expected one of"):
        show(1.0, "percent")
    with pytest.raises(FormatError, match="finite"):
        show(float("nan"), "pct")
