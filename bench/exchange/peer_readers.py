"""Readers of peers' published per-question LoCoMo files that carry no LoCoMo question ids of their own, and the
detection of a file's format when `--format` is left out.

- `zep-grades`: Zep's published grades (getzep/zep-papers, `.../locomo_eval/data/zep_locomo_grades.json`):
  `{locomo_experiment_user_<i>: [{question, answer, golden_answer, grade (bool), category (LoCoMo's code)}]}`,
  category 5 left out. Rows are matched by position among the conversation's scored questions, checked by text.
- `zep-responses`: the same folder's `zep_locomo_responses.json` holds the answers and their latency but no grade:
  recognised, and refused in one line that names the grades file (which holds the same answers, graded).
- `omb`: the Open Memory Benchmark's output (vectorize-io/agent-memory-benchmark
  `outputs/locomo/<system>/<mode>/locomo10.json.gz`, gzip as published): `{answer_llm, judge_llm, total_queries,
  correct, accuracy, results: [{query_id (conv-26_q<i>: the i-th scored question), query, answer, correct (bool),
  context_tokens, retrieve_time_ms, meta: {category (a name)}}]}`; the retrieved tokens and the retrieval latency are
  kept on each answer, the aggregates checked against the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bench.errors import DataError
from bench.exchange.peer_rows import Locomo, Reading, Row, in_order, locomo, make_row, naming_of

ZEP_KEY = "locomo_experiment_user_"


def zep_grades_rows(document: Any, where: str) -> Reading:
    known = locomo()
    if not isinstance(document, dict) or not document:
        raise DataError(f"{where}: expected Zep's grades {{{ZEP_KEY}<i>: [records]}}, found {type(document).__name__}")
    rows: list[Row] = []
    for key, records in document.items():
        if not str(key).startswith(ZEP_KEY) or not isinstance(records, list):
            raise DataError(f"{where}: key {key!r}: expected {ZEP_KEY}<conversation index> with a list of records")
        conversation = known.conversation_of(str(key)[len(ZEP_KEY) :], f"{where}: key {key!r}")
        for qid, record, at in in_order(known, conversation, records, lambda r: r.get("question"), f"{where}: {key}"):
            grade = record.get("grade")
            if not isinstance(grade, bool):
                raise DataError(f"{at}: field grade: expected true or false, found {grade!r}")
            rows.append(make_row(qid, record.get("category"), record.get("answer"), [grade], known, at))
    return Reading(rows, {"label": "Zep's grade (one judgment)", "naming": "LoCoMo's codes"})


def zep_responses_rows(document: Any, where: str) -> Reading:
    raise DataError(
        f"{where}: field grade: expected a judgment on each answer, found Zep's responses (answers and duration_ms, "
        "no grade); import zep_locomo_grades.json from the same folder, which holds these answers graded"
    )


def _conversation_and_position(query_id: Any, known: Locomo, at: str) -> tuple[str, int]:
    conversation, _, tail = str(query_id).rpartition("_q")
    if conversation not in known.order or not tail.isdigit():
        raise DataError(f"{at}: field query_id: expected <LoCoMo sample id>_q<i> (e.g. conv-26_q0), found {query_id!r}")
    return conversation, int(tail)


def omb_rows(document: Any, where: str) -> Reading:
    """The i of `conv-26_q<i>` counts the conversation's scored questions (the benchmark leaves category 5 out);
    each row's query must be that question's text."""
    known = locomo()
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, list):
        raise DataError(f"{where}: field results: expected the Open Memory Benchmark's list of query results")
    rows: list[Row] = []
    named: list[tuple[int, str, str]] = []
    for i, record in enumerate(results):
        at = f"{where}: results[{i}]"
        if not isinstance(record, dict) or not isinstance(record.get("correct"), bool):
            raise DataError(f"{at}: field correct: expected true or false, found {str(record)[:60]!r}")
        conversation, position = _conversation_and_position(record.get("query_id"), known, at)
        scored = known.scored(conversation)
        if position >= len(scored) or known.text(scored[position]) != str(record.get("query", "")).strip():
            expected = known.text(scored[position])[:50] if position < len(scored) else "(past the end)"
            raise DataError(f"{at}: field query: expected {expected!r}, found {str(record.get('query'))[:50]!r}")
        tokens, ms = record.get("context_tokens"), record.get("retrieve_time_ms")
        row = make_row(
            scored[position],
            None,
            record.get("answer"),
            [record["correct"]],
            known,
            at,
            retrieved_tokens=tokens if isinstance(tokens, int) else None,
            retrieve_ms=float(ms) if isinstance(ms, int | float) else None,
        )
        rows.append(row)
        name = (record.get("meta") or {}).get("category") if isinstance(record.get("meta"), dict) else None
        if isinstance(name, str):
            named.append((row.code, name, f"{at}.meta"))
    _check_omb_totals(document, rows, where)
    stated = {"label": "the benchmark's judge (one judgment)", "naming": naming_of(named, where)}
    for field, fact in (("answer_llm", "answer_model"), ("judge_llm", "judge_model")):
        if isinstance(document.get(field), str):
            stated[fact] = document[field]
    return Reading(rows, stated)


def _check_omb_totals(document: dict[str, Any], rows: list[Row], where: str) -> None:
    right = sum(r.votes[0] for r in rows)
    checks = (("total_queries", len(rows)), ("correct", right))
    for name, value in checks:
        if document.get(name) is not None and document[name] != value:
            raise DataError(f"{where}: field {name}: expected {value} (the rows), found {document[name]!r}")
    stated = document.get("accuracy")
    if stated is not None and rows and not math.isclose(float(stated), right / len(rows), abs_tol=5e-5):
        raise DataError(f"{where}: field accuracy: expected {right / len(rows):.6f} (the rows), found {stated!r}")


# ----------------------------------------------------------------------------------------------------- detection

# Each format's shape as checks in order, each (field, test): a document fits the format when every test passes; the
# closest format to a document that fits none is the one passing the most checks before its first failure.
Check = tuple[str, Callable[[Any], bool]]


def _first_records(document: Any) -> list[Any]:
    if isinstance(document, dict):
        lists = [v for v in document.values() if isinstance(v, list) and v]
        return lists[0] if lists else []
    return []


def _first_record(document: Any) -> dict[str, Any]:
    records = _first_records(document)
    return records[0] if records and isinstance(records[0], dict) else {}


def _omb_first(document: Any) -> dict[str, Any]:
    results = document.get("results") if isinstance(document, dict) else None
    return results[0] if isinstance(results, list) and results and isinstance(results[0], dict) else {}


SHAPES: dict[str, tuple[Check, ...]] = {
    "eval-results": (
        ("(an object)", lambda d: isinstance(d, dict)),
        ("detailed_results", lambda d: isinstance(d.get("detailed_results"), dict)),
    ),
    "omb": (
        ("(an object)", lambda d: isinstance(d, dict)),
        ("results", lambda d: isinstance(d.get("results"), list)),
        ("results[0].query_id", lambda d: "query_id" in _omb_first(d)),
    ),
    "zep-grades": (
        ("(an object)", lambda d: isinstance(d, dict) and bool(d)),
        (f"{ZEP_KEY}<i> keys", lambda d: all(str(k).startswith(ZEP_KEY) for k in d)),
        ("grade", lambda d: "grade" in _first_record(d)),
    ),
    "zep-responses": (
        ("(an object)", lambda d: isinstance(d, dict) and bool(d)),
        (f"{ZEP_KEY}<i> keys", lambda d: all(str(k).startswith(ZEP_KEY) for k in d)),
        ("duration_ms", lambda d: "duration_ms" in _first_record(d)),
    ),
    "mem0": (
        ("(an object)", lambda d: isinstance(d, dict) and bool(d)),
        ("lists of records", lambda d: all(isinstance(v, list) for v in d.values())),
        ("llm_score", lambda d: "llm_score" in _first_record(d)),
    ),
    "longmemeval": (
        ("(a list of lines)", lambda d: isinstance(d, list) and bool(d)),
        ("question_id", lambda d: "question_id" in d[0]),
        ("autoeval_label", lambda d: "autoeval_label" in d[0]),
    ),
    "longmemeval-hypotheses": (
        ("(a list of lines)", lambda d: isinstance(d, list) and bool(d)),
        ("question_id", lambda d: "question_id" in d[0]),
        ("hypothesis", lambda d: "hypothesis" in d[0]),
    ),
    "locomo": (
        ("(a list of samples)", lambda d: isinstance(d, list)),
        ("qa", lambda d: bool(d) and isinstance(d[0], dict) and isinstance(d[0].get("qa"), list)),
    ),
}


def detect(document: Any, where: str) -> str:
    """The one format whose shape the document fits; else one line naming the closest and its first misfit."""
    passed: dict[str, int] = {}
    for fmt, checks in SHAPES.items():
        passed[fmt] = next((n for n, (_, test) in enumerate(checks) if not _safe(test, document)), len(checks))
        if passed[fmt] == len(checks):
            return fmt
    closest = max(passed, key=lambda f: passed[f])
    field = SHAPES[closest][passed[closest]][0]
    raise DataError(
        f"{where}: expected a results file in a known format, found one that fits none: closest {closest}, whose "
        f"field {field} did not fit (give --format to see the reader's own complaint)"
    )


def _safe(test: Callable[[Any], bool], document: Any) -> bool:
    try:
        return bool(test(document))
    except (AttributeError, TypeError, KeyError, IndexError):
        return False
