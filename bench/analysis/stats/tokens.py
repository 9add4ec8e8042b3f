"""Token-matched k: give the baseline as much context as the reference arm used.

From a k-sweep of one arm (the pooled mean retrieved tokens per question at each k), choose the k whose mean is
closest to the reference arm's pooled mean. Ties go to the smaller k (less context, the conservative choice).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from bench.errors import ResultError


@dataclass(frozen=True)
class TokenMatch:
    k: int
    tokens: float
    reference_tokens: float
    tokens_by_k: dict[int, float]


def pooled_mean_tokens(retrieved_tokens: Iterable[int | float | None]) -> float:
    """Mean retrieved tokens per question, pooled over every question of every conversation (nulls refused)."""
    values = list(retrieved_tokens)
    if not values or any(v is None for v in values):
        raise ResultError(
            "token matching: expected a retrieved_tokens count on every answer, "
            f"found {sum(v is None for v in values)} missing of {len(values)}"
        )
    return float(np.mean(np.asarray(values, dtype=float)))


def token_matched_k(tokens_by_k: Mapping[int, float], reference_tokens: float) -> TokenMatch:
    """The k of the sweep whose pooled mean tokens is closest to `reference_tokens` (ties: smaller k)."""
    if not tokens_by_k:
        raise ResultError("token matching: expected a k-sweep with at least one k, found none")
    sweep = {int(k): float(v) for k, v in tokens_by_k.items()}
    best = min(sorted(sweep), key=lambda k: abs(sweep[k] - reference_tokens))
    return TokenMatch(k=best, tokens=sweep[best], reference_tokens=float(reference_tokens), tokens_by_k=sweep)
