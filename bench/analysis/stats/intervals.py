"""Intervals for single accuracies, and what a paired table of n questions could have detected.

Wilson intervals (statsmodels `proportion_confint(method="wilson")`) behave well near 0 and 1, where the normal
interval does not, so single accuracies such as 30/35 get honest bounds.

Minimum detectable effect (MDE): the smallest true mean paired difference a two-sided test at level α detects with
the given power. Assumption, stated here because a reader must know it: the paired test is treated as a one-sample
t-test on d_i, with the standard deviation of d either observed in the table or stated by the caller. The power of
that test at standardised effect δ (df = n − 1, noncentrality δ√n, c = the t quantile at 1 − α/2) is
P(T' > c) + P(T' < −c) for T' noncentral t; the MDE is the δ whose power is the target, found by root finding,
times the sd. This solver is our own because statsmodels' `TTestPower.solve_power` is wrong here: at n = 1540 it
returns the mirror-image negative root, and elsewhere it stops ~1e-6 short of the root (tests/bench/analysis/
test_stats_library.py shows both). McNemar on 0/1 answers is close to this test at the sample sizes of these tables; the MDE is a
planning figure ("this table could not have seen an effect smaller than …"), not a property of the observed data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, special, stats
from statsmodels.stats.proportion import proportion_confint

from bench.analysis.stats.paired import Interval
from bench.errors import ResultError

# The one interval policy of every table, figure and `compare` line: one system's accuracy gets the Wilson interval;
# a paired difference gets the per-question normal (Wald) interval mean d ± 1.96·sd/√n, as the article printed it.
ACCURACY_INTERVAL_NAME = "Wilson 95% CI"
ACCURACY_INTERVAL_NOTE = "Wilson 95% interval of accuracy"
DIFFERENCE_INTERVAL_METHOD = "Wald: mean d ± 1.96·sd/√n"
DIFFERENCE_INTERVAL_NOTE = f"per-question 95% CI ({DIFFERENCE_INTERVAL_METHOD})"


def accuracy_interval(correct: int, n: int) -> Interval:
    """The 95% interval printed for one system's accuracy, wherever it is printed (Wilson)."""
    return wilson_interval(correct, n)


def wilson_interval(correct: int, n: int, level: float = 0.95) -> Interval:
    """Accuracy correct/n with its Wilson score interval (fractions)."""
    if n <= 0 or not 0 <= correct <= n:
        raise ResultError(f"wilson interval: expected 0 <= correct <= n and n > 0, found {correct}/{n}")
    low, high = proportion_confint(correct, n, alpha=1 - level, method="wilson")
    return Interval(correct / n, float(low), float(high))


def minimum_detectable_effect(n: int, sd: float, power: float = 0.80, alpha: float = 0.05) -> float:
    """Smallest true mean paired difference (same units as `sd`) detected with `power` by a two-sided one-sample
    t-test at level `alpha` over n paired questions whose differences have standard deviation `sd`."""
    if n < 2:
        raise ResultError(f"minimum detectable effect: expected at least 2 paired questions, found {n}")
    if not sd > 0:
        raise ResultError(f"minimum detectable effect: expected a positive sd of the differences, found {sd}")
    return _standardised_mde(n, power, alpha) * sd


def paired_t_power(effect_size: float, n: int, alpha: float = 0.05) -> float:
    """The power of the two-sided one-sample t-test at level `alpha` over n values whose true mean is `effect_size`
    standard deviations from 0: the chance that the noncentral t statistic lands beyond either critical value."""
    df, shift = n - 1, effect_size * np.sqrt(n)
    critical = float(stats.t.isf(alpha / 2, df))
    above = 1.0 - special.nctdtr(df, shift, critical)
    below = special.nctdtr(df, shift, -critical)
    # For a positive effect the lower tail is tiny; where it underflows (one degree of freedom, shift past ~8) scipy
    # answers NaN instead of ~0, and the power is the upper tail alone.
    return float(above + (0.0 if np.isnan(below) else below))


def _standardised_mde(n: int, power: float, alpha: float) -> float:
    """The effect size (in sd units) at which `paired_t_power` reaches `power`. Power rises with the effect from α
    at 0; the normal approximation (z_{1−α/2} + z_power)/√n sits just below the root, so twice it (doubled again
    while short) brackets it, and the noncentral t is only evaluated where scipy computes it well."""
    if not alpha < power < 1:
        raise ResultError(f"minimum detectable effect: expected alpha < power < 1, found power {power}, alpha {alpha}")
    short = lambda effect: paired_t_power(effect, n, alpha) - power  # noqa: E731
    upper = 2 * float(stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / np.sqrt(n)
    while short(upper) < 0:
        upper *= 2
    return float(optimize.brentq(short, 0.0, upper, xtol=1e-14, rtol=1e-14))


def observed_mde(d: pd.Series | np.ndarray, power: float = 0.80, alpha: float = 0.05) -> float:
    """The MDE for a table, using the sample SD of its own paired differences d (ddof=1)."""
    values = np.asarray(d, dtype=float)
    return minimum_detectable_effect(
        values.size, float(values.std(ddof=1)) if values.size > 1 else 0.0, power=power, alpha=alpha
    )
