"""Every LLM-free score of one answer, and the block that names the metrics a result carries."""

from __future__ import annotations

from typing import Any

from bench.analysis.scoring.locomo import ADVERSARIAL, SINGLE_HOP, adversarial_correct, locomo_f1
from bench.analysis.scoring.mem0 import mem0_bleu1, mem0_f1
from bench.analysis.scoring.names import (
    LLM_FREE_METRICS,
    LOCOMO_ADVERSARIAL,
    LOCOMO_F1,
    MEM0_BLEU1,
    MEM0_F1,
    METRIC_VERSIONS,
)
from bench.results.schema import LOCOMO_CATEGORY_NAMES

_CODE_OF = {name: code for code, name in LOCOMO_CATEGORY_NAMES.items()}
SOURCES = {
    LOCOMO_F1: "snap-research/locomo task_eval/evaluation.py (f1_score, f1, eval_question_answering)",
    LOCOMO_ADVERSARIAL: "snap-research/locomo task_eval/evaluation.py (eval_question_answering, category 5)",
    MEM0_F1: "mem0ai/mem0 evaluation/metrics/utils.py (calculate_metrics: f1), evaluation/evals.py",
    MEM0_BLEU1: "mem0ai/mem0 evaluation/metrics/utils.py (calculate_bleu_scores: bleu1), evaluation/evals.py",
}


def category_code(category: str) -> int | None:
    """LoCoMo's numeric category of a result's category name; None for the update sets."""
    return _CODE_OF.get(category)


def llm_free_scores(answer: str | None, gold: Any, category: str) -> tuple[float | None, dict[str, float] | None]:
    """(`locomo-f1`, the other LLM-free metrics by name) for one answer; (None, None) when the answer text is
    unknown. `locomo-f1` goes to the answer's `f1` field, the rest to its `scores`.

    Adversarial questions get only `locomo-adversarial`; every other question gets `locomo-f1`, `mem0-f1` and
    `mem0-bleu1` (mem0's evaluation skips category 5). The update sets' questions are scored like single-hop."""
    if answer is None:
        return None, None
    code = category_code(category)
    if code == ADVERSARIAL:
        return None, {LOCOMO_ADVERSARIAL: adversarial_correct(answer)}
    f1 = locomo_f1(answer, gold, code if code is not None else SINGLE_HOP)
    return f1, {MEM0_F1: mem0_f1(answer, gold), MEM0_BLEU1: mem0_bleu1(answer, gold)}


def load_scorers() -> None:
    """Load what the LLM-free scores need (NLTK's Porter stemmer and tokenizers: about 1.5 s of imports) now, on the
    calling thread, by scoring one answer. A run calls it before its answer threads start: otherwise every thread
    that reaches its first score waits on the same import."""
    llm_free_scores("loaded", "loaded", "single-hop")


def metrics_block(judge_metric_name: str | None, evidence_metric_name: str | None) -> dict[str, Any]:
    """What a result's `metrics` field says: each metric it carries, its version, where its value lives and where
    its rule comes from."""
    block: dict[str, Any] = {
        name: {"version": METRIC_VERSIONS[name], "field": f"answers[].scores.{name}", "source": SOURCES[name]}
        for name in LLM_FREE_METRICS
    }
    block[LOCOMO_F1]["field"] = "answers[].f1"
    if judge_metric_name is not None:
        block[judge_metric_name] = {"field": "answers[].label"}
    if evidence_metric_name is not None:
        block[evidence_metric_name] = {"version": 1, "field": "answers[].evidence_recall"}
    return block
