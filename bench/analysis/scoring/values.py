"""Per-question values of one named metric from a result file: what `compare --metric` compares.

    j                 the judge's label (CORRECT = 1, WRONG = 0); the metric `judge:<model>:<prompt>`
    f1                LoCoMo's official token F1, `locomo-f1` (answers[].f1), at the version bench.analysis.scoring writes
    mem0-f1           mem0's evaluation F1 (answers[].scores.mem0-f1)
    bleu1             mem0's BLEU-1 (answers[].scores.mem0-bleu1)
    evidence-recall   share of the question's evidence turns among the shown lines (answers[].evidence_recall)

A value the file does not carry is bad input, never a silent zero: the error names the file and the field (and, for
files written before metric names, how to add them: `engram-bench rescore`). Adversarial questions carry no F1 or
BLEU-1; with `--all`, `f1` scores them by LoCoMo's adversarial rule (`locomo-adversarial`), as LoCoMo's own evaluation
does, while mem0's scores skip them as mem0's evaluation does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.analysis.scoring.names import (
    EVIDENCE_RECALL,
    JUDGE,
    LLM_FREE_METRICS,
    LOCOMO_ADVERSARIAL,
    LOCOMO_F1,
    MEM0_BLEU1,
    MEM0_F1,
    METRIC_VERSIONS,
)
from bench.errors import RegistryError, ResultError
from bench.registry import Registry
from bench.results.schema import Answer, Result


@dataclass(frozen=True)
class MetricChoice:
    """One `compare --metric` choice: its command-line name, the metric it reads and the field it lives in."""

    name: str
    metric: str  # the metric name a result's `metrics` block uses (a prefix for judge and evidence recall)
    field: str
    adversarial: bool  # whether adversarial questions have a value (under --all)


def _adopt(name: str, factory: object) -> MetricChoice:
    """A metric is a `MetricChoice` (a plug-in's reads `answers[].scores.<its metric>`, written by its package)."""
    if not isinstance(factory, MetricChoice):
        raise RegistryError(
            f"metric {name!r}: expected a bench.analysis.scoring.values.MetricChoice, found {factory!r}"
        )
    return factory


#: `compare --metric` name -> the metric it reads; installed packages add theirs (`engram_bench.metrics`)
CHOICES: Registry[MetricChoice] = Registry(
    "metric", adopt=_adopt, hint="a MetricChoice added to CHOICES in bench/analysis/scoring/values.py"
)
for _choice in (
    MetricChoice("j", JUDGE, "answers[].label", adversarial=True),
    MetricChoice("f1", LOCOMO_F1, "answers[].f1", adversarial=True),
    MetricChoice("mem0-f1", MEM0_F1, f"answers[].scores.{MEM0_F1}", adversarial=False),
    MetricChoice("bleu1", MEM0_BLEU1, f"answers[].scores.{MEM0_BLEU1}", adversarial=False),
    MetricChoice("evidence-recall", EVIDENCE_RECALL, "answers[].evidence_recall", adversarial=True),
):
    CHOICES.add(_choice.name, _choice, origin=__name__)
ALIASES = {LOCOMO_F1: "f1", MEM0_BLEU1: "bleu1", "judge": "j"}


def metric_choice(name: str) -> MetricChoice:
    return CHOICES.get(ALIASES.get(name, name), where="compare --metric")


def metric_entry(result: Result, choice: MetricChoice) -> str | None:
    """The name under which the result's `metrics` block records the chosen metric, or None when it does not."""
    if choice.metric in (JUDGE, EVIDENCE_RECALL):
        return next((n for n in sorted(result.metrics) if n.startswith(f"{choice.metric}")), None)
    return choice.metric if choice.metric in result.metrics else None


def _absent(path: Path, field: str, choice: MetricChoice, hint: str = "") -> ResultError:
    return ResultError(
        f"{path}: field {field}: expected the metric {choice.metric} (compare --metric {choice.name}), found none{hint}"
    )


def check_carries(path: Path, result: Result, choice: MetricChoice) -> None:
    """Refuse a file whose `metrics` block does not name the metric at the version bench.analysis.scoring computes."""
    if choice.name == "j":
        return  # every result has labels; a file predating metric names still says which judge in its models
    entry = metric_entry(result, choice)
    if entry is None:
        llm_free = choice.metric in LLM_FREE_METRICS
        raise _absent(
            path, "metrics", choice, "; `engram-bench rescore` adds it from the stored answers" if llm_free else ""
        )
    expected = METRIC_VERSIONS.get(choice.metric)
    found = result.metrics[entry].get("version") if isinstance(result.metrics[entry], dict) else None
    if expected is not None and found != expected:
        raise ResultError(
            f"{path}: field metrics.{entry}.version: expected {expected} (the definition compare uses), found {found}"
        )


def answer_value(path: Path, index: int, answer: Answer, choice: MetricChoice) -> float | None:
    """The chosen metric's value for one answer; None when the metric does not apply to the question (an
    adversarial question under mem0's scores); an error when it applies but the file lacks it."""
    where = f"answers[{index}]"
    if choice.name == "j":
        return 1.0 if answer.correct else 0.0
    if answer.category == "adversarial":
        if not choice.adversarial:
            return None
        if choice.name == "f1":
            value = (answer.scores or {}).get(LOCOMO_ADVERSARIAL)
            if value is None:
                raise _absent(path, f"{where}.scores.{LOCOMO_ADVERSARIAL}", choice)
            return float(value)
    if choice.name == "f1":
        if answer.f1 is None:
            raise _absent(path, f"{where}.f1", choice)
        return float(answer.f1)
    if choice.name == "evidence-recall":
        if answer.evidence_recall is None:
            raise _absent(path, f"{where}.evidence_recall", choice)
        return float(answer.evidence_recall)
    value = (answer.scores or {}).get(choice.metric)
    if value is None:
        raise _absent(path, f"{where}.scores.{choice.metric}", choice)
    return float(value)
