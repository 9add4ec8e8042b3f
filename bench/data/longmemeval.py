"""LongMemEval's published JSON as a slice: `--slice longmemeval:<name>` reads `<dir>/<name>.json`.

LongMemEval (Wu et al., 2024; github.com/xiaowu0162/LongMemEval) ships one JSON list per variant
(`longmemeval_s`, `longmemeval_m`, `longmemeval_oracle`). Each entry is one question with its own haystack:

    question_id            str; an id ending in "_abs" is an abstention question (the answer is not in the history)
    question_type          single-session-user | single-session-assistant | single-session-preference |
                           multi-session | temporal-reasoning | knowledge-update
    question, answer       the question and its gold answer
    question_date          when the question is asked, e.g. "2023/05/30 (Tue) 23:40"
    haystack_session_ids   one id per session
    haystack_dates         one date per session, in the same format
    haystack_sessions      one list of turns per session: {"role": "user"|"assistant", "content": str,
                           "has_answer": true on the turns that hold the evidence (absent otherwise)}
    answer_session_ids     the sessions that hold the evidence

Each entry becomes one part of a pooled slice (as the ten LoCoMo conversations are parts of `locomo`): its sessions
in the file's order are sessions 1..n, each turn a message `<session id>:<turn index>` timed at the session's date
plus the turn index in seconds; the question is asked once, after the last session. Its category is its
`question_type`; evidence recall is computed from the `has_answer` turns; abstention is recorded in the question's
`extra`. The data cannot be downloaded here: point `$ENGRAM_LONGMEMEVAL_DIR` at the folder holding the files
(default `data/longmemeval/`). A missing or malformed field is one DataError line naming the file and field.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import settings
from bench.data.datasets.longmemeval import LONGMEMEVAL
from bench.data.datasets.longmemeval import PREFIX as LONGMEMEVAL_PREFIX
from bench.data.slices import Slice, SliceMessage, SliceQuestion, pooled
from bench.errors import DataError

DIR_ENV = settings.LONGMEMEVAL
QUESTION_TYPES = LONGMEMEVAL.category_names  # declared by the dataset (bench.data.datasets.longmemeval)
ROLES = ("user", "assistant")
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
ABSTENTION_SUFFIX = "_abs"


def is_longmemeval(name: str) -> bool:
    return name.startswith(LONGMEMEVAL_PREFIX)


def longmemeval_dir() -> Path:
    return settings.current().longmemeval_dir


def file_for(name: str) -> Path:
    """`longmemeval:longmemeval_s` -> `<dir>/longmemeval_s.json` (or the name as given when it ends in .json)."""
    stem = name.removeprefix(LONGMEMEVAL_PREFIX)
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        raise DataError(f"slice {name!r}: expected longmemeval:<file name in {longmemeval_dir()}>, found {stem!r}")
    return longmemeval_dir() / (stem if stem.endswith(".json") else f"{stem}.json")


class _Fields:
    """One-line errors naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, record: Any, key: str, where: str, kinds: tuple[type, ...], expected: str) -> Any:
        if not isinstance(record, dict):
            raise DataError(f"{self.path}: field {where}: expected an object, found {type(record).__name__}")
        if key not in record:
            raise DataError(f"{self.path}: field {where}.{key} is missing (expected {expected})")
        value = record[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise DataError(f"{self.path}: field {where}.{key}: expected {expected}, found {json.dumps(value)[:60]}")
        return value

    def date(self, value: str, where: str) -> datetime:
        try:
            return datetime.strptime(value.strip(), DATE_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            raise DataError(
                f"{self.path}: field {where}: expected a date like '2023/05/30 (Tue) 23:40', found {value!r}"
            ) from None


def read_entries(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataError(
            f"{path}: expected a LongMemEval file (longmemeval_s / _m / _oracle .json), found none; "
            f"set ${DIR_ENV} to the folder that holds it"
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(raw, list) or not raw:
        raise DataError(f"{path}: expected a non-empty JSON list of questions, found {type(raw).__name__}")
    return raw


def load_longmemeval(name: str) -> Any:
    """The pooled slice of every question in the file, one part per question (see the module docstring)."""
    path = file_for(name)
    f = _Fields(path)
    parts = []
    seen: set[str] = set()
    entries = read_entries(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()  # provenance: the file is not in data/SOURCES.md
    for i, entry in enumerate(entries):
        at = f"[{i}]"
        qid = f.get(entry, "question_id", at, (str,), "the question's id")
        if qid in seen:
            raise DataError(f"{path}: field {at}.question_id: expected each id once, found {qid!r} twice")
        seen.add(qid)
        qtype = f.get(entry, "question_type", at, (str,), " | ".join(QUESTION_TYPES))
        if qtype not in QUESTION_TYPES:
            raise DataError(
                f"{path}: field {at}.question_type: expected one of {', '.join(QUESTION_TYPES)}, found {qtype!r}"
            )
        question = f.get(entry, "question", at, (str,), "the question text")
        gold = f.get(entry, "answer", at, (str, int, float), "the gold answer")
        asked_on = f.get(entry, "question_date", at, (str,), "the date the question is asked")
        f.date(asked_on, f"{at}.question_date")
        session_ids = f.get(entry, "haystack_session_ids", at, (list,), "one id per session")
        dates = f.get(entry, "haystack_dates", at, (list,), "one date per session")
        sessions = f.get(entry, "haystack_sessions", at, (list,), "one list of turns per session")
        answer_sessions = f.get(entry, "answer_session_ids", at, (list,), "the ids of the evidence sessions")
        if not (len(session_ids) == len(dates) == len(sessions)) or not sessions:
            raise DataError(
                f"{path}: field {at}.haystack_sessions: expected as many sessions as haystack_session_ids and "
                f"haystack_dates (at least one), found {len(sessions)}, {len(session_ids)} and {len(dates)}"
            )
        messages = []
        evidence = []
        for s, (session_id, date, turns) in enumerate(zip(session_ids, dates, sessions, strict=True)):
            where = f"{at}.haystack_sessions[{s}]"
            if not isinstance(session_id, str) or not isinstance(date, str):
                raise DataError(f"{path}: field {at}.haystack_session_ids[{s}]: expected a session id and a date text")
            start = f.date(date, f"{at}.haystack_dates[{s}]")
            if not isinstance(turns, list):
                raise DataError(f"{path}: field {where}: expected a list of turns, found {type(turns).__name__}")
            for t, turn in enumerate(turns):
                role = f.get(turn, "role", f"{where}[{t}]", (str,), "user or assistant")
                if role not in ROLES:
                    raise DataError(f"{path}: field {where}[{t}].role: expected user or assistant, found {role!r}")
                content = f.get(turn, "content", f"{where}[{t}]", (str,), "the turn's text")
                marked = turn.get("has_answer", False)
                if not isinstance(marked, bool):
                    raise DataError(f"{path}: field {where}[{t}].has_answer: expected true or false, found {marked!r}")
                message_id = f"{session_id}:{t}"
                if marked:
                    evidence.append(message_id)
                messages.append(
                    SliceMessage(
                        id=message_id,
                        conversation=qid,
                        session=s + 1,
                        index=t,
                        speaker=role,
                        text=content,
                        session_date=date,
                        timestamp=start + timedelta(seconds=t),
                        extra={"session_id": session_id},
                    )
                )
        last = len(sessions)
        sliced = SliceQuestion(
            id=qid,
            conversation=qid,
            question=question,
            gold=gold,
            category=0,
            category_name=qtype,
            evidence=tuple(evidence),
            scored=True,
            asked_at=(last,),
            type=qtype,
            extra={
                "abstention": qid.endswith(ABSTENTION_SUFFIX),
                "question_date": asked_on,
                "answer_session_ids": [str(x) for x in answer_sessions],
            },
        )
        parts.append(
            Slice(
                name=f"{name}/{qid}",
                conversation=qid,
                speakers=ROLES,
                messages=tuple(messages),
                questions=(sliced,),
                checkpoints=(last,),
                sources=(),
                notes={"file_sha256": digest},
            )
        )
    return pooled(name, tuple(parts), {"file": str(path), "file_sha256": digest, "questions": len(parts)})
