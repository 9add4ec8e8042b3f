"""LoCoMo's rule for adversarial questions (`locomo-adversarial`): 1 when the answer declines, else 0 (category 5
only; bench.analysis.scoring.locomo.adversarial_correct). Compared through `compare --metric f1 --all`."""

from __future__ import annotations

from typing import Any

from bench.analysis.scoring.locomo import ADVERSARIAL, adversarial_correct, category_code
from bench.analysis.scoring.metric import Metric

NAME = "locomo-adversarial"


def score(answer: str, gold: Any, category: str) -> float | None:
    return adversarial_correct(answer) if category_code(category) == ADVERSARIAL else None


METRIC = Metric(
    name=NAME,
    field=f"answers[].scores.{NAME}",
    version=1,
    source="snap-research/locomo task_eval/evaluation.py (eval_question_answering, category 5)",
    score=score,
)
