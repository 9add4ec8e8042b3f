"""mem0's evaluation F1 (`mem0-f1`): the rule is bench.analysis.scoring.mem0.mem0_f1; docs/metrics.md. mem0's
evaluation skips adversarial questions, so they have no value."""

from __future__ import annotations

from typing import Any

from bench.analysis.scoring.locomo import ADVERSARIAL, category_code
from bench.analysis.scoring.mem0 import mem0_f1
from bench.analysis.scoring.metric import Metric

NAME = "mem0-f1"


def score(answer: str, gold: Any, category: str) -> float | None:
    return None if category_code(category) == ADVERSARIAL else mem0_f1(answer, gold)


METRIC = Metric(
    name=NAME,
    field=f"answers[].scores.{NAME}",
    choice="mem0-f1",
    version=1,
    source="mem0ai/mem0 evaluation/metrics/utils.py (calculate_metrics: f1), evaluation/evals.py",
    score=score,
)
