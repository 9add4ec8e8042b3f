"""The names of the metrics a result can carry, and the version of each definition (one place for both).

A metric's version changes whenever its definition would change a number; a result records the version it was
computed with, so numbers of two definitions are never compared unnoticed.
"""

from __future__ import annotations

LOCOMO_F1 = "locomo-f1"
LOCOMO_ADVERSARIAL = "locomo-adversarial"
MEM0_F1 = "mem0-f1"
MEM0_BLEU1 = "mem0-bleu1"
EVIDENCE_RECALL = "evidence-recall"  # named per budget: evidence-recall@<k>
JUDGE = "judge"  # named per judge: judge:<model>:<prompt id>

# Computed from the stored answer alone (no model call): what `rescore` recomputes.
LLM_FREE_METRICS = (LOCOMO_F1, LOCOMO_ADVERSARIAL, MEM0_F1, MEM0_BLEU1)

# v1 of locomo-f1 was the first harness's approximation (Snowball stemmer, curly quotes stripped, empty comma
# parts dropped); v2 is LoCoMo's own rule.
METRIC_VERSIONS = {LOCOMO_F1: 2, LOCOMO_ADVERSARIAL: 1, MEM0_F1: 1, MEM0_BLEU1: 1, EVIDENCE_RECALL: 1}


def judge_metric(model: str, prompt_id: str) -> str:
    """`judge:<model>:<prompt id>`: which model judged with which prompt (prompt id: the first 12 hex digits of the
    prompt text's SHA-256, or the rules revision of a rule-based stand-in judge)."""
    return f"{JUDGE}:{model}:{prompt_id}"


def evidence_recall_metric(k: int | None) -> str:
    """`evidence-recall@<k>` (`@all` when the system showed every line it had)."""
    return f"{EVIDENCE_RECALL}@{k if k is not None else 'all'}"
