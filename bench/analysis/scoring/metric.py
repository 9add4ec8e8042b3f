"""What a metric is, and the registry that finds every one: a new metric is one module, no list is edited.

A metric is a `Metric` named `METRIC` in a module of `bench/analysis/scoring/metrics/` (`import_modules` finds
it; a module's name starting with "_" is left out), or in an installed package under an entry point of group
`engram_bench.metrics` whose name is the metric's name (docs/examples/metric/). It says:

- its name in a result's `metrics` block (`locomo-f1`; a metric named per run, such as `judge:<model>:<prompt id>`
  or `evidence-recall@<k>`, is registered under the part before the first ":" or "@");
- what it reads from a result: the answer's field holding its value (`field`, e.g. `answers[].scores.<name>`);
- how an answer gets that value: for an LLM-free metric, `score(answer text, gold, category name)`, which runs,
  `rescore` and the audited gold all call (None: the question has no value under this metric);
- how it aggregates: `aggregate` over the answers' values (the mean by default);
- how it is shown: its `compare --metric` name (`choice`) and, when `view` shows it, `shown` (its label, column
  head and place).

`compare`, `view`, `rescore` and a run read this registry; none of them lists the metrics. Definitions and sources:
docs/metrics.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.errors import RegistryError
from bench.registry import Registry, import_modules

if TYPE_CHECKING:
    from bench.results.schema import Answer

__all__ = [
    "FIELD_PREFIX",
    "METRICS",
    "PACKAGE",
    "Metric",
    "Shown",
    "all_metrics",
    "llm_free_metrics",
    "mean",
    "shown_metrics",
]

#: the package whose modules are the built-in metrics
PACKAGE = "bench.analysis.scoring.metrics"
#: every metric's field starts with this: the answers of a result
FIELD_PREFIX = "answers[]."
#: the answer field a metric writes to when it is not in the answer's `scores` (LoCoMo's F1: `answers[].f1`)
_SCORES = f"{FIELD_PREFIX}scores."


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean (math.fsum), None for no values: how a graded metric aggregates by default."""
    return math.fsum(values) / len(values) if values else None


@dataclass(frozen=True)
class Shown:
    """How `view` shows a metric: its label in a line of text ("evidence recall"), its column head ("ER"), what the
    column head explains ("LoCoMo token F1"), and its place among the shown metrics (lower first)."""

    label: str
    column: str
    tooltip: str
    order: int


@dataclass(frozen=True)
class Metric:
    """One metric (see the module docstring for what each field is for)."""

    name: str
    field: str  # "answers[].f1", "answers[].label", "answers[].evidence_recall", "answers[].scores.<name>"
    choice: str | None = None  # its `compare --metric` name; None: not compared on its own
    version: int | None = None  # changes whenever the definition would change a number; None: not versioned
    source: str | None = None  # where the rule comes from (recorded in the result's metrics block)
    # LLM-free: (answer text, gold, category name) -> value, None when the question has no value under it
    score: Callable[[str, Any, str], float | None] | None = None
    read: Callable[[Answer], Any] | None = None  # the answer's value when it is not simply `field` (the judge's label)
    named_per_run: bool = False  # the metrics block names it with a suffix: judge:<model>:<prompt>, evidence-recall@<k>
    # under `compare --all`, the metric whose value an adversarial question takes (its own name, another metric's, or
    # None: adversarial questions have no value)
    on_adversarial: str | None = None
    needs_entry: bool = True  # compare refuses a file whose metrics block does not name it
    warn_if_names_differ: bool = True  # compare warns when A and B name it differently (not for a per-k name)
    aggregate: Callable[[Sequence[float]], float | None] = mean
    shown: Shown | None = None  # None: `view` does not show it

    @property
    def llm_free(self) -> bool:
        """Computed from the stored answer text alone (what `rescore` recomputes)."""
        return self.score is not None

    @property
    def answer_field(self) -> str:
        """`field` without its `answers[].` prefix (an error message adds `answers[<i>].`)."""
        return self.field.removeprefix(FIELD_PREFIX)

    @property
    def in_scores(self) -> bool:
        """Whether an answer holds the value in its `scores` mapping (rather than a field of its own)."""
        return self.field.startswith(_SCORES)

    def value(self, answer: Answer) -> Any:
        """The answer's value as the result holds it (None when it holds none)."""
        if self.read is not None:
            return self.read(answer)
        if self.in_scores:
            return (answer.scores or {}).get(self.field.removeprefix(_SCORES))
        return getattr(answer, self.answer_field)

    def summary(self, answers: Iterable[Answer]) -> float | None:
        """The aggregate over the answers that hold a value."""
        return self.aggregate([float(v) for a in answers if (v := self.value(a)) is not None])

    def entry(self) -> dict[str, Any]:
        """What a result's `metrics` block records about it: its version, field and source (those it has)."""
        found = {"version": self.version, "field": self.field, "source": self.source}
        return {key: value for key, value in found.items() if value is not None}


def _adopt(name: str, factory: object) -> Metric:
    """Check a metric from a module or an installed package before it is registered."""
    if not isinstance(factory, Metric):
        raise RegistryError(
            f"metric {name!r}: expected a bench.analysis.scoring.metric.Metric, found {type(factory).__name__}"
        )
    if factory.name != name:
        raise RegistryError(f"metric {name!r}: expected a Metric named {name!r}, found one named {factory.name!r}")
    if not factory.field.startswith(FIELD_PREFIX):
        raise RegistryError(f"metric {name!r}: field: expected answers[].<field>, found {factory.field!r}")
    if factory.score is not None and factory.field not in (f"{FIELD_PREFIX}f1", f"{_SCORES}{name}"):
        raise RegistryError(
            f"metric {name!r}: field: expected answers[].scores.{name} for a metric with a score rule, "
            f"found {factory.field!r}"
        )
    return factory


def _discover() -> None:
    for module in import_modules(PACKAGE):
        metric = getattr(module, "METRIC", None)
        if metric is not None:
            METRICS.add(getattr(metric, "name", module.__name__), metric, origin=module.__name__)


#: metric name -> its `Metric`; installed packages add theirs (entry-point group `engram_bench.metrics`)
METRICS: Registry[Metric] = Registry(
    "metric",
    discover=_discover,
    adopt=_adopt,
    hint=f"a module defining METRIC = Metric(...) in {PACKAGE.replace('.', '/')}/ (docs/metrics.md)",
)


def all_metrics() -> list[Metric]:
    """Every registered metric, by name (an installed package's is loaded now)."""
    return [METRICS.get(name) for name in METRICS.names()]


def llm_free_metrics() -> list[Metric]:
    """The metrics computed from the stored answer text alone, by name."""
    return [metric for metric in all_metrics() if metric.llm_free]


def shown_metrics() -> list[Metric]:
    """The metrics `view` shows, in their order."""
    shown = [metric for metric in all_metrics() if metric.shown is not None]
    return sorted(shown, key=lambda m: (m.shown.order if m.shown is not None else 0, m.name))
