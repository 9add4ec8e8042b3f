"""The slices the article evaluates on, built from the pinned data by rule (no hard-coded id lists).

A slice is the ordered messages a system ingests, the questions asked about them, and the checkpoints (session
numbers) after whose last message questions are asked. Message times come from the LoCoMo session date plus the turn
index in seconds, so two turns of a session never share a timestamp and ingestion order is the time order.

- dev: conv-26 sessions 1-4; scored LoCoMo questions (categories 1-4) whose evidence lies inside them.
- stress: conv-26 sessions 1-10; checkpoints after sessions 4, 7, 10; a question is asked at the first checkpoint
  after its evidence is in, and again at every later one.
- dev_updates: dev + update set 1 (one pseudo-session per update message, in date order) and its 30 questions.
- dev_updates2: dev_updates' messages + update set 2's 28 messages; only set 2's 20 questions are asked.
- heldout:<conv>: a whole LoCoMo conversation the frozen configuration was not tuned on (every conversation but
  the dev conversation conv-26); adversarial questions kept but unscored. The article held out conv-30/41/42/43.
- locomo:<conv>: a whole LoCoMo conversation as the field evaluates it (any of the ten, conv-26 included), one
  checkpoint after its last session; categories 1-4 scored, adversarial kept for the arms that opt in.
- locomo: the ten `locomo:<conv>` slices pooled. A pooled slice has `parts`: each part is ingested into its own
  fresh store and asked its own questions; the answers are pooled into one result.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from bench.data import files as data
from bench.data.datasets import FAMILY_MARK, dataset_for_slice, slice_patterns
from bench.data.datasets.locomo import LOCOMO
from bench.errors import ConfigError, DataError
from bench.vocab import (
    DEV_CONVERSATION,
    HELDOUT_CONVERSATIONS,
    LOCOMO_POOLED,
    TUNED_ON,
    heldout_conversation,
    heldout_slice,
    heldout_slices,
    is_heldout,
    is_locomo_conversation,
    locomo_conversation_of,
    locomo_slice,
)

# LoCoMo's category codes as its evaluation code reads them (category 3's gold keeps its first ";" part, etc.).
CATEGORY_NAMES = LOCOMO.codes
ADVERSARIAL = 5
SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DEV_SESSIONS = 4
STRESS_SESSIONS = 10
STRESS_CHECKPOINTS = (4, 7, 10)
FIXED_SLICES = ("dev", "stress", "dev_updates", "dev_updates2")
# The article's slices; `slice_names()` adds every LoCoMo conversation and the pooled `locomo`.
SLICE_NAMES = FIXED_SLICES + tuple(heldout_slices())

_EVIDENCE_ID = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class SliceMessage:
    id: str
    conversation: str
    session: int
    index: int
    speaker: str
    text: str
    session_date: str
    timestamp: datetime
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SliceQuestion:
    id: str
    conversation: str
    question: str
    gold: Any
    category: int
    category_name: str
    evidence: tuple[str, ...]
    scored: bool
    asked_at: tuple[int, ...]
    tier: str | None = None
    expected: str | None = None
    type: str | None = None
    # When the question is asked, as the data writes it (LongMemEval's question_date); None: after the last message.
    asked_on: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Slice:
    name: str
    conversation: str
    speakers: tuple[str, ...]
    messages: tuple[SliceMessage, ...]
    questions: tuple[SliceQuestion, ...]
    checkpoints: tuple[int, ...]
    sources: tuple[str, ...]
    # A pooled slice (e.g. `locomo`) is its parts, each run on a fresh store; a plain slice has none.
    parts: tuple[Slice, ...] = ()
    # What the slice records about itself beyond its content, e.g. {"tuned_on": ["conv-26"]} on a held-out slice.
    notes: dict[str, Any] = field(default_factory=dict, compare=False)

    def runs(self) -> tuple[Slice, ...]:
        """The slices a run ingests one by one, each into its own store: the parts, or the slice itself."""
        return self.parts or (self,)

    @property
    def scored_questions(self) -> tuple[SliceQuestion, ...]:
        return tuple(q for q in self.questions if q.scored)

    def questions_at(self, checkpoint: int) -> tuple[SliceQuestion, ...]:
        return tuple(q for q in self.questions if checkpoint in q.asked_at)

    def last_message_of(self, session: int) -> SliceMessage:
        return [m for m in self.messages if m.session == session][-1]

    @property
    def dataset_sha256(self) -> str:
        """One hash over the data files this slice was built from (for provenance); a slice read from a file
        outside data/ (LongMemEval) records that file's own hash in its notes."""
        if not self.sources and "file_sha256" in self.notes:
            return str(self.notes["file_sha256"])
        digest = hashlib.sha256()
        for relative in sorted(self.sources):
            digest.update(f"{relative}:{data.file_sha256(relative)}\n".encode())
        return digest.hexdigest()

    def summary(self) -> dict[str, Any]:
        """Counts from the data: messages, scored questions per category and the unscored ones (adversarial)."""
        by_category = Counter(q.category_name for q in self.scored_questions)
        unscored = Counter(q.category_name for q in self.questions if not q.scored)
        summary: dict[str, Any] = {
            "name": self.name,
            "messages": len(self.messages),
            "questions": len(self.scored_questions),
            "unscored": len(self.questions) - len(self.scored_questions),
            "by_category": dict(sorted(by_category.items())),
            "checkpoints": list(self.checkpoints),
        }
        if unscored:
            summary["unscored_by_category"] = dict(sorted(unscored.items()))
        if self.parts:
            summary["parts"] = [part.name for part in self.parts]
        return summary | self.notes


