"""Paired non-inferiority of A against B on the same questions.

With d_i = A_i − B_i (0/1 correctness), d̄ the mean and se = sd(d, ddof=1)/√n, A is non-inferior to B within a
margin δ < 0 when the one-sided 95% lower bound d̄ − 1.645·se lies above δ. The one-sided p-value tests
H0: E[d] ≤ δ against H1: E[d] > δ with the normal approximation, p = 1 − Φ((d̄ − δ)/se). A conversation-cluster
bootstrap of d̄ (the same two-stage resample as the two-sided intervals) gives a second lower bound, its 5th
percentile, which does not lean on the normal approximation or on questions being independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import norm

from bench.analysis.stats.bootstrap import DEFAULT_DRAWS, cluster_bootstrap_draws, percentile_interval
from bench.analysis.stats.paired import paired_differences
from bench.errors import ResultError

# The one-sided 95% normal quantile, Φ⁻¹(0.95) ≈ 1.6449, as the bound is printed (two-sided 90%).
Z_ONE_SIDED_95 = 1.645
# The paper's declared margin: A may be at most 5 points below B.
DEFAULT_MARGIN = -0.05


@dataclass(frozen=True)
class ConversationBound:
    """The 5th percentile of the conversation-cluster bootstrap of d̄, and what produced it."""

    p5: float
    clusters: int
    draws: int
    seed: int


@dataclass(frozen=True)
class NonInferiority:
    """One paired non-inferiority test; every figure is a fraction (multiply by 100 for points)."""

    n: int
    mean_difference: float
    se: float
    lower_bound: float
    margin: float
    z: float
    p_one_sided: float
    conversation_bound: ConversationBound | None = None

    @property
    def non_inferior(self) -> bool:
        return self.lower_bound > self.margin


def noninferiority_from_differences(
    d: pd.Series | np.ndarray, margin: float = DEFAULT_MARGIN, z: float = Z_ONE_SIDED_95
) -> NonInferiority:
    """The normal-approximation test from the per-question differences alone."""
    values = np.asarray(d, dtype=float)
    n = values.size
    if n < 2:
        raise ResultError(f"non-inferiority: expected at least two paired questions, found {n}")
    if margin >= 0:
        raise ResultError(f"non-inferiority: expected a negative margin (how far below B is tolerated), found {margin}")
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        # Every question gives the same d: the bound is d̄ itself and the test is decided without error.
        p = 0.0 if mean > margin else 1.0
    else:
        p = float(norm.sf((mean - margin) / se))
    return NonInferiority(
        n=n, mean_difference=mean, se=se, lower_bound=mean - z * se, margin=margin, z=z, p_one_sided=p
    )


def conversation_bound(
    d: pd.Series | np.ndarray, clusters: pd.Series | np.ndarray, draws: int = DEFAULT_DRAWS, seed: int = 0
) -> ConversationBound:
    """5th percentile of the two-stage conversation bootstrap of d̄ (the lower end of its central 90% interval)."""
    samples = cluster_bootstrap_draws(d, clusters, draws=draws, seed=seed)
    low, _ = percentile_interval(samples, level=0.90)
    return ConversationBound(p5=low, clusters=int(np.unique(np.asarray(clusters)).size), draws=draws, seed=seed)


def noninferiority(
    a: pd.Series,
    b: pd.Series,
    margin: float = DEFAULT_MARGIN,
    clusters: pd.Series | None = None,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> NonInferiority:
    """Is A non-inferior to B? ``a`` and ``b`` are 0/1 series indexed by the same question ids; ``clusters`` (the
    conversation of each question id) adds the bootstrap bound."""
    d = paired_differences(a, b)
    test = noninferiority_from_differences(d, margin=margin)
    if clusters is None:
        return test
    labels = clusters.reindex(d.index)
    if labels.isna().any():
        missing = d.index[labels.isna()][0]
        raise ResultError(f"non-inferiority: expected a conversation for every question, found none for {missing!r}")
    bound = conversation_bound(d.to_numpy(), labels.to_numpy(), draws=draws, seed=seed)
    return replace(test, conversation_bound=bound)
