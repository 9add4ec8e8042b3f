"""Holm's step-down adjustment over a family of tests declared before the results are read.

A family is a fixed, ordered list of test ids (the paper's S1-S7). Adjusting over whatever tests happen to be at hand
would let the family shrink after the fact, so the adjustment refuses a p-value set that is not exactly the declared
family. The arithmetic is statsmodels' ``multipletests(method="holm")``: sort the m p-values ascending, multiply the
i-th smallest by (m − i + 1), carry the running maximum upward and cap at 1. Rejection steps down: the i-th smallest
is rejected while every p-value up to it is at most α/(m − i + 1); the first that is not stops the rejections.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

from bench.errors import ResultError


@dataclass(frozen=True)
class DeclaredFamily:
    """A declared family of hypothesis tests: a name and its members, in the order they are reported."""

    name: str
    members: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.members:
            raise ResultError(f"test family {self.name}: expected at least one member, found none")
        duplicated = sorted({m for m in self.members if self.members.count(m) > 1})
        if duplicated:
            raise ResultError(f"test family {self.name}: expected each member once, found {duplicated[0]!r} twice")


@dataclass(frozen=True)
class Adjusted:
    """One member's raw p-value, its Holm-adjusted p-value and whether it is rejected at the family's alpha."""

    p: float
    adjusted: float
    rejected: bool


def _checked(family: DeclaredFamily, p_values: Mapping[str, float]) -> np.ndarray:
    missing = [m for m in family.members if m not in p_values]
    extra = sorted(set(p_values) - set(family.members))
    if missing or extra:
        found = f"no p-value for {missing[0]}" if missing else f"an undeclared test {extra[0]}"
        raise ResultError(
            f"test family {family.name}: expected p-values for exactly {', '.join(family.members)}; found {found}"
        )
    values = np.array([float(p_values[m]) for m in family.members])
    bad = [m for m, p in zip(family.members, values, strict=True) if not 0.0 <= p <= 1.0]
    if bad:
        raise ResultError(
            f"test family {family.name}: expected p-values in [0, 1], found {p_values[bad[0]]} for {bad[0]}"
        )
    return values


def holm(family: DeclaredFamily, p_values: Mapping[str, float], alpha: float = 0.05) -> dict[str, Adjusted]:
    """Holm-adjusted p-values for every member of ``family``, in the family's order."""
    values = _checked(family, p_values)
    rejected, adjusted, _, _ = multipletests(values, alpha=alpha, method="holm")
    return {
        member: Adjusted(p=float(p), adjusted=float(adj), rejected=bool(rej))
        for member, p, adj, rej in zip(family.members, values, adjusted, rejected, strict=True)
    }
