"""Intervals for single accuracies, and what a paired table of n questions could have detected.

Wilson intervals (statsmodels `proportion_confint(method="wilson")`) behave well near 0 and 1, where the normal
interval does not, so single accuracies such as 30/35 get honest bounds.

Minimum detectable effect (MDE): the smallest true mean paired difference a two-sided test at level α detects with
the given power. Assumption, stated here because a reader must know it: the paired test is treated as a one-sample
t-test on d_i (statsmodels `TTestPower`), with the standard deviation of d either observed in the table or stated
by the caller. McNemar on 0/1 answers is close to this test at the sample sizes of these tables; the MDE is a
planning figure ("this table could not have seen an effect smaller than …"), not a property of the observed data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.power import TTestPower
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
    effect_size = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return float(np.asarray(effect_size).item()) * sd


def observed_mde(d: pd.Series | np.ndarray, power: float = 0.80, alpha: float = 0.05) -> float:
    """The MDE for a table, using the sample SD of its own paired differences d (ddof=1)."""
    values = np.asarray(d, dtype=float)
    return minimum_detectable_effect(
        values.size, float(values.std(ddof=1)) if values.size > 1 else 0.0, power=power, alpha=alpha
    )
