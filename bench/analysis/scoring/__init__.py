"""How an answer is scored, each way the field scores it, every metric named and versioned.

Each metric is one module of `bench/analysis/scoring/metrics/` (a `Metric`: its name, what it reads from a result,
how it is computed, aggregated and shown; `bench.analysis.scoring.metric.METRICS` finds them). LLM-free metrics are
computed from the stored answer text, the gold answer and the question's category alone, so they can be recomputed
for any result file without re-running a system (`engram-bench rescore`): LoCoMo's official token F1 and its
adversarial rule (`bench.analysis.scoring.locomo`), mem0's evaluation F1 and BLEU-1 (`bench.analysis.scoring.mem0`).
The judge's label (`judge:<model>:<prompt id>`) and evidence recall (`evidence-recall@<k>`) are metrics too, named
per run. Definitions and sources: docs/metrics.md.
"""

from __future__ import annotations

from bench.analysis.scoring.metric import METRICS, Metric, Shown, all_metrics, llm_free_metrics, shown_metrics
from bench.analysis.scoring.score import category_code, llm_free_scores, load_scorers, metrics_block
from bench.vocab import EVIDENCE_RECALL, JUDGE, evidence_recall_metric, judge_metric

__all__ = [
    "EVIDENCE_RECALL",
    "JUDGE",
    "METRICS",
    "Metric",
    "Shown",
    "all_metrics",
    "category_code",
    "evidence_recall_metric",
    "judge_metric",
    "llm_free_metrics",
    "llm_free_scores",
    "load_scorers",
    "metrics_block",
    "shown_metrics",
]
