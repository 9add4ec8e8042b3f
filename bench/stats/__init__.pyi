# The public names of bench.stats, loaded lazily by __init__.py (lazy_loader reads this stub).
from .bootstrap import (
    DEFAULT_DRAWS,
    BootstrapInterval,
    cluster_bootstrap,
    cluster_bootstrap_draws,
    comparison_seed,
    item_bootstrap,
    item_bootstrap_draws,
    percentile_interval,
)
from .calibration import (
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
from .comparison import PairedComparison, compare_by_group, compare_paired
from .escalation import ASSUMED_LLM_ERRORS, THETAS, cost_error_curve, jev_alone_error
from .intervals import minimum_detectable_effect, observed_mde, wilson_interval
from .mcnemar import Discordance, discordance, mcnemar_exact_p
from .multiplicity import Adjusted, DeclaredFamily, holm
from .noninferiority import (
    DEFAULT_MARGIN,
    Z_ONE_SIDED_95,
    ConversationBound,
    NonInferiority,
    conversation_bound,
    noninferiority,
    noninferiority_from_differences,
)
from .paired import (
    Z_95,
    Interval,
    QuestionSetMismatch,
    accuracy,
    paired_differences,
    per_question_ci,
    require_same_questions,
)
from .tokens import TokenMatch, pooled_mean_tokens, token_matched_k
