"""The judge's label (`judge:<model>:<prompt id>`): CORRECT counts 1, WRONG 0, so its aggregate is accuracy. Every
result has labels; a file written before metric names says which judge in its models, so compare needs no entry."""

from __future__ import annotations

from bench.analysis.scoring.metric import Metric
from bench.results.schema import Answer
from bench.vocab import JUDGE


def label_value(answer: Answer) -> float:
    return 1.0 if answer.correct else 0.0


METRIC = Metric(
    name=JUDGE,
    field="answers[].label",
    choice="j",
    read=label_value,
    named_per_run=True,
    on_adversarial=JUDGE,
    needs_entry=False,
)
