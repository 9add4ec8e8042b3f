"""Display formats: how the article prints a number of each kind.

One function per kind so a number's printed form is decided by its kind alone, never by the prose around it.
Rounding is Python's own float formatting (what the original build used), so 0.6725 prints as 67.2%.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from bench.errors import FormatError


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _pp(v: float) -> str:
    """Signed percentage points from a fraction: 0.149 → +14.9 (ASCII minus, as the article's number list)."""
    return f"{100 * v:+.1f}"


def _int(v: float) -> str:
    return f"{int(v):,}"


def _trunc(v: float) -> str:
    """Token means: the article truncates to an integer (1461.95 → 1,461)."""
    return f"{math.floor(v):,}"


def _ms(v: float) -> str:
    return f"{round(v):,} ms"


def _p(v: float) -> str:
    """p-values: two significant digits in e-notation below 0.001, else three decimals."""
    return f"{v:.1e}" if v < 0.001 else f"{v:.3f}"


def _pct_bare(v: float) -> str:
    """Accuracy in percent without the sign, as the v3 paper's tables print it: 0.7725 → 77.2."""
    return f"{100 * v:.1f}"


def _round_int(v: float) -> str:
    """Rounded to the nearest integer with thousands separators (the v3 paper's token means and ratios)."""
    return f"{round(v):,}"


def _p_short(v: float) -> str:
    """The v3 paper's p-values: below 0.001 two significant digits with an unpadded exponent (1.3e-4), else two
    decimals (1.00)."""
    if v < 0.001:
        mantissa, exponent = f"{v:.1e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{v:.2f}"


def _frac(v: tuple[int, int] | list[int]) -> str:
    correct, n = v
    return f"{correct}/{n}"


FORMATS: dict[str, Callable[..., str]] = {
    "pct": _pct,
    "pp": _pp,
    "int": _int,
    "trunc": _trunc,
    "ms": _ms,
    "p": _p,
    "p_short": _p_short,
    "pct_bare": _pct_bare,
    "round_int": _round_int,
    "frac": _frac,
    "x": lambda v: f"{v:.1f}×",
    "f2": lambda v: f"{v:.2f}",
    "f3": lambda v: f"{v:.3f}",
    "usd2": lambda v: f"${v:,.2f}",
    "usd3": lambda v: f"${v:,.3f}",
    "usd4": lambda v: f"${v:,.4f}",
    "usd6": lambda v: f"${v:,.6f}",
    "raw": str,
}


def show(value: object, kind: str) -> str:
    """The printed form of ``value`` as a ``kind`` (one of FORMATS); None prints as an en dash."""
    if kind not in FORMATS:
        raise FormatError(f"display kind: expected one of {', '.join(FORMATS)}, found {kind!r}")
    if value is None:
        return "–"
    if isinstance(value, float) and not math.isfinite(value):
        raise FormatError(f"display {kind}: expected a finite number, found {value}")
    return FORMATS[kind](value)
