"""LongMemEval's splits as slices: `--slice longmemeval:<split>[/<subset>]`.

LongMemEval (Wu et al., ICLR 2025; github.com/xiaowu0162/LongMemEval, MIT) is one JSON list per split, 500
questions each, every question with its own haystack:

    question_id            str; an id ending in "_abs" is an abstention question (the answer is not in the history)
    question_type          single-session-user | single-session-assistant | single-session-preference |
                           multi-session | temporal-reasoning | knowledge-update
    question, answer       the question and its gold answer (for a preference question, a rubric)
    question_date          when the question is asked, e.g. "2023/05/30 (Tue) 23:40"
    haystack_session_ids   one id per session
    haystack_dates         one date per session, in the same format
    haystack_sessions      one list of turns per session: {"role": "user"|"assistant", "content": str,
                           "has_answer": true on the turns that hold the evidence (absent otherwise)}
    answer_session_ids     the sessions that hold the evidence

Splits (`SPLITS`): `oracle` (only the evidence sessions; 10,960 turns) is shipped in `data/longmemeval/` and
verified against data/SOURCES.md like every data file. `s` (about 40 sessions a question) and `m` (about 500) are
brought by the user: the file in `$ENGRAM_LONGMEMEVAL_DIR` (default `data/longmemeval/`) under its published name
must have one of the sha256s in `PUBLISHED`, or the slice is refused in one line, so every `s` or `m` result was
computed on the published bytes. Subsets (`SUBSETS`): a question type (`longmemeval:oracle/temporal-reasoning`),
`abstention` (the `_abs` questions) or `sample` (the first two questions of each type, in file order).

Each entry becomes one part of a pooled slice (as the ten LoCoMo conversations are parts of `locomo`): its sessions
in the file's order are sessions 1..n, each turn a message `<session id>:<turn index>` timed at its session's date
plus the turn index in seconds (so a session's date is its messages' time); the question is asked once, after the
last session, as of its `question_date` (`SliceQuestion.asked_on`). Its category is its `question_type`; the
evidence is the turns marked `has_answer` (turn-level recall) and `answer_session_ids` (session-level recall, in the
question's `extra`); abstention is recorded in `extra` too. A missing or malformed field is one DataError line
naming the file and field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import settings
from bench.data import files as data
from bench.data.datasets.longmemeval import LONGMEMEVAL
from bench.data.datasets.longmemeval import PREFIX as LONGMEMEVAL_PREFIX
from bench.data.slices import Slice, SliceMessage, SliceQuestion, pooled
from bench.errors import DataError

DIR_ENV = settings.LONGMEMEVAL
QUESTION_TYPES = LONGMEMEVAL.category_names  # declared by the dataset (bench.data.datasets.longmemeval)
ROLES = ("user", "assistant")
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
ABSTENTION_SUFFIX = "_abs"
ORACLE = "oracle"
SPLITS = (ORACLE, "s", "m")
#: The user-supplied splits: file name in $ENGRAM_LONGMEMEVAL_DIR -> the sha256 of its published bytes. The cleaned
#: release (Hugging Face `xiaowu0162/longmemeval-cleaned`) as pinned by infolang-bench 0.1.0's downloader.
PUBLISHED: dict[str, dict[str, str]] = {
    "s": {"longmemeval_s_cleaned.json": "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"},
    "m": {"longmemeval_m_cleaned.json": "9d79e5524794a2e6900a3aa9cb7d9152c5a3e8319c9a87c25494ba1eacee495f"},
}
ABSTENTION = "abstention"
SAMPLE = "sample"
SAMPLE_PER_TYPE = 2
SUBSETS = (*QUESTION_TYPES, ABSTENTION, SAMPLE)


def is_abstention(question_id: str) -> bool:
    """LongMemEval's rule (its evaluate_qa.py): an abstention question has `_abs` in its id."""
    return ABSTENTION_SUFFIX in question_id


def longmemeval_dir() -> Path:
    return settings.current().longmemeval_dir


def split_and_subset(name: str) -> tuple[str, str | None]:
    """`longmemeval:oracle/temporal-reasoning` -> ("oracle", "temporal-reasoning"); DataError for any other name."""
    split, _, subset = name.removeprefix(LONGMEMEVAL_PREFIX).partition("/")
    if split not in SPLITS or (subset and subset not in SUBSETS) or (not subset and name.endswith("/")):
        raise DataError(
            f"slice {name!r}: expected longmemeval:<split>[/<subset>] with split one of {', '.join(SPLITS)} and "
            f"subset one of {', '.join(SUBSETS)}"
        )
    return split, subset or None


