"""Per-question values of one metric from a result file: what `compare --metric` compares.

`compare --metric NAME` takes a registered metric's compare name (its `choice`: j, f1, mem0-f1, bleu1,
evidence-recall, ...) or its name in results (`locomo-f1`, `mem0-bleu1`, `judge`); the metrics and what each reads
are bench.analysis.scoring.metric.METRICS.

A value the file does not carry is bad input, never a silent zero: the error names the file and the field (and, for
an LLM-free metric of a file written before metric names, how to add it: `engram-bench rescore`). Adversarial
questions take the value of the metric's `on_adversarial` (with `--all`): LoCoMo's F1 takes LoCoMo's adversarial
rule (`locomo-adversarial`), as LoCoMo's own evaluation does, while mem0's scores skip them as mem0's evaluation does.
"""

from __future__ import annotations

from pathlib import Path

from bench.analysis.scoring.metric import METRICS, PACKAGE, Metric, all_metrics
from bench.errors import RegistryError, ResultError
from bench.results.schema import Answer, Result


def metric_choice(name: str) -> Metric:
    """The metric `compare --metric NAME` names, by its compare name or its name in results."""
    metrics = [m for m in all_metrics() if m.choice is not None]
    for metric in metrics:
        if name in (metric.choice, metric.name):
            return metric
    known = ", ".join(sorted(str(m.choice) for m in metrics))
    raise RegistryError(
        f"compare --metric: unknown metric {name!r}; known metrics: {known} (to add one: a module defining "
        f"METRIC = Metric(...) in {PACKAGE.replace('.', '/')}/, or install a package with an entry point in group "
        f"{METRICS.group})"
    )


def metric_entry(result: Result, metric: Metric) -> str | None:
    """The name under which the result's `metrics` block records the metric, or None when it does not."""
    if metric.named_per_run:
        return next((n for n in sorted(result.metrics) if n.startswith(metric.name)), None)
    return metric.name if metric.name in result.metrics else None


def _absent(path: Path, field: str, metric: Metric, hint: str = "") -> ResultError:
    return ResultError(
        f"{path}: field {field}: expected the metric {metric.name} (compare --metric {metric.choice}), found none{hint}"
    )


def check_carries(path: Path, result: Result, metric: Metric) -> None:
    """Refuse a file whose `metrics` block does not name the metric at the version its module defines."""
    if not metric.needs_entry:
        return
    entry = metric_entry(result, metric)
    if entry is None:
        hint = "; `engram-bench rescore` adds it from the stored answers" if metric.llm_free else ""
        raise _absent(path, "metrics", metric, hint)
    found = result.metrics[entry].get("version") if isinstance(result.metrics[entry], dict) else None
    if metric.version is not None and found != metric.version:
        raise ResultError(
            f"{path}: field metrics.{entry}.version: expected {metric.version} (the definition compare uses), "
            f"found {found}"
        )


def answer_value(path: Path, index: int, answer: Answer, metric: Metric) -> float | None:
    """The metric's value for one answer; None when the metric does not apply to the question (an adversarial
    question under mem0's scores); an error when it applies but the file lacks it."""
    source = metric
    if answer.category == "adversarial":
        if metric.on_adversarial is None:
            return None
        source = metric if metric.on_adversarial == metric.name else METRICS.get(metric.on_adversarial)
    value = source.value(answer)
    if value is None:
        raise _absent(path, f"answers[{index}].{source.answer_field}", metric)
    return float(value)
