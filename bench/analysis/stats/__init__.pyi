# The public names of bench.analysis.stats, loaded lazily by __init__.py (lazy_loader reads this stub; "x as x" marks each
# one as re-exported for type checkers).
from .bootstrap import (
    DEFAULT_DRAWS as DEFAULT_DRAWS,
    BootstrapInterval as BootstrapInterval,
    cluster_bootstrap as cluster_bootstrap,
    cluster_bootstrap_draws as cluster_bootstrap_draws,
    comparison_seed as comparison_seed,
    item_bootstrap as item_bootstrap,
    item_bootstrap_draws as item_bootstrap_draws,
    paired_seed as paired_seed,
    percentile_interval as percentile_interval,
)
from .calibration import (
    CalibrationSummary as CalibrationSummary,
    ProbabilityTable as ProbabilityTable,
    brier_scores as brier_scores,
    calibration_summary as calibration_summary,
    confidences as confidences,
    correct as correct,
    cross_fit_probs as cross_fit_probs,
    expected_calibration_error as expected_calibration_error,
    fit_temperature as fit_temperature,
    nll_scores as nll_scores,
    probability_matrix as probability_matrix,
    score_intervals as score_intervals,
    with_temperature as with_temperature,
)
from .comparison import (
    SMALL_GROUP_N as SMALL_GROUP_N,
    PairedComparison as PairedComparison,
    compare_by_group as compare_by_group,
    compare_paired as compare_paired,
)
from .escalation import (
    ASSUMED_LLM_ERRORS as ASSUMED_LLM_ERRORS,
    THETAS as THETAS,
    cost_error_curve as cost_error_curve,
    jev_alone_error as jev_alone_error,
)
from .intervals import (
    ACCURACY_INTERVAL_NAME as ACCURACY_INTERVAL_NAME,
    ACCURACY_INTERVAL_NOTE as ACCURACY_INTERVAL_NOTE,
    DIFFERENCE_INTERVAL_METHOD as DIFFERENCE_INTERVAL_METHOD,
    DIFFERENCE_INTERVAL_NOTE as DIFFERENCE_INTERVAL_NOTE,
    accuracy_interval as accuracy_interval,
    minimum_detectable_effect as minimum_detectable_effect,
    observed_mde as observed_mde,
    wilson_interval as wilson_interval,
)
from .mcnemar import Discordance as Discordance, discordance as discordance, mcnemar_exact_p as mcnemar_exact_p
from .multiplicity import Adjusted as Adjusted, DeclaredFamily as DeclaredFamily, holm as holm
from .noninferiority import (
    DEFAULT_MARGIN as DEFAULT_MARGIN,
    Z_ONE_SIDED_95 as Z_ONE_SIDED_95,
    ConversationBound as ConversationBound,
    NonInferiority as NonInferiority,
    conversation_bound as conversation_bound,
    noninferiority as noninferiority,
    noninferiority_from_differences as noninferiority_from_differences,
)
from .paired import (
    Z_95 as Z_95,
    Interval as Interval,
    QuestionSetMismatch as QuestionSetMismatch,
    accuracy as accuracy,
    paired_differences as paired_differences,
    per_question_ci as per_question_ci,
    require_same_questions as require_same_questions,
)
from .tokens import (
    TokenMatch as TokenMatch,
    pooled_mean_tokens as pooled_mean_tokens,
    token_matched_k as token_matched_k,
)
