"""What every reader of a peer's published LoCoMo results shares: the imported row, what the file states about
itself, LoCoMo's questions in order, and the checks a row passes (its question is LoCoMo's, its category agrees
with LoCoMo's code under the file's naming convention).

LoCoMo's codes are canonical (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). Producers
name them two ways: LoCoMo's own names, or mem0's (`bench.data.datasets.locomo`: 1 single-hop, 3 multi-hop, 4
open-domain). A file that names its categories is read under the convention its rows fit, and that convention is
recorded; a row whose name no convention gives its question's code is one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.analysis.coverage import coverage_of as covered_of
from bench.data import files as data
from bench.data.datasets.locomo import LOCOMO
from bench.errors import DataError
from bench.results.schema import LOCOMO_CATEGORY_NAMES, Answer

# Naming conventions a file's category names may follow: LoCoMo's own names, then each numbering LoCoMo declares.
NAMINGS: dict[str, dict[int, str]] = {
    "locomo": dict(LOCOMO_CATEGORY_NAMES),
    **{name: dict(labels) for name, labels in LOCOMO.numberings.items()},
}


@dataclass(frozen=True)
class Row:
    """One imported question: our id, LoCoMo's category code, the question and gold as LoCoMo has them, the
    peer's answer, and one label per judgment run (True = judged correct)."""

    question_id: str
    conversation: str
    code: int
    question: str
    gold: str
    answer: str
    votes: tuple[bool, ...]
    f1: float | None = None  # LoCoMo's own output: the F1 the file states (checked against ours)
    retrieved_tokens: int | None = None  # what the peer put in front of its answerer, when the file says
    retrieve_ms: float | None = None  # the peer's retrieval latency for this question, when the file says


@dataclass(frozen=True)
class Reading:
    """A file's rows and what the file states about itself (answer and judge model, how its `correct` counts,
    its category naming), each fact as a short phrase for provenance and tables."""

    rows: list[Row]
    stated: dict[str, str] = field(default_factory=dict)
    format: str = ""  # the reader's name, set by whoever chose the reader
    answers: list[Answer] | None = None  # a benchmark other than LoCoMo: the answers themselves (rows stay empty)
    coverage: dict[str, Any] | None = None  # with `answers`: {questions, of, missing, partial} of that benchmark


@dataclass(frozen=True)
class Locomo:
    """LoCoMo's conversations in order and every question by our id (`<sample_id>:<position in qa>`)."""

    order: list[str]
    questions: dict[str, dict[str, Any]]

    def scored(self, conversation: str) -> list[str]:
        """The conversation's scored questions (categories 1-4) in LoCoMo's order: the questions a run that skips
        category 5, as mem0's evaluation does, answers in turn."""
        return [
            q
            for q, entry in self.questions.items()
            if entry["conversation"] == conversation and int(entry["qa"]["category"]) != 5
        ]

    def text(self, qid: str) -> str:
        return str(self.questions[qid]["qa"]["question"]).strip()

    def conversation_of(self, key: Any, where: str) -> str:
        """A conversation given by index (int, or digits as JSON keys are) or by its sample id."""
        if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
            if int(key) < len(self.order):
                return self.order[int(key)]
        elif str(key) in self.order:
            return str(key)
        raise DataError(
            f"{where}: expected a LoCoMo conversation (an index below {len(self.order)} or a sample id), found {key!r}"
        )


def locomo() -> Locomo:
    conversations = data.load_locomo()
    return Locomo(
        [str(c["sample_id"]) for c in conversations],
        {
            f"{c['sample_id']}:{j}": {"qa": qa, "conversation": str(c["sample_id"])}
            for c in conversations
            for j, qa in enumerate(c["qa"])
        },
    )


def make_row(qid: str, category: Any, answer: Any, votes: Sequence[bool], known: Locomo, at: str, **extra: Any) -> Row:
    """A checked row: the question exists, a category code given agrees with LoCoMo's, at least one judgment.
    (A category given by name is checked over the whole file by `naming_of`.)"""
    entry = known.questions.get(qid)
    if entry is None:
        raise DataError(f"{at}: field question_id: expected a LoCoMo question, found {qid!r} (no such question)")
    code = int(entry["qa"]["category"])
    if _is_code(category) and str(category).strip() != str(code):
        raise DataError(f"{at}: field category of {qid}: expected LoCoMo's category {code}, found {category!r}")
    if not votes:
        raise DataError(f"{at}: expected at least one judgment of the answer, found none")
    return Row(
        qid,
        entry["conversation"],
        code,
        str(entry["qa"]["question"]),
        str(entry["qa"].get("answer", entry["qa"].get("adversarial_answer", ""))),
        "" if answer is None else str(answer),
        tuple(votes),
        **extra,
    )


def _is_code(category: Any) -> bool:
    return category is not None and (isinstance(category, int) or str(category).strip().isdigit())


def naming_of(named: Sequence[tuple[int, str, str]], where: str) -> str:
    """The naming convention that gives every (LoCoMo code, name the file gives it, where) its name. None fitting:
    one line at the first row the closest convention contradicts."""
    if not named:
        return "LoCoMo's codes"
    fits = {
        naming: [(code, name, at) for code, name, at in named if labels.get(code) != name.strip().lower()]
        for naming, labels in NAMINGS.items()
    }
    for naming, misfits in fits.items():
        if not misfits:
            return f"{naming}'s names"
    closest = min(fits, key=lambda n: len(fits[n]))
    code, name, at = fits[closest][0]
    raise DataError(
        f"{at}: field category: expected {NAMINGS[closest][code]!r} ({closest}'s name for LoCoMo's code {code}, the "
        f"convention {len(named) - len(fits[closest])} of {len(named)} rows follow), found {name!r}"
    )


def in_order(
    known: Locomo, conversation: str, records: Sequence[Any], text_of: Any, where: str
) -> list[tuple[str, dict[str, Any], str]]:
    """Records without question ids, matched by position among the conversation's scored questions and checked by
    text: the i-th record is the i-th scored question, and must ask what it asks (LoCoMo repeats 11 question texts
    inside a conversation, so text alone cannot key a row). Category-5 records, which some forks keep, are skipped."""
    scored = known.scored(conversation)
    matched: list[tuple[str, dict[str, Any], str]] = []
    for i, record in enumerate(records):
        at = f"{where}[{i}]"
        if not isinstance(record, dict):
            raise DataError(f"{at}: expected a question record (an object), found {str(record)[:60]!r}")
        if str(record.get("category")).strip() == "5":
            continue
        if len(matched) >= len(scored):
            raise DataError(f"{at}: expected at most {len(scored)} scored questions of {conversation}, found more")
        qid = scored[len(matched)]
        text = str(text_of(record)).strip()
        if text != known.text(qid):
            raise DataError(
                f"{at}: field question: expected {conversation}'s scored question {len(matched) + 1} "
                f"{known.text(qid)[:50]!r} ({qid}), found {text[:50]!r}"
            )
        matched.append((qid, record, at))
    return matched


def coverage(rows: Sequence[Row], known: Locomo) -> dict[str, Any]:
    """How much of LoCoMo's scored questions a run answers: {questions, of, missing conversations, partial}."""
    return coverage_of({r.question_id for r in rows if r.code != 5}, known)


def coverage_of(question_ids: set[str], known: Locomo) -> dict[str, Any]:
    """The same from the scored question ids a run holds, by LoCoMo's conversations (the rule: bench.analysis.coverage)."""
    return covered_of(question_ids, {c: known.scored(c) for c in known.order})
