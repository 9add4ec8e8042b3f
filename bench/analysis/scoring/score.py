"""Every LLM-free score of one answer, and the block that names the metrics a result carries (each metric is a
module of bench/analysis/scoring/metrics/, read through bench.analysis.scoring.metric.METRICS)."""

from __future__ import annotations

from typing import Any

from bench.analysis.scoring.locomo import category_code
from bench.analysis.scoring.metric import METRICS, llm_free_metrics
from bench.vocab import EVIDENCE_RECALL, JUDGE

__all__ = ["category_code", "llm_free_scores", "load_scorers", "metrics_block"]


def llm_free_scores(answer: str | None, gold: Any, category: str) -> tuple[float | None, dict[str, float] | None]:
    """(the value for the answer's `f1` field, the other LLM-free metrics by name) for one answer; (None, None) when
    the answer text is unknown. Each LLM-free metric scores the answer; one that has no value for the question
    (e.g. mem0's scores on an adversarial question) is left out. LoCoMo's F1 goes to `f1`, the rest to `scores`."""
    if answer is None:
        return None, None
    f1: float | None = None
    scores: dict[str, float] = {}
    for metric in llm_free_metrics():
        assert metric.score is not None
        value = metric.score(answer, gold, category)
        if value is None:
            continue
        if metric.in_scores:
            scores[metric.name] = value
        else:
            f1 = value
    return f1, scores


def load_scorers() -> None:
    """Load what the LLM-free scores need (NLTK's Porter stemmer and tokenizers: about 1.5 s of imports) now, on the
    calling thread, by scoring one answer. A run calls it before its answer threads start: otherwise every thread
    that reaches its first score waits on the same import."""
    llm_free_scores("loaded", "loaded", "single-hop")


def metrics_block(judge_metric_name: str | None, evidence_metric_name: str | None) -> dict[str, Any]:
    """What a result's `metrics` field says: each metric it carries, its version, where its value lives and where
    its rule comes from."""
    block: dict[str, Any] = {metric.name: metric.entry() for metric in llm_free_metrics()}
    if judge_metric_name is not None:
        block[judge_metric_name] = METRICS.get(JUDGE).entry()
    if evidence_metric_name is not None:
        block[evidence_metric_name] = METRICS.get(EVIDENCE_RECALL).entry()
    return block