def parse_session_date(value: str, where: str) -> datetime:
    try:
        return datetime.strptime(value.strip(), SESSION_DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise DataError(f"{where}: expected a date like '1:56 pm on 8 May, 2023'; found {value!r}") from None


def _session_numbers(conversation: dict[str, Any]) -> list[int]:
    # LoCoMo names sessions "session_<n>" next to "session_<n>_date_time"; the set of n varies per conversation.
    numbers = [int(m[1]) for key in conversation if (m := re.fullmatch(r"session_(\d+)", key))]
    return sorted(numbers)


def _locomo_messages(conv: dict[str, Any], last_session: int | None = None) -> list[SliceMessage]:
    sample_id = conv["sample_id"]
    body = conv["conversation"]
    messages = []
    for session in _session_numbers(body):
        if last_session is not None and session > last_session:
            break
        session_date = body.get(f"session_{session}_date_time")
        if session_date is None:
            raise DataError(f"data/{data.LOCOMO}: expected session_{session}_date_time in {sample_id}; found none")
        start = parse_session_date(session_date, f"data/{data.LOCOMO} {sample_id} session_{session}_date_time")
        for index, turn in enumerate(body[f"session_{session}"]):
            extra = {k: v for k, v in turn.items() if k not in ("speaker", "dia_id", "text")}
            messages.append(
                SliceMessage(
                    id=turn["dia_id"],
                    conversation=sample_id,
                    session=session,
                    index=index,
                    speaker=turn["speaker"],
                    text=turn["text"],
                    session_date=session_date,
                    timestamp=start + timedelta(seconds=index),
                    extra=extra,
                )
            )
    return messages


def _evidence_sessions(evidence: list[str]) -> list[int]:
    # Some LoCoMo evidence strings hold several ids ("D8:6; D9:17"); every id found counts.
    return [int(m[1]) for item in evidence for m in _EVIDENCE_ID.finditer(str(item))]


def _is_scored(qa: dict[str, Any]) -> bool:
    return qa.get("category") != ADVERSARIAL and "answer" in qa


def _locomo_question(sample_id: str, position: int, qa: dict[str, Any], asked_at: tuple[int, ...]) -> SliceQuestion:
    category = qa["category"]  # 1-5: bench.data.files checked every question's category on load
    extra = {k: v for k, v in qa.items() if k not in ("question", "answer", "evidence", "category")}
    return SliceQuestion(
        id=f"{sample_id}:{position}",
        conversation=sample_id,
        question=qa["question"],
        gold=qa.get("answer"),
        category=category,
        category_name=CATEGORY_NAMES[category],
        evidence=tuple(str(e) for e in qa.get("evidence", [])),
        scored=_is_scored(qa),
        asked_at=asked_at,
        extra=extra,
    )


def _questions_inside(conv: dict[str, Any], last_session: int, checkpoints: tuple[int, ...]) -> list[SliceQuestion]:
    """Scored questions whose evidence lies in sessions 1..last_session, each asked at every checkpoint after it."""
    questions = []
    for position, qa in enumerate(conv["qa"]):
        sessions = _evidence_sessions(qa.get("evidence", []))
        if not _is_scored(qa) or not sessions or max(sessions) > last_session:
            continue
        asked_at = tuple(c for c in checkpoints if c >= max(sessions))
        questions.append(_locomo_question(conv["sample_id"], position, qa, asked_at))
    return questions


def _speakers(conv: dict[str, Any]) -> tuple[str, ...]:
    body = conv["conversation"]
    return (body["speaker_a"], body["speaker_b"])


def _conv26_window(name: str, last_session: int, checkpoints: tuple[int, ...]) -> Slice:
    conv = data.locomo_conversation(DEV_CONVERSATION)
    return Slice(
        name=name,
        conversation=DEV_CONVERSATION,
        speakers=_speakers(conv),
        messages=tuple(_locomo_messages(conv, last_session)),
        questions=tuple(_questions_inside(conv, last_session, checkpoints)),
        checkpoints=checkpoints,
        sources=(data.LOCOMO,),
    )


def _dev() -> Slice:
    return _conv26_window("dev", DEV_SESSIONS, (DEV_SESSIONS,))


def _stress() -> Slice:
    return _conv26_window("stress", STRESS_SESSIONS, STRESS_CHECKPOINTS)


def _pseudo_sessions(raw_messages: list[dict[str, Any]], first_session: int, where: str) -> list[SliceMessage]:
    """One pseudo-session per appended message, in date order (stable for equal dates)."""
    dated = [(parse_session_date(m["session_date"], f"{where} {m['id']}"), m) for m in raw_messages]
    dated.sort(key=lambda pair: pair[0])
    messages = []
    for offset, (when, raw) in enumerate(dated):
        extra = {k: v for k, v in raw.items() if k not in ("id", "speaker", "text", "session_date")}
        messages.append(
            SliceMessage(
                id=raw["id"],
                conversation=DEV_CONVERSATION,
                session=first_session + offset,
                index=0,
                speaker=raw["speaker"],
                text=raw["text"],
                session_date=raw["session_date"],
                timestamp=when,
                extra=extra,
            )
        )
    return messages


def _set1_messages() -> list[SliceMessage]:
    items = data.load_update_set1()["items"]
    return _pseudo_sessions([item["update"] for item in items], DEV_SESSIONS + 1, f"data/{data.UPDATE_SET_1}")


def _dev_updates() -> Slice:
    dev = _dev()
    update_messages = _set1_messages()
    last = update_messages[-1].session
    locomo = [replace(q, asked_at=(last,)) for q in dev.questions]
    updates = [
        SliceQuestion(
            id=item["update"]["id"],
            conversation=DEV_CONVERSATION,
            question=item["question"],
            gold=item["gold"],
            category=0,
            category_name="update",
            evidence=(item["update"]["id"],),
            scored=True,
            asked_at=(last,),
            tier=item["tier"],
            expected=item["expected"],
            extra={"item": item["id"], "original": item["original"]},
        )
        for item in data.load_update_set1()["items"]
    ]
    return Slice(
        name="dev_updates",
        conversation=DEV_CONVERSATION,
        speakers=dev.speakers,
        messages=dev.messages + tuple(update_messages),
        questions=tuple(locomo + updates),
        checkpoints=(last,),
        sources=(data.LOCOMO, data.UPDATE_SET_1),
    )


def _dev_updates2() -> Slice:
    dev = _dev()
    set1 = _set1_messages()
    set2_raw = data.load_update_set2()
    set2 = _pseudo_sessions(set2_raw["messages"], set1[-1].session + 1, f"data/{data.UPDATE_SET_2}")
    last = set2[-1].session
    questions = []
    for raw in set2_raw["questions"]:
        evidence = raw.get("evidence")
        questions.append(
            SliceQuestion(
                id=f"U2:{raw['id']}",
                conversation=DEV_CONVERSATION,
                question=raw["question"],
                gold=raw["gold"],
                category=0,
                category_name="update2",
                evidence=(evidence,) if isinstance(evidence, str) else tuple(evidence or ()),
                scored=True,
                asked_at=(last,),
                type=raw.get("type"),
                extra={k: v for k, v in raw.items() if k not in ("id", "question", "gold", "evidence", "type")},
            )
        )
    return Slice(
        name="dev_updates2",
        conversation=DEV_CONVERSATION,
        speakers=dev.speakers,
        messages=dev.messages + tuple(set1) + tuple(set2),
        questions=tuple(questions),
        checkpoints=(last,),
        sources=(data.LOCOMO, data.UPDATE_SET_1, data.UPDATE_SET_2),
    )


def _whole_conversation(name: str, sample_id: str, notes: dict[str, Any] | None = None) -> Slice:
    """Every session of one conversation, every question asked once after the last session."""
    conv = data.locomo_conversation(sample_id)
    messages = _locomo_messages(conv)
    last = messages[-1].session
    questions = [_locomo_question(sample_id, position, qa, (last,)) for position, qa in enumerate(conv["qa"])]
    return Slice(
        name=name,
        conversation=sample_id,
        speakers=_speakers(conv),
        messages=tuple(messages),
        questions=tuple(questions),
        checkpoints=(last,),
        sources=(data.LOCOMO,),
        notes=notes or {},
    )


def locomo_conversations() -> tuple[str, ...]:
    """Every LoCoMo conversation id, in the file's order."""
    return tuple(conv["sample_id"] for conv in data.load_locomo())


def heldout_conversations() -> tuple[str, ...]:
    """The conversations a held-out slice may name: every one the frozen configuration was not tuned on."""
    return tuple(c for c in locomo_conversations() if c not in TUNED_ON)


# What `slices` says about each slice in one line. A checkpoint is the session after which the slice's questions are
# asked (the store holds everything up to it); "stress" asks at three of them.
SLICE_DESCRIPTIONS = {
    "dev": f"{DEV_CONVERSATION}, first {DEV_SESSIONS} sessions: the development slice (the article's first table)",
    "stress": f"{DEV_CONVERSATION}, all {STRESS_SESSIONS} sessions, questions asked after sessions "
    + ", ".join(map(str, STRESS_CHECKPOINTS)),
    "dev_updates": "dev plus update set 1's messages (facts that later change) and its questions",
    "dev_updates2": "dev_updates plus update set 2's chains of changes and its point-in-time questions",
}


def describe_slice(name: str) -> str:
    """One line on what a slice holds (for `slices`)."""
    if name in SLICE_DESCRIPTIONS:
        return SLICE_DESCRIPTIONS[name]
    if is_heldout(name):
        return f"held-out test conversation {heldout_conversation(name)}, whole (never used for tuning)"
    if is_locomo_conversation(name):
        return f"LoCoMo conversation {locomo_conversation_of(name)}, whole"
    if name == LOCOMO_POOLED:
        return "all ten LoCoMo conversations pooled, each on a fresh store"
    return dataset_for_slice(name).description


def slice_names() -> tuple[str, ...]:
    """Every slice `slices` lists: the article's, one `locomo:<conv>` per conversation and the pooled `locomo`.
    (`heldout:<conv>` is accepted for every conversation in `heldout_conversations()`; only the article's four are
    listed, since the others hold the same content as their `locomo:<conv>` slice.) Then every other slice a
    registered dataset declares by name (an installed package's), after these; families (`longmemeval:<split>[/<subset>]`)
    are not listed."""
    listed = SLICE_NAMES + tuple(locomo_slice(c) for c in locomo_conversations()) + (LOCOMO_POOLED,)
    others = tuple(p for p in slice_patterns() if FAMILY_MARK not in p and p not in listed)
    return listed + others


def _heldout(sample_id: str) -> Slice:
    notes = {"tuned_on": list(TUNED_ON), "article_heldout": sample_id in HELDOUT_CONVERSATIONS}
    return _whole_conversation(heldout_slice(sample_id), sample_id, notes)


def _locomo_pooled() -> Slice:
    parts = tuple(_whole_conversation(locomo_slice(c), c) for c in locomo_conversations())
    return pooled(LOCOMO_POOLED, parts)


def pooled(name: str, parts: tuple[Slice, ...], notes: dict[str, Any] | None = None) -> Slice:
    """One slice made of independent parts: messages and questions side by side, each part run on its own store."""
    return Slice(
        name=name,
        conversation=name,
        speakers=(),
        messages=tuple(m for part in parts for m in part.messages),
        questions=tuple(q for part in parts for q in part.questions),
        checkpoints=(),
        sources=tuple(dict.fromkeys(source for part in parts for source in part.sources)),
        parts=parts,
        notes=notes or {},
    )


def _unknown_conversation(name: str, sample_id: str, accepted: tuple[str, ...]) -> DataError:
    return DataError(
        f"slice {name!r}: expected a conversation of data/{data.LOCOMO} ({', '.join(accepted)}); found {sample_id!r}"
    )


def load_slice(name: str) -> Slice:
    """Build a slice by name, through the dataset that declares it (`bench.data.datasets`); an unknown name raises a
    one-line error listing every declared slice."""
    dataset = dataset_for_slice(name)
    if dataset.reread:  # data outside data/ that may change between loads (LongMemEval's folder)
        return dataset.load(name)
    return _build_slice(name, str(data.data_dir()))


@cache
def _build_slice(name: str, data_root: str) -> Slice:
    # data_root is part of the cache key so a test pointing ENGRAM_DATA_DIR elsewhere gets a fresh build.
    return dataset_for_slice(name).load(name)


def build_locomo(name: str) -> Slice:
    """A slice of LoCoMo (dataset `locomo`): dev, stress, heldout:<conv>, locomo:<conv> or the pooled locomo."""
    if name == "dev":
        return _dev()
    if name == "stress":
        return _stress()
    if is_heldout(name):
        sample_id = heldout_conversation(name)
        if sample_id in TUNED_ON:
            raise DataError(
                f"slice {name!r}: expected a conversation the frozen configuration was not tuned on; "
                f"found {sample_id}, the dev conversation (use locomo:{sample_id} to evaluate it whole)"
            )
        if sample_id not in heldout_conversations():
            raise _unknown_conversation(name, sample_id, heldout_conversations())
        return _heldout(sample_id)
    if is_locomo_conversation(name):
        sample_id = locomo_conversation_of(name)
        if sample_id not in locomo_conversations():
            raise _unknown_conversation(name, sample_id, locomo_conversations())
        return _whole_conversation(name, sample_id)
    if name == LOCOMO_POOLED:
        return _locomo_pooled()
    raise DataError(f"slice {name!r}: expected a LoCoMo slice (dev, stress, heldout:<conv>, locomo:<conv>, locomo)")


def build_update_set(name: str) -> Slice:
    """A slice of the update sets (datasets `update-set-1`, `update-set-2`): dev_updates or dev_updates2."""
    if name == "dev_updates":
        return _dev_updates()
    if name == "dev_updates2":
        return _dev_updates2()
    raise DataError(f"slice {name!r}: expected dev_updates or dev_updates2")


def first_messages_of(whole: Slice, messages: int) -> Slice:
    """`whole` cut to its first `messages` messages, every question asked once, after the last of them (`run
    --messages N`: a run small enough for a small local model on two cores, e.g. a foreign library that calls its
    model for every write). The questions keep their gold answers, so scores are computed, on far less evidence."""
    if whole.parts:
        raise ConfigError(
            f"--messages: expected a single-conversation slice, found {whole.name!r} pooled from {len(whole.parts)} parts"
        )
    if isinstance(messages, bool) or not isinstance(messages, int) or messages < 1:
        raise ConfigError(f"--messages: expected a positive number of messages, found {messages!r}")
    kept = whole.messages[:messages]
    # The checkpoint is the session of the last kept message, whose last kept message is that message itself.
    last = kept[-1].session
    questions = tuple(replace(q, asked_at=(last,)) for q in whole.questions)
    return replace(whole, messages=kept, questions=questions, checkpoints=(last,))
