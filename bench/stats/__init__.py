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
from bench.stats.calibration import (
    CalibrationSummary,
    ProbabilityTable,
    brier_scores,
    calibration_summary,
    confidences,
    correct,
    cross_fit_probs,
    expected_calibration_error,
    fit_temperature,
    nll_scores,
    probability_matrix,
    score_intervals,
    with_temperature,
)
from bench.stats.comparison import PairedComparison, compare_by_group, compare_paired
from bench.stats.escalation import ASSUMED_LLM_ERRORS, THETAS, cost_error_curve, jev_alone_error
from bench.stats.intervals import minimum_detectable_effect, observed_mde, wilson_interval
from bench.stats.mcnemar import Discordance, discordance, mcnemar_exact_p
from bench.stats.multiplicity import Adjusted, DeclaredFamily, holm
from bench.stats.noninferiority import (
    DEFAULT_MARGIN,
    Z_ONE_SIDED_95,
    ConversationBound,
    NonInferiority,
    conversation_bound,
    noninferiority,
    noninferiority_from_differences,
)
from bench.stats.paired import (
    Z_95,
    Interval,
    QuestionSetMismatch,
    accuracy,
    paired_differences,
    per_question_ci,
    require_same_questions,
)
from bench.stats.tokens import TokenMatch, pooled_mean_tokens, token_matched_k

__all__ = [
    "ASSUMED_LLM_ERRORS",
    "DEFAULT_DRAWS",
    "DEFAULT_MARGIN",
    "THETAS",
    "Z_95",
    "Z_ONE_SIDED_95",
    "Adjusted",
    "BootstrapInterval",
    "CalibrationSummary",
    "ConversationBound",
    "DeclaredFamily",
    "Discordance",
    "Interval",
    "NonInferiority",
    "PairedComparison",
    "ProbabilityTable",
    "QuestionSetMismatch",
    "TokenMatch",
    "accuracy",
    "brier_scores",
    "calibration_summary",
    "cluster_bootstrap",
    "cluster_bootstrap_draws",
    "compare_by_group",
    "compare_paired",
    "comparison_seed",
    "confidences",
    "conversation_bound",
    "correct",
    "cost_error_curve",
    "cross_fit_probs",
    "discordance",
    "expected_calibration_error",
    "fit_temperature",
    "holm",
    "item_bootstrap",
    "item_bootstrap_draws",
    "jev_alone_error",
    "mcnemar_exact_p",
    "minimum_detectable_effect",
    "nll_scores",
    "noninferiority",
    "noninferiority_from_differences",
    "observed_mde",
    "paired_differences",
    "per_question_ci",
    "percentile_interval",
    "pooled_mean_tokens",
    "probability_matrix",
    "require_same_questions",
    "score_intervals",
    "token_matched_k",
    "wilson_interval",
    "with_temperature",
]
