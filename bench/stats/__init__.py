"""Statistics for paired benchmark comparisons, calibration and the escalation trade-off.

Small pure functions over pandas/numpy; the paper build and `engram-bench compare` call them. Names are stable.
"""

from bench.stats.bootstrap import (
    DEFAULT_DRAWS,
    BootstrapInterval,
    cluster_bootstrap,
    cluster_bootstrap_draws,
    comparison_seed,
    item_bootstrap,
    item_bootstrap_draws,
    percentile_interval,
)
from bench.stats.mcnemar import Discordance, discordance, mcnemar_exact_p
from bench.stats.paired import (
    Z_95,
    Interval,
    QuestionSetMismatch,
    accuracy,
    paired_differences,
    per_question_ci,
    require_same_questions,
)

__all__ = [
    "DEFAULT_DRAWS",
    "Z_95",
    "BootstrapInterval",
    "Discordance",
    "Interval",
    "QuestionSetMismatch",
    "accuracy",
    "cluster_bootstrap",
    "cluster_bootstrap_draws",
    "comparison_seed",
    "discordance",
    "item_bootstrap",
    "item_bootstrap_draws",
    "mcnemar_exact_p",
    "paired_differences",
    "per_question_ci",
    "percentile_interval",
    "require_same_questions",
]
