"""The escalation cost/error curve (article §7; original `bench/tradeoff.py`).

A decision whose confidence π is below the threshold θ is escalated to an LLM. Over items with Jev's top relation
probability q_i and whether Jev's relation was acceptable (exact_i):

    p_esc(θ) = P(q < θ)                      share of decisions escalated
    ε_J(θ)   = error rate of Jev on the kept items (q ≥ θ); 0 if none are kept
    C(θ)     = c_J + p_esc(θ)·c_L            USD per decision (every decision pays Jev; escalations add the LLM)
    E(θ)     = (1 − p_esc(θ))·ε_J(θ) + p_esc(θ)·ε_L

ε_L, the LLM's error on escalated items, was not measured: the curve is drawn for assumed values (0 and 0.1).
c_J and c_L come from the original decision logs (inputs, not derivable from the published files).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bench.errors import ResultError

THETAS = tuple(round(0.30 + 0.05 * i, 2) for i in range(14))  # 0.30, 0.35, …, 0.95
ASSUMED_LLM_ERRORS = (0.0, 0.1)


def cost_error_curve(
    confidence: Sequence[float] | np.ndarray,
    exact: Sequence[bool] | np.ndarray,
    cost_jev: float,
    cost_llm: float,
    thetas: Sequence[float] = THETAS,
    llm_errors: Sequence[float] = ASSUMED_LLM_ERRORS,
) -> pd.DataFrame:
    """One row per (θ, ε_L): theta, eps_llm, escalated (share), cost (USD per decision), jev_error_kept, error."""
    q = np.asarray(confidence, dtype=float)
    ok = np.asarray(exact, dtype=bool)
    if q.size == 0 or q.shape != ok.shape:
        raise ResultError(
            f"escalation curve: expected one exactness flag per confidence and at least one item, "
            f"found {q.size} confidences and {ok.size} flags"
        )
    rows = []
    for theta in thetas:
        escalated = q < theta
        p_esc = float(escalated.mean())
        kept = ~escalated
        jev_error_kept = float((~ok[kept]).mean()) if kept.any() else 0.0
        for eps in llm_errors:
            rows.append(
                {
                    "theta": float(theta),
                    "eps_llm": float(eps),
                    "escalated": p_esc,
                    "cost": cost_jev + p_esc * cost_llm,
                    "jev_error_kept": jev_error_kept,
                    "error": (1 - p_esc) * jev_error_kept + p_esc * eps,
                }
            )
    return pd.DataFrame(rows)


def jev_alone_error(exact: Sequence[bool] | np.ndarray) -> float:
    """Error rate with no escalation at all (θ below every confidence)."""
    ok = np.asarray(exact, dtype=bool)
    if ok.size == 0:
        raise ResultError("escalation curve: expected at least one item, found none")
    return float((~ok).mean())
