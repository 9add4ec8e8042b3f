"""A worked example of adding a metric: exact match, 1 when the answer and the gold are the same text once both are
lowercased, stripped of punctuation and of extra whitespace, else 0 (the SQuAD-style "EM" many QA benchmarks report).

A metric is one `Metric` named `METRIC` (bench.analysis.scoring.metric): its name in results, the answer field its
value lives in, how an answer is scored (an LLM-free rule of the answer text, the gold and the question's category),
its `compare --metric` name, and how `view` shows it. Nothing else is edited:

- a run scores every answer with it and names it in the result's `metrics` block; `engram-bench rescore` adds it to
  results already written;
- `engram-bench compare A B --metric em` compares it per question (means, Δ with its CIs, Wilcoxon);
- `engram-bench view` and `engram-bench show` show it beside F1 and evidence recall.

Installed as a package (pyproject.toml beside this file, entry point group `engram_bench.metrics`, named like the
metric), or copied into bench/analysis/scoring/metrics/ (every module there is found, no list to edit), it is the
same module.
"""

from __future__ import annotations

import string
from typing import Any

from bench.analysis.scoring.metric import Metric, Shown

NAME = "exact-match"
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalized(text: Any) -> str:
    return " ".join(str(text).lower().translate(_PUNCTUATION).split())


def score(answer: str, gold: Any, category: str) -> float | None:
    """1.0 when the normalised answer equals the normalised gold, else 0.0; None (no value) for an adversarial
    question, whose gold is a refusal rather than a fact."""
    if category == "adversarial":
        return None
    return 1.0 if normalized(answer) == normalized(gold) else 0.0


METRIC = Metric(
    name=NAME,
    field=f"answers[].scores.{NAME}",
    choice="em",
    version=1,
    source="docs/examples/metric/exact_match.py (lowercase, ASCII punctuation removed, whitespace collapsed)",
    score=score,
    shown=Shown(label="exact match", column="EM", tooltip="exact match with the gold", order=3),
)
