"""Recompute the LLM-free metrics of stored answers, without re-running any system (`engram-bench rescore`).

Only what the stored answer text, the gold and the category determine is recomputed: every LLM-free metric
(bench/analysis/scoring/metrics/: `locomo-f1` in the answer's `f1`, `mem0-f1`, `mem0-bleu1`, `locomo-adversarial`
in its `scores`), and the `metrics` block that names them. Labels,
evidence recall, LongMemEval's session recall (from the retrieval, kept in `scores`), costs and everything else stay
as they are, so accuracy and every judge-based number is unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.analysis.scoring.metric import llm_free_metrics
from bench.analysis.scoring.score import llm_free_scores, metrics_block
from bench.models.judge import LexicalJudge
from bench.models.provider import judge_metric_for
from bench.results.schema import Result
from bench.vocab import JUDGE, evidence_recall_metric


def judge_entry(result: Result) -> str | None:
    """The judge metric a result names, or — for a file that predates metric names — the one its models imply
    (the default judge prompt; the lexical stand-in's rules revision when the file lists its judge among its
    stand-ins, as files written before models carried a provider spelled it without `offline/`)."""
    named = [name for name in result.metrics if name.startswith(f"{JUDGE}:")]
    if named:
        return named[0]
    if "judge" not in result.models:
        return None

    if "judge" in result.standins:
        return LexicalJudge.metric
    return judge_metric_for(result.models)


def rescored(result: Result) -> Result:
    """The result with every LLM-free metric recomputed from its stored answers."""
    answers = []
    recomputed = {metric.name for metric in llm_free_metrics()}
    for answer in result.answers:
        f1, scores = llm_free_scores(answer.answer, answer.gold, answer.category)
        # scores the answer text cannot give (LongMemEval's session recall, from the retrieval) stay as recorded
        kept = {name: value for name, value in (answer.scores or {}).items() if name not in recomputed}
        answers.append(replace(answer, f1=f1, scores={**kept, **(scores or {})} or scores))
    judge_name = judge_entry(result)
    block: dict[str, Any] = metrics_block(judge_name, evidence_recall_metric(result.k))
    if judge_name is not None and judge_name in result.metrics:
        block[judge_name] = result.metrics[judge_name]  # keep what the run recorded about its judge
    return replace(result, answers=answers, metrics={**result.metrics, **block})
