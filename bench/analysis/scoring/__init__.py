"""How an answer is scored, each way the field scores it, every metric named and versioned.

LLM-free metrics are computed from the stored answer text, the gold answer and the LoCoMo category alone, so they
can be recomputed for any result file without re-running a system (`engram-bench rescore`):

- `locomo-f1`          LoCoMo's official token F1 (`bench.analysis.scoring.locomo`), categories 1-4 and the update sets;
- `locomo-adversarial` LoCoMo's official rule for category 5 (the answer says it has no information);
- `mem0-f1`            mem0's evaluation F1 (`bench.analysis.scoring.mem0`), categories 1-4 and the update sets;
- `mem0-bleu1`         mem0's evaluation BLEU-1, same questions.

Two more kinds of metric live elsewhere in a result: the LLM judge's label (metric `judge:<model>:<prompt id>`, the
answer's `label`) and evidence recall (metric `evidence-recall@<k>`, the answer's `evidence_recall`).
Definitions and sources: docs/metrics.md.
"""

from __future__ import annotations

from bench.analysis.scoring.names import (
    EVIDENCE_RECALL,
    JUDGE,
    LLM_FREE_METRICS,
    LOCOMO_ADVERSARIAL,
    LOCOMO_F1,
    MEM0_BLEU1,
    MEM0_F1,
    METRIC_VERSIONS,
    evidence_recall_metric,
    judge_metric,
)
from bench.analysis.scoring.score import category_code, llm_free_scores, load_scorers, metrics_block

__all__ = [
    "EVIDENCE_RECALL",
    "JUDGE",
    "LLM_FREE_METRICS",
    "LOCOMO_ADVERSARIAL",
    "LOCOMO_F1",
    "MEM0_BLEU1",
    "MEM0_F1",
    "METRIC_VERSIONS",
    "category_code",
    "evidence_recall_metric",
    "judge_metric",
    "llm_free_scores",
    "load_scorers",
    "metrics_block",
]
