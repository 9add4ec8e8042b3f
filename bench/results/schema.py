"""The result-file schema: one JSON file per (stack, slice, arm, k), written by the runner and the v1 importer,
read by the statistics and the paper build.

Layout: ``results/<stack>/<slice-dir>/<arm>[__k<k>].json`` where the slice-dir is the slice name, except held-out
slices ``heldout:conv-30`` → ``heldout/conv-30``. The imported article results live under ``results/v1/`` with
``stack = "paper"`` and ``provenance.origin = "engram-eval-v1 import"``.

Files are validated on write and on read (``ResultError`` naming the file and field), written atomically with sorted
keys, so two runs of the same arm on the same cache give byte-identical files except for the ``timing`` block.

Summary blocks (``accuracy``, ``accuracy_by_category``) are derived from ``answers``; validation checks they agree,
so a tampered label cannot hide behind a stale summary. Build them with ``tally_answers`` / ``tally_by_category``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from bench.data.datasets import CategoryCheck
from bench.data.datasets.locomo import LOCOMO
from bench.disk.atomic import dumps_json, write_text
from bench.errors import ResultError
from bench.models.provider import is_standin
from bench.models.stacks import RESULT_STACK_NAMES, load_stack_spec

SCHEMA_VERSION = 1

LABELS = ("CORRECT", "WRONG")
# LoCoMo's scored categories (1-4) and its numeric codes, as the v1 files and locomo10.json carry them: declared
# by the dataset (bench.data.datasets.locomo). A result's category names are checked against every registered dataset.
SCORED_CATEGORIES = LOCOMO.scored_categories
LOCOMO_CATEGORY_NAMES = LOCOMO.codes
ORIGIN_V1_IMPORT = "engram-eval-v1 import"


@dataclass(frozen=True)
class Tally:
    """A count of correct answers out of n; ``value`` is correct/n (null when n is 0)."""

    correct: int
    n: int
    value: float | None

    @classmethod
    def of(cls, correct: int, n: int) -> Tally:
        return cls(correct=correct, n=n, value=(correct / n) if n else None)


@dataclass(frozen=True)
class Answer:
    """One asked question and how the arm answered it."""

    question_id: str
    conversation: str
    category: str
    scored: bool
    question: str
    gold: str
    answer: str | None  # null only when the source did not publish the answer text (some v1 records)
    label: str
    f1: float | None = None  # the metric `locomo-f1` (bench.analysis.scoring)
    evidence_recall: float | None = None  # the metric `evidence-recall@<k>`
    lines: list[str] | None = None
    lines_shown: int = 0
    retrieved_tokens: int | None = None
    checkpoint: int | None = None
    tier: str | None = None
    expected: str | None = None
    type: str | None = None
    # Further LLM-free metrics by name (bench.analysis.scoring): mem0-f1, mem0-bleu1, locomo-adversarial; null when the
    # answer text is unknown or the file predates them.
    scores: dict[str, float] | None = None
    # Per shown line, the slice message ids it came from (aligned with ``lines``); and the question's evidence
    # message ids. Null in files written before they were recorded (the v1 imports).
    sources: list[list[str]] | None = None
    evidence: list[str] | None = None

    @property
    def correct(self) -> bool:
        return self.label == "CORRECT"


@dataclass(frozen=True)
class Source:
    path: str
    sha256: str
    license: str


@dataclass(frozen=True)
class Provenance:
    origin: str
    git_commit: str | None = None
    git_tag: str | None = None
    git_dirty: bool | None = None
    dataset_sha256: str | None = None
    arm_hash: str | None = None
    cache_subset_sha256: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    sources: list[Source] = field(default_factory=list)
    # The parts of the run that installed packages provided (entry points, `bench.registry`): one record each,
    # {kind, name, params, distribution, version}. Left out of the file when every part is built in.
    plugins: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Costs:
    """Nominal USD per 1,000 messages (cached replays report the recorded cost); null when not applicable."""

    cost_per_1k: float | None = None
    decision_cost_per_1k: float | None = None
    extract_cost_per_1k: float | None = None


@dataclass(frozen=True)
class Latency:
    """Medians of recorded latencies (virtual clock: deterministic on replay); null when not applicable."""

    write_p50_ms: float | None = None
    decision_p50_ms: float | None = None


@dataclass(frozen=True)
class Calls:
    hits: int = 0
    misses: int = 0
    keys_file: str | None = None


@dataclass(frozen=True)
class Timing:
    """The one declared non-deterministic block."""

    wall_s: float | None = None
    started_at: str | None = None
    finished_at: str | None = None


@dataclass(frozen=True)
class Result:
    """One result file. Everything is typed except three open dicts whose usual keys are:

    - ``store``: stored, active, tentative, closes_by_reason {reason: n}, reopens, escalations, same_as, ...
    - ``updates`` (update slices only, else null): items [{id, tier, expected, behavior}], behavior_counts,
      stale [n, stored], traps {stored, closed}, closes {total, labeled, unlabeled},
      plan_fulfilled {asks, correct, wrong}, ...
    - ``extras``: run-level figures with no field yet (token-match info {k, tokens_by_k, reference_tokens}, ...).
    """

    arm: str
    system: str
    stack: str
    slice: str
    k: int | None
    arm_hash: str | None
    settings: dict[str, Any]
    models: dict[str, str]
    standins: list[str]
    provenance: Provenance
    accuracy: Tally
    accuracy_by_category: dict[str, Tally]
    answers: list[Answer]
    costs: Costs = field(default_factory=Costs)
    latency: Latency = field(default_factory=Latency)
    store: dict[str, Any] = field(default_factory=dict)
    updates: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    calls: Calls = field(default_factory=Calls)
    timing: Timing = field(default_factory=Timing)
    # The metrics this result carries, by name: {name: {version, field, source}}; the judge's entry names what
    # `label` is (judge:<model>:<prompt id>). Empty in files that predate metric names.
    metrics: dict[str, Any] = field(default_factory=dict)
    # The name of the trace sidecar next to this file (``<name>.trace.json.gz``, see ``bench.results.trace``): what the
    # system decided about each shown line. Null when the run wrote none.
    trace: str | None = None
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def build(cls, *, answers: Sequence[Answer], **rest: Any) -> Result:
        """Construct with the accuracy blocks derived from the answers (the way every writer should)."""
        return cls(
            answers=list(answers),
            accuracy=tally_answers(answers),
            accuracy_by_category=tally_by_category(answers),
            **rest,
        )

    def to_dict(self) -> dict[str, Any]:
        """The file's content. Fields added after a file format was first committed (`metrics`, `trace`, an
        answer's `scores`, `sources`, `evidence`) are left out while empty, so files that do not carry them keep
        their bytes."""
        d = plain_data(self)
        if not d["metrics"]:
            del d["metrics"]
        if d["trace"] is None:
            del d["trace"]
        if d["provenance"]["plugins"] is None:
            del d["provenance"]["plugins"]
        for answer in d["answers"]:
            for name in ("scores", "sources", "evidence"):
                if answer[name] is None:
                    del answer[name]
        return d

    def scored_answers(self) -> list[Answer]:
        return [a for a in self.answers if a.scored]


def plain_data(value: Any) -> Any:
    """`dataclasses.asdict` for a result: dataclasses become dicts, lists, tuples and dicts are copied, and every
    other value is kept as it is. asdict would deep-copy each string and number too (the same values: they cannot
    change), which for a result of 1,540 answers cost more than the rest of writing it."""
    if isinstance(value, (list, tuple)):
        return type(value)(plain_data(item) for item in value)
    if isinstance(value, dict):
        return type(value)((key, plain_data(item)) for key, item in value.items())
    if hasattr(type(value), "__dataclass_fields__"):
        return {f.name: plain_data(getattr(value, f.name)) for f in fields(value)}
    return value


# --------------------------------------------------------------------------------------------------- derivations


def tally_answers(answers: Iterable[Answer]) -> Tally:
    """Accuracy over scored answers."""
    scored = [a for a in answers if a.scored]
    return Tally.of(sum(a.correct for a in scored), len(scored))


def tally_by_category(answers: Iterable[Answer]) -> dict[str, Tally]:
    """Accuracy per category over every answer carrying a label (scored or not: adversarial gets its own row)."""
    by: dict[str, list[Answer]] = {}
    for a in answers:
        by.setdefault(a.category, []).append(a)
    return {cat: Tally.of(sum(a.correct for a in group), len(group)) for cat, group in sorted(by.items())}


# ------------------------------------------------------------------------------------------------------- layout


def slice_dir(slice_name: str) -> str:
    """``heldout:conv-30`` → ``heldout/conv-30``; other slice names are their own directory."""
    if ":" in slice_name:
        head, _, tail = slice_name.partition(":")
        return f"{head}/{tail}"
    return slice_name


def file_name(arm: str, k: int | None) -> str:
    return f"{arm}__k{k}.json" if k is not None else f"{arm}.json"


def result_path(root: str | Path, stack_dir: str, slice_name: str, arm: str, k: int | None) -> Path:
    """Where a result lives: ``<root>/<stack_dir>/<slice-dir>/<arm>[__k<k>].json`` (stack_dir is ``offline``,
    ``paper`` or ``v1`` for the imported article results)."""
    return Path(root) / stack_dir / slice_dir(slice_name) / file_name(arm, k)


# ----------------------------------------------------------------------------------------------- JSON Schema

RESULT_SCHEMA_ID = "https://engram-bench.invalid/schemas/result-v{version}.schema.json"


def result_json_schema() -> dict[str, Any]:
    """The result file as JSON Schema (draft 2020-12), generated from the dataclasses above by pydantic, so the
    schema and the writer share one definition. Added on top, from this module's constants: the closed value sets
    (stack, label), the schema version, and that no object carries a field the dataclass lacks (which
    `result_from_dict` refuses too). What JSON Schema cannot say (summaries agree with the answers, one source
    list per shown line, a category some registered dataset declares: an open set, as installed packages add
    datasets) stays with `result_from_dict`."""
    # local import: pydantic (~20 ms) only publishes or checks the schema; `--help` loads this module
    from pydantic import TypeAdapter

    schema = TypeAdapter(Result).json_schema(mode="validation")
    defs = schema.setdefault("$defs", {})
    dataclass_names = {cls.__name__ for cls in (Tally, Answer, Source, Provenance, Costs, Latency, Calls, Timing)}
    for name, definition in defs.items():
        if name in dataclass_names:
            definition["additionalProperties"] = False
    schema["additionalProperties"] = False
    props = schema["properties"]
    props["stack"]["enum"] = list(RESULT_STACK_NAMES)
    props["schema_version"]["const"] = SCHEMA_VERSION
    answer = defs["Answer"]["properties"]
    answer["label"]["enum"] = list(LABELS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": RESULT_SCHEMA_ID.format(version=SCHEMA_VERSION),
        **schema,
        "title": f"engram-bench result file, schema v{SCHEMA_VERSION}",
        "description": "One file per (stack, slice, arm, k): results/<stack>/<slice-dir>/<arm>[__k<k>].json.",
    }


# --------------------------------------------------------------------------------------------------- validation


class _Checker:
    """Field-by-field validation with one-line errors naming the file and the field."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._categories: CategoryCheck | None = None

    def category(self, name: Any, where: str) -> None:
        """Refuse a category no registered dataset declares (the registry is read once per file)."""
        if self._categories is None:
            self._categories = CategoryCheck()
        self._categories(name, where)

    def fail(self, path: str, expected: str, found: Any) -> ResultError:
        shown = json.dumps(found)[:80] if not isinstance(found, str) or len(found) < 80 else found[:77] + "..."
        return ResultError(f"{self.where}: field {path}: expected {expected}, found {shown}")

    def get(self, d: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in d:
            raise ResultError(f"{self.where}: field {path}{key} is missing")
        return d[key]

    def typed(self, value: Any, kinds: tuple[type, ...], path: str, expected: str, nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        # bool is an int subclass in Python; a count must not silently accept true/false.
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(path, expected, value)
        if not isinstance(value, kinds):
            raise self.fail(path, expected, value)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, expected, value)
        return value

    def dataclass_from(self, cls: type, d: Any, path: str, nested: Mapping[str, Any] | None = None) -> Any:
        if not isinstance(d, Mapping):
            raise self.fail(path.rstrip("."), "an object", d)
        names = _field_names(cls)
        unknown = sorted(set(d) - names)
        if unknown:
            raise ResultError(f"{self.where}: field {path}{unknown[0]} is not in schema v{SCHEMA_VERSION}")
        values: dict[str, Any] = dict(d) if not nested else {}
        if nested:
            for name, raw in d.items():
                convert = nested.get(name)
                values[name] = convert(raw, f"{path}{name}") if convert else raw
        try:
            return cls(**values)
        except TypeError as exc:  # a required field is missing
            missing = next(f.name for f in fields(cls) if f.name not in d)
            raise ResultError(f"{self.where}: field {path}{missing} is missing") from exc


_NUM = (int, float)


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


def _tally(c: _Checker, d: Any, path: str) -> Tally:
    t = c.dataclass_from(Tally, d, f"{path}.")
    c.typed(t.correct, (int,), f"{path}.correct", "an integer")
    c.typed(t.n, (int,), f"{path}.n", "an integer")
    c.typed(t.value, _NUM, f"{path}.value", "a number or null", nullable=True)
    if not 0 <= t.correct <= t.n:
        raise c.fail(f"{path}.correct", f"0 <= correct <= n={t.n}", t.correct)
    expected = (t.correct / t.n) if t.n else None
    if (expected is None) != (t.value is None) or (expected is not None and abs(expected - t.value) > 1e-12):
        raise c.fail(f"{path}.value", f"correct/n = {expected}", t.value)
    return t


def _answer(c: _Checker, d: Any, path: str) -> Answer:
    a: Answer = c.dataclass_from(Answer, d, f"{path}.")
    for name in ("question_id", "conversation", "question", "gold"):
        c.typed(getattr(a, name), (str,), f"{path}.{name}", "a string")
    c.typed(a.answer, (str,), f"{path}.answer", "a string or null", nullable=True)
    c.category(a.category, f"{c.where}: field {path}.category")
    c.typed(a.scored, (bool,), f"{path}.scored", "true or false")
    if a.label not in LABELS:
        raise c.fail(f"{path}.label", "CORRECT or WRONG", a.label)
    c.typed(a.f1, _NUM, f"{path}.f1", "a number or null", nullable=True)
    c.typed(a.evidence_recall, _NUM, f"{path}.evidence_recall", "a number or null", nullable=True)
    if a.lines is not None and not (isinstance(a.lines, list) and all(isinstance(x, str) for x in a.lines)):
        raise c.fail(f"{path}.lines", "a list of strings or null", a.lines)
    c.typed(a.lines_shown, (int,), f"{path}.lines_shown", "an integer")
    c.typed(a.retrieved_tokens, (int,), f"{path}.retrieved_tokens", "an integer or null", nullable=True)
    c.typed(a.checkpoint, (int,), f"{path}.checkpoint", "an integer or null", nullable=True)
    for name in ("tier", "expected", "type"):
        c.typed(getattr(a, name), (str,), f"{path}.{name}", "a string or null", nullable=True)
    c.typed(a.scores, (dict,), f"{path}.scores", "an object {metric: number} or null", nullable=True)
    for metric, value in (a.scores or {}).items():
        c.typed(value, _NUM, f"{path}.scores.{metric}", "a number")
    if a.evidence is not None and not _strings(a.evidence):
        raise c.fail(f"{path}.evidence", "a list of message ids or null", a.evidence)
    if a.sources is not None:
        if not (isinstance(a.sources, list) and all(_strings(s) for s in a.sources)):
            raise c.fail(f"{path}.sources", "a list of message-id lists (one per line) or null", a.sources)
        if a.lines is not None and len(a.sources) != len(a.lines):
            raise c.fail(f"{path}.sources", f"one entry per line ({len(a.lines)})", f"{len(a.sources)} entries")
    return a


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _provenance(c: _Checker, d: Any, path: str) -> Provenance:
    def sources(raw: Any, p: str) -> list[Source]:
        if not isinstance(raw, list):
            raise c.fail(p, "a list", raw)
        out = [c.dataclass_from(Source, s, f"{p}[{i}].") for i, s in enumerate(raw)]
        for i, s in enumerate(out):
            for name in ("path", "sha256", "license"):
                c.typed(getattr(s, name), (str,), f"{p}[{i}].{name}", "a string")
        return out

    p: Provenance = c.dataclass_from(Provenance, d, f"{path}.", {"sources": sources})
    c.typed(p.origin, (str,), f"{path}.origin", "a string")
    c.typed(p.packages, (dict,), f"{path}.packages", "an object")
    if p.plugins is not None:
        _check_plugins(c, p.plugins, f"{path}.plugins")
    return p


def _check_plugins(c: _Checker, plugins: Any, path: str) -> None:
    if not isinstance(plugins, list) or not plugins:
        raise c.fail(path, "a non-empty list of plug-in records (or the field left out)", plugins)
    for i, record in enumerate(plugins):
        at = f"{path}[{i}]"
        if not isinstance(record, dict) or set(record) != {"kind", "name", "params", "distribution", "version"}:
            raise c.fail(at, "an object with kind, name, params, distribution, version", record)
        for name in ("kind", "name", "distribution"):
            c.typed(record[name], (str,), f"{at}.{name}", "a string")
        c.typed(record["version"], (str,), f"{at}.version", "a string or null", nullable=True)
        c.typed(record["params"], (dict,), f"{at}.params", "an object")


def _simple(cls: type) -> Any:
    def convert(c: _Checker, d: Any, path: str) -> Any:
        obj = c.dataclass_from(cls, d, f"{path}.")
        for f in fields(cls):
            value = getattr(obj, f.name)
            if f.name in ("keys_file", "started_at", "finished_at"):
                c.typed(value, (str,), f"{path}.{f.name}", "a string or null", nullable=True)
            elif f.name in ("hits", "misses"):
                c.typed(value, (int,), f"{path}.{f.name}", "an integer")
            else:
                c.typed(value, _NUM, f"{path}.{f.name}", "a number or null", nullable=True)
        return obj

    return convert


def result_from_dict(d: Any, where: str = "<result>") -> Result:
    """Validate a parsed result file and return it typed; ``ResultError`` names ``where`` and the field."""
    c = _Checker(where)
    if not isinstance(d, Mapping):
        raise c.fail("<top>", "a JSON object", type(d).__name__)
    version = c.get(d, "schema_version", "")
    if version != SCHEMA_VERSION:
        raise c.fail("schema_version", str(SCHEMA_VERSION), version)

    def answers(raw: Any, path: str) -> list[Answer]:
        if not isinstance(raw, list):
            raise c.fail(path, "a list of answer records", raw)
        return [_answer(c, item, f"{path}[{i}]") for i, item in enumerate(raw)]

    def by_category(raw: Any, path: str) -> dict[str, Tally]:
        if not isinstance(raw, Mapping):
            raise c.fail(path, "an object {category: tally}", raw)
        return {cat: _tally(c, t, f"{path}.{cat}") for cat, t in raw.items()}

    nested = {
        "provenance": lambda raw, p: _provenance(c, raw, p),
        "accuracy": lambda raw, p: _tally(c, raw, p),
        "accuracy_by_category": by_category,
        "answers": answers,
        "costs": lambda raw, p: _simple(Costs)(c, raw, p),
        "latency": lambda raw, p: _simple(Latency)(c, raw, p),
        "calls": lambda raw, p: _simple(Calls)(c, raw, p),
        "timing": lambda raw, p: _simple(Timing)(c, raw, p),
    }
    r: Result = c.dataclass_from(Result, d, "", nested)
    _check_top(c, r)
    return r


def _check_top(c: _Checker, r: Result) -> None:
    for name in ("arm", "system", "slice"):
        if not isinstance(getattr(r, name), str) or not getattr(r, name):
            raise c.fail(name, "a non-empty string", getattr(r, name))
    if r.stack not in RESULT_STACK_NAMES:
        raise c.fail("stack", " or ".join(RESULT_STACK_NAMES), r.stack)
    c.typed(r.k, (int,), "k", "an integer or null", nullable=True)
    c.typed(r.arm_hash, (str,), "arm_hash", "a string or null", nullable=True)
    c.typed(r.trace, (str,), "trace", "a file name or null", nullable=True)
    if r.trace is not None and (not r.trace or "/" in r.trace or "\\" in r.trace):
        raise c.fail("trace", "the name of a file next to the result", r.trace)
    for name in ("settings", "models", "store", "extras", "metrics"):
        c.typed(getattr(r, name), (dict,), name, "an object")
    c.typed(r.updates, (dict,), "updates", "an object or null", nullable=True)
    if not isinstance(r.standins, list) or not all(isinstance(s, str) for s in r.standins):
        raise c.fail("standins", "a list of role names", r.standins)
    if not is_standin_stack(r.stack):
        # A stack that mixes real models with stand-ins (e.g. openai with the rules decider) lists exactly the roles
        # a stand-in provider served; any other stack lists none. (The offline stack's older files name their
        # models without a provider, so its list is not checked.)
        served = sorted(_standin_roles(r.models))
        if sorted(r.standins) != served:
            raise c.fail(
                "standins", f"the roles served by stand-in providers on the {r.stack} stack, {served}", r.standins
            )
    derived = tally_answers(r.answers)
    if r.accuracy != derived:
        raise c.fail("accuracy", f"{derived.correct}/{derived.n} as counted from answers", asdict(r.accuracy))
    derived_by = tally_by_category(r.answers)
    if r.accuracy_by_category != derived_by:
        diff = next(
            k
            for k in sorted(set(derived_by) | set(r.accuracy_by_category))
            if derived_by.get(k) != r.accuracy_by_category.get(k)
        )
        want = derived_by.get(diff)
        raise c.fail(
            f"accuracy_by_category.{diff}",
            f"{want.correct}/{want.n} as counted from answers" if want else "absent (no such answers)",
            asdict(r.accuracy_by_category[diff]) if diff in r.accuracy_by_category else None,
        )


# ------------------------------------------------------------------------------------------------------ read/write


def result_text(result: Result, where: str) -> str:
    """The text of a result file (the one JSON layout, bench.disk.atomic.dumps_json), validated by reading that
    very text back as `read_result` would; ResultError naming `where` and the field when it does not validate."""
    text = dumps_json(result.to_dict())
    result_from_dict(json.loads(text), where=where)
    return text


def write_result(path: str | Path, result: Result) -> Path:
    """Validate, then write atomically (sorted keys). Nothing is written when validation fails."""
    return write_text(path, result_text(result, str(path)))


def read_result(path: str | Path) -> Result:
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ResultError(f"{p}: result file not found") from exc
    except json.JSONDecodeError as exc:
        raise ResultError(f"{p}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise ResultError(
            f"{p}: expected UTF-8 JSON, found byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
        ) from None
    return result_from_dict(raw, where=str(p))


def iter_results(root: str | Path) -> Iterable[tuple[Path, Result]]:
    """Every result file under ``root`` (sorted), skipping non-result JSON such as MANIFEST.json and the v1
    supplementary files (which carry no ``schema_version``)."""
    for p in sorted(Path(root).rglob("*.json")):
        try:
            head = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ResultError(f"{p}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from exc
        if isinstance(head, dict) and "schema_version" in head:
            yield p, result_from_dict(head, where=str(p))


def result_files(spec: str | Path) -> list[Path]:
    """The result files a command-line spec names: a file, a directory (every result file under it, sorted) or a
    glob (quoted on the command line; `**` recurses). A spec that names no file is refused (ResultError)."""
    path = Path(spec)
    if path.is_file():
        found = [path]
    elif path.is_dir():
        found = [p for p, _ in iter_results(path)]
    else:
        found = [p for p in _glob(path) if p.is_file()]
    if not found:
        raise ResultError(f"{spec}: expected a result file, a directory of result files or a glob, found no files")
    return found


def _glob(pattern: Path) -> list[Path]:
    """The paths a glob names, sorted as text. pathlib's `**` does not descend into symlinked folders, where
    glob.glob(recursive=True) follows them: over a folder with two symlink loops it never returned."""
    root = Path(pattern.anchor) if pattern.is_absolute() else Path()
    relative = pattern.relative_to(root) if pattern.is_absolute() else pattern
    return [Path(p) for p in sorted(str(p) for p in root.glob(str(relative)))]


def result_files_of(specs: Iterable[str | Path]) -> list[Path]:
    """The result files several specs name, in order, each once."""
    files: list[Path] = []
    for spec in specs:
        files += [f for f in result_files(spec) if f not in files]
    return files


def _standin_roles(models: Mapping[str, Any]) -> set[str]:
    """The roles whose `provider/model` names a stand-in provider."""
    return {role for role, model in models.items() if is_standin(str(model).partition("/")[0])}


@cache
def is_standin_stack(stack: str) -> bool:
    """Whether every role of `stack` is served by a stand-in provider (the offline stack)."""
    return all(is_standin(ref.provider) for ref in load_stack_spec(stack).roles.values())
