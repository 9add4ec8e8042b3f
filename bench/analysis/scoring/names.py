"""Which metrics are LLM-free and the version of each definition (the names themselves live in bench.vocab).

A metric's version changes whenever its definition would change a number; a result records the version it was
computed with, so numbers of two definitions are never compared unnoticed.
"""

from __future__ import annotations

from bench.vocab import (
    EVIDENCE_RECALL,
    JUDGE,
    LOCOMO_ADVERSARIAL,
    LOCOMO_F1,
    MEM0_BLEU1,
    MEM0_F1,
    evidence_recall_metric,
    judge_metric,
)

__all__ = [
    "EVIDENCE_RECALL",
    "JUDGE",
    "LLM_FREE_METRICS",
    "LOCOMO_ADVERSARIAL",
    "LOCOMO_F1",
    "MEM0_BLEU1",
    "MEM0_F1",
    "METRIC_VERSIONS",
    "evidence_recall_metric",
    "judge_metric",
]

# Computed from the stored answer alone (no model call): what `rescore` recomputes.
LLM_FREE_METRICS = (LOCOMO_F1, LOCOMO_ADVERSARIAL, MEM0_F1, MEM0_BLEU1)

# v1 of locomo-f1 was the first harness's approximation (Snowball stemmer, typographic quotes stripped, empty comma
# parts dropped); v2 is LoCoMo's own rule.
METRIC_VERSIONS = {LOCOMO_F1: 2, LOCOMO_ADVERSARIAL: 1, MEM0_F1: 1, MEM0_BLEU1: 1, EVIDENCE_RECALL: 1}
