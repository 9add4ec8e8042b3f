"""Judge probes: how often a judge accepts an answer planted to be wrong (behind `engram-bench judge-probe`).

An accuracy figure is only as good as the judge that produced it. A probe grades answers known to be wrong and
reports the share the judge accepted (its false-accept rate), overall, per kind of planted answer and per question
category, each with a Wilson 95% interval. Planted answers come from:
- the LoCoMo audit's probe file (`data/locomo-audit/ap-baseline-v2/`): one deliberately wrong "vague but topical"
  answer per scored question, with the verdicts a gpt-4o-mini judge gave it under the lenient prompt three times;
  the rate the file records is shown beside ours;
- our generators (`bench.analysis.planted`), which work for any slice: specific-but-wrong and vague-but-topical answers;
- a file of your own (`--answers`): the eval-results format of the audit's file, or JSON lines with question_id,
  answer and optionally kind.

The judging goes through the gateway like every call (cached, replayable, budgeted). A probe report is a JSON file
holding every graded item; its summaries are computed from the items whenever it is read, never stored.
`compare` and `rejudge` print the rate a report measured for the judge whose labels they show.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.analysis.planted import SPECIFIC_BUT_WRONG, VAGUE_BUT_TOPICAL, plants_for
from bench.analysis.rejudge import JudgeChoice, opened_judge, slug
from bench.analysis.replies import verdict
from bench.analysis.stats import wilson_interval
from bench.data import files as data
from bench.data.audit import our_question_id
from bench.data.slices import SliceQuestion, load_slice, locomo_conversations
from bench.disk.atomic import write_json
from bench.errors import DataError, ResultError
from bench.results.gitinfo import git_state
from bench.results.schema import LOCOMO_CATEGORY_NAMES
from bench.vocab import REPO_ROOT, RESULTS_DIR, RUNS_DIR

PROBE_SCHEMA = "engram-bench/judge-probe@1"
AUDIT_PROBE_FILE = "locomo-audit/ap-baseline-v2/ap_eval_results_scored.json"
AUDIT_SOURCE = "audit"
GENERATED_SOURCE = "generated"
AUDIT_KIND = "audit-vague-topical"
# What the audit's file says of its judge (its README): the recorded rate is that judge's, not ours.
AUDIT_JUDGE = "gpt-4o-mini, lenient (mem0-style) prompt, 3 runs"
COMMITTED_PROBES_DIR = RESULTS_DIR / "judge-probes"
RUN_PROBES_DIR = RUNS_DIR / "judge-probe"
CONCURRENCY = 6


@dataclass(frozen=True)
class ProbeItem:
    """One planted wrong answer to grade."""

    question_id: str
    category: int
    question: str
    gold: Any
    answer: str
    kind: str
    family: str
    source: str
    recorded: float | None = None  # the share of the file's own judgments that accepted it, where it has some


# ---------------------------------------------------------------------------------------------------------------
# Where planted answers come from


def locomo_question_id(audit_id: str, where: str) -> str:
    """`locomo_<i>_qa<j>` -> our `conv-NN:j` (the audit's rule, `bench.data.audit.our_question_id`)."""
    return our_question_id(audit_id, list(locomo_conversations()), where)


def _locomo_questions() -> dict[str, SliceQuestion]:
    return {q.id: q for q in load_slice("locomo").questions}


def _checked_question(qid: str, category: Any, known: dict[str, SliceQuestion], where: str) -> SliceQuestion:
    question = known.get(qid)
    if question is None:
        raise DataError(f"{where}: field question_id: expected a question of LoCoMo, found {qid!r} (no such question)")
    if category is not None and str(category) != str(question.category):
        raise DataError(
            f"{where}: field category of {qid}: expected LoCoMo's category {question.category}, found {category!r}"
        )
    return question


def eval_results_items(document: Any, where: str, source: str, kind: str) -> list[ProbeItem]:
    """Planted answers from a file in the eval-results format (per-question records under `detailed_results`, each
    with `llm_judgments`): the recorded value is the share of its judgments that were true."""
    if not isinstance(document, dict) or not isinstance(document.get("detailed_results"), dict):
        raise DataError(
            f"{where}: expected an eval-results object with detailed_results, found {type(document).__name__}"
        )
    known = _locomo_questions()
    items: list[ProbeItem] = []
    seen: set[str] = set()
    for group, records in document["detailed_results"].items():
        for i, record in enumerate(records):
            at = f"{where}: detailed_results.{group}[{i}]"
            if not isinstance(record, dict) or "question_id" not in record or "generated_answer" not in record:
                raise DataError(f"{at}: expected question_id and generated_answer, found {record!r:.80}")
            qid = locomo_question_id(str(record["question_id"]), at)
            if qid in seen:
                raise DataError(
                    f"{at}: field question_id: expected each question once, found {record['question_id']} twice"
                )
            seen.add(qid)
            question = _checked_question(qid, record.get("category"), known, at)
            judgments = record.get("llm_judgments") or {}
            votes = [bool(v) for v in judgments.values()] if isinstance(judgments, dict) else []
            recorded = sum(votes) / len(votes) if votes else None
            items.append(
                ProbeItem(
                    qid,
                    question.category,
                    question.question,
                    question.gold,
                    str(record["generated_answer"]),
                    kind,
                    VAGUE_BUT_TOPICAL if kind == AUDIT_KIND else "own",
                    source,
                    recorded,
                )
            )
    return items


def audit_items() -> list[ProbeItem]:
    """The audit's vague-but-topical probe set (hash-checked by bench.data.files against data/SOURCES.md)."""
    return eval_results_items(data.load_json(AUDIT_PROBE_FILE), f"data/{AUDIT_PROBE_FILE}", AUDIT_SOURCE, AUDIT_KIND)


def generated_items(slice_name: str) -> list[ProbeItem]:
    """Our planted answers for every scored question of a slice (the people of its conversation for name swaps)."""
    loaded = load_slice(slice_name)
    items = []
    for part in loaded.runs():
        for question in part.scored_questions:
            for plant in plants_for(question.gold, part.speakers):
                items.append(
                    ProbeItem(
                        question.id,
                        question.category,
                        question.question,
                        question.gold,
                        plant.answer,
                        plant.kind,
                        plant.family,
                        GENERATED_SOURCE,
                    )
                )
    return items


def own_items(path: Path) -> list[ProbeItem]:
    """A file of your own: the eval-results format, or JSON lines {question_id, answer, kind?} on LoCoMo ids."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{where}: expected a readable answers file, found {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None  # JSON lines (or nothing): read line by line below
    # One JSON line is also one JSON document: it is the eval-results format only when it says so (or spans lines).
    if document is not None and (
        len(text.strip().splitlines()) > 1 or not isinstance(document, dict) or "detailed_results" in document
    ):
        return eval_results_items(document, where, path.name, "own")
    known = _locomo_questions()
    items: list[ProbeItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{at}: expected one JSON object per line, found a parse error: {exc.msg}") from exc
        if not isinstance(record, dict) or not isinstance(record.get("answer"), str) or "question_id" not in record:
            raise DataError(f"{at}: expected question_id and a text answer, found {line[:80]!r}")
        qid = str(record["question_id"])
        if qid.startswith("locomo_"):
            qid = locomo_question_id(qid, at)
        question = _checked_question(qid, record.get("category"), known, at)
        kind = str(record.get("kind", "own"))
        items.append(
            ProbeItem(
                qid, question.category, question.question, question.gold, record["answer"], kind, "own", path.name
            )
        )
    if not items:
        raise DataError(f"{where}: expected planted answers, found none")
    return items


def sample(items: Sequence[ProbeItem], limit: int | None, seed: str) -> list[ProbeItem]:
    """At most `limit` items, drawn without replacement with a seed named by the probe, keeping the items' order."""
    if limit is None or limit >= len(items):
        return list(items)
    rng = random.Random(seed)
    kept = set(rng.sample(range(len(items)), limit))
    return [item for i, item in enumerate(items) if i in kept]


# ---------------------------------------------------------------------------------------------------------------
# Grading and the report file


def grade(
    items: Sequence[ProbeItem], choice: JudgeChoice, sources: Sequence[dict[str, Any]], mode: str | None = None
) -> dict[str, Any]:
    """Judge every planted answer with the chosen judge and return the report document (not yet written)."""
    with opened_judge(choice, mode, run_id=f"judge-probe-{slug(choice)}", arm="judge-probe") as opened:
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            verdicts = list(pool.map(lambda it: opened.judge.judge(it.question, it.gold, it.answer), items))
        judge = {
            "name": choice.name,
            "stack": choice.stack,
            "prompt": choice.prompt,
            "model": opened.model,
            "metric": opened.metric,
            "standin": opened.standin,
        }
    commit, dirty = git_state(REPO_ROOT)
    return {
        "probe_schema": PROBE_SCHEMA,
        "judge": judge,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit,
        "dirty": dirty,
        "sources": list(sources),
        "items": [
            asdict(item) | {"label": v.label, "readable": opened.standin or verdict("judge", v.raw) == "ok"}
            for item, v in zip(items, verdicts, strict=True)
        ],
    }


def default_path(choice: JudgeChoice) -> Path:
    return RUN_PROBES_DIR / choice.stack / f"{slug(choice)}.json"


def write_report(path: Path, report: dict[str, Any]) -> Path:
    return write_json(path, report)


def read_report(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultError(f"{path}: expected a judge-probe report (JSON), found {exc}") from exc
    if not isinstance(document, dict) or document.get("probe_schema") != PROBE_SCHEMA:
        raise ResultError(
            f"{path}: field probe_schema: expected {PROBE_SCHEMA!r}, found {document.get('probe_schema')!r}"
        )
    return document


# ---------------------------------------------------------------------------------------------------------------
# Summaries (computed from the items, every time)


@dataclass(frozen=True)
class RateRow:
    group: str
    n: int
    accepted: int
    rate: float
    low: float
    high: float
    recorded: float | None = None  # the file's own judge's acceptance rate over the same items, where it has one


def _row(group: str, rows: Sequence[dict[str, Any]]) -> RateRow:
    accepted = sum(1 for r in rows if r["label"] == "CORRECT")
    interval = wilson_interval(accepted, len(rows))
    votes = [r["recorded"] for r in rows if r.get("recorded") is not None]
    recorded = sum(votes) / len(votes) if votes and len(votes) == len(rows) else None
    return RateRow(group, len(rows), accepted, interval.estimate, interval.low, interval.high, recorded)


def _grouped(items: Iterable[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


def summary_rows(report: dict[str, Any]) -> list[RateRow]:
    """All, then by family, source and kind, then by category (LoCoMo's numbering)."""
    items = report["items"]
    if not items:
        return []
    rows = [_row("all", items)]
    for family in (SPECIFIC_BUT_WRONG, VAGUE_BUT_TOPICAL, "own"):
        chosen = [i for i in items if i["family"] == family]
        if chosen:
            rows.append(_row(family, chosen))
    for (source, kind), chosen in sorted(_grouped(items, lambda i: (i["source"], i["kind"])).items()):
        rows.append(_row(f"  {source}: {kind}", chosen))
    for category, chosen in sorted(_grouped(items, lambda i: i["category"]).items()):
        rows.append(_row(f"category {category} {LOCOMO_CATEGORY_NAMES.get(category, '')}".rstrip(), chosen))
    # a source whose file recorded its own judge's verdicts: per category too, beside that judge's rate
    recorded = [i for i in items if i.get("recorded") is not None]
    for (source, category), chosen in sorted(_grouped(recorded, lambda i: (i["source"], i["category"])).items()):
        rows.append(_row(f"  {source}, category {category}", chosen))
    return rows


def render(report: dict[str, Any], path: Path | None = None) -> str:
    judge = report["judge"]
    label = " (OFFLINE STAND-IN)" if judge.get("standin") else ""
    lines = [
        f"judge probe: {judge['name']} on the {judge['stack']} stack, model {judge['model']}{label}",
        f"metric {judge['metric']}; planted wrong answers the judge accepted (false-accept rate, Wilson 95% CI)",
        f"{'group':34} {'n':>6} {'accepted':>9} {'rate':>7}  {'95% CI':16} recorded in the file",
    ]
    for row in summary_rows(report):
        recorded = f"{100 * row.recorded:.1f}% ({AUDIT_JUDGE})" if row.recorded is not None else ""
        ci = f"[{100 * row.low:.1f}, {100 * row.high:.1f}]"
        lines.append(f"{row.group:34} {row.n:>6} {row.accepted:>9} {100 * row.rate:>6.1f}%  {ci:16} {recorded}")
    unreadable = sum(1 for i in report["items"] if not i.get("readable", True))
    if unreadable:
        lines.append(
            f"WARNING: {unreadable} of {len(report['items'])} judge replies held no readable label and count as "
            "WRONG: a judge that cannot answer rejects everything, so its false-accept rate says nothing"
        )
    categories = Counter(i["category"] for i in report["items"])
    lines.append(
        "categories: LoCoMo's numbering (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial); "
        + ", ".join(f"{c}: n={n}" for c, n in sorted(categories.items()))
    )
    if path is not None:
        lines.append(f"written: {path}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# The rate beside an accuracy (compare, rejudge)


def _reports(roots: Sequence[Path]) -> Iterable[tuple[Path, dict[str, Any]]]:
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.json")):
            try:
                yield path, read_report(path)
            except ResultError:
                continue


def measured_rate(
    metric: str, roots: Sequence[Path] = (COMMITTED_PROBES_DIR, RUN_PROBES_DIR)
) -> tuple[Path, RateRow] | None:
    """The false-accept rate the first probe report (committed ones first) measured for a judge metric."""
    for path, report in _reports(roots):
        if report["judge"].get("metric") == metric and report["items"]:
            return path, _row("all", report["items"])
    return None


def rate_line(metric: str | None, roots: Sequence[Path] = (COMMITTED_PROBES_DIR, RUN_PROBES_DIR)) -> str:
    """One line for a report: the judge's measured false-accept rate, or how to measure it."""
    if metric is None:
        return "judge false-accept rate: no judge metric recorded"
    found = measured_rate(metric, roots)
    if found is None:
        return f"judge false-accept rate of {metric}: not measured (engram-bench judge-probe measures it)"
    path, row = found
    try:
        shown = path.resolve().relative_to(REPO_ROOT)
    except ValueError:
        shown = path
    return (
        f"judge false-accept rate of {metric}: {100 * row.rate:.1f}% of {row.n:,} planted wrong answers "
        f"(95% CI {100 * row.low:.1f}-{100 * row.high:.1f}; {shown})"
    )