def _supplied_file(split: str) -> tuple[Path, bytes, str]:
    """The user's `s` or `m` file, its bytes and their sha256, refused unless they are the published ones."""
    folder = longmemeval_dir()
    published = PUBLISHED[split]
    present = [folder / file_name for file_name in published if (folder / file_name).is_file()]
    if not present:
        raise DataError(
            f"{folder / next(iter(published))}: expected LongMemEval's {split} split, found no such file; download "
            f"it from Hugging Face xiaowu0162/longmemeval-cleaned and set ${DIR_ENV} to its folder"
        )
    path = present[0]
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != published[path.name]:
        raise DataError(
            f"{path}: expected the published LongMemEval {split} split (sha256 {published[path.name]}), found sha256 "
            f"{digest}; use the unmodified file"
        )
    return path, raw, digest


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


def parse_entries(path: Path, raw: bytes) -> list[dict[str, Any]]:
    try:
        entries = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(entries, list) or not entries:
        raise DataError(f"{path}: expected a non-empty JSON list of questions, found {type(entries).__name__}")
    return entries


def load_longmemeval(name: str) -> Slice:
    """The pooled slice of a split's questions (all, or one subset), one part per question (see the docstring)."""
    split, subset = split_and_subset(name)
    sources: tuple[str, ...] = ()
    digest: str | None = None
    if split == ORACLE:
        relative = f"{data.LONGMEMEVAL_DIR}/longmemeval_oracle.json"
        path, raw, sources = data.data_dir() / relative, data.verified_bytes(relative), (relative,)
    else:
        path, raw, digest = _supplied_file(split)
    parts = parse_split(name, path, parse_entries(path, raw), sources)
    chosen = select(parts, subset)
    notes: dict[str, Any] = {"file": path.name, "split": split, "questions": len(chosen)}
    if subset:
        notes["subset"] = subset
    if digest:  # a file outside data/SOURCES.md: the slice records its hash itself
        notes["file_sha256"] = digest
        chosen = tuple(replace(part, notes={"file_sha256": digest}) for part in chosen)
    return pooled(name, chosen, notes)


def select(parts: tuple[Slice, ...], subset: str | None) -> tuple[Slice, ...]:
    """The parts of one subset, in file order: a question type, the abstention questions, or the sample."""
    if subset is None:
        return parts
    if subset == ABSTENTION:
        return tuple(p for p in parts if is_abstention(question(p).id))
    if subset == SAMPLE:
        taken: dict[str, int] = {}
        kept = []
        for part in parts:
            qtype = question(part).category_name
            if taken.get(qtype, 0) < SAMPLE_PER_TYPE:
                taken[qtype] = taken.get(qtype, 0) + 1
                kept.append(part)
        return tuple(kept)
    return tuple(p for p in parts if question(p).category_name == subset)


def parse_split(name: str, path: Path, entries: list[dict[str, Any]], sources: tuple[str, ...]) -> tuple[Slice, ...]:
    """One part per entry; the first bad field of any entry is one DataError line."""
    f = _Fields(path)
    seen: set[str] = set()
    parts = []
    for i, entry in enumerate(entries):
        part = _part(name, f, entry, f"[{i}]", sources)
        if part.conversation in seen:
            raise DataError(
                f"{path}: field [{i}].question_id: expected each id once, found {part.conversation!r} twice"
            )
        seen.add(part.conversation)
        parts.append(part)
    return tuple(parts)


def _part(name: str, f: _Fields, entry: Any, at: str, sources: tuple[str, ...]) -> Slice:
    path = f.path
    qid = f.get(entry, "question_id", at, (str,), "the question's id")
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
    messages: list[SliceMessage] = []
    evidence: list[str] = []
    for s, (session_id, date, turns) in enumerate(zip(session_ids, dates, sessions, strict=True)):
        messages += _session(f, qid, s, session_id, date, turns, f"{at}.haystack_sessions[{s}]", evidence)
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
        asked_on=asked_on,
        extra={
            "abstention": is_abstention(qid),
            "question_date": asked_on,
            "answer_session_ids": [str(x) for x in answer_sessions],
        },
    )
    return Slice(
        name=f"{name}/{qid}",
        conversation=qid,
        speakers=ROLES,
        messages=tuple(messages),
        questions=(sliced,),
        checkpoints=(last,),
        sources=sources,
    )


def _session(
    f: _Fields, qid: str, s: int, session_id: Any, date: Any, turns: Any, where: str, evidence: list[str]
) -> list[SliceMessage]:
    """One session's turns as messages timed at the session's date (+ the turn index in seconds, to keep order)."""
    path = f.path
    if not isinstance(session_id, str) or not isinstance(date, str):
        raise DataError(
            f"{path}: field {where.replace('haystack_sessions', 'haystack_session_ids')}: expected a "
            "session id and a date text"
        )
    start = f.date(date, where.replace("haystack_sessions", "haystack_dates"))
    if not isinstance(turns, list):
        raise DataError(f"{path}: field {where}: expected a list of turns, found {type(turns).__name__}")
    messages = []
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
    return messages


def session_of(message_id: str) -> str:
    """The LongMemEval session id of a message id `<session id>:<turn index>` (session ids hold no colon)."""
    return message_id.rsplit(":", 1)[0]


def question(part: Slice) -> SliceQuestion:
    """The one question of a LongMemEval part."""
    return part.questions[0]
