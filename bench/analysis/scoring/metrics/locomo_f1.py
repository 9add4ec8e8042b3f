"""LoCoMo's official token F1 (`locomo-f1`): the rule is bench.analysis.scoring.locomo; docs/metrics.md.

Version 1 was the first harness's approximation (Snowball stemmer, typographic quotes stripped, empty comma parts
dropped); version 2 is LoCoMo's own rule. Adversarial questions have no F1: under `compare --all` they take
`locomo-adversarial`, as LoCoMo's own evaluation scores them.
"""

from __future__ import annotations

from typing import Any

from bench.analysis.scoring.locomo import SINGLE_HOP, category_code, locomo_f1
from bench.analysis.scoring.metric import Metric, Shown
from bench.analysis.scoring.metrics.locomo_adversarial import NAME as ADVERSARIAL_NAME

NAME = "locomo-f1"


def score(answer: str, gold: Any, category: str) -> float | None:
    """LoCoMo's F1 by the question's category; the update sets' questions (no LoCoMo category) like single-hop."""
    code = category_code(category)
    return locomo_f1(answer, gold, code if code is not None else SINGLE_HOP)


METRIC = Metric(
    name=NAME,
    field="answers[].f1",
    choice="f1",
    version=2,
    source="snap-research/locomo task_eval/evaluation.py (f1_score, f1, eval_question_answering)",
    score=score,
    on_adversarial=ADVERSARIAL_NAME,
    shown=Shown(label="F1", column="F1", tooltip="LoCoMo token F1", order=1),
)
