"""The LoCoMo audit's errata as an overlay of LoCoMo's gold (behind `--gold`).

An independent audit (dial481/locomo-audit, `data/locomo-audit/errors.json`) lists 156 problems with LoCoMo's gold
annotations. 57 are `WRONG_CITATION`: the gold answer is right but its evidence ids are not, which matters only to
evidence recall. The other 99 are score-corrupting: the gold answer itself is wrong or disputable, so no system can
be marked right on them against the official gold except by repeating the mistake.

Three golds, each a name a command accepts with `--gold`:

- `official`: LoCoMo as published (the default; nothing changes).
- `audited-exclude`: the 99 score-corrupting questions are dropped; computable for any result, imported ones too,
  since it needs no new label.
- `audited`: the audit's corrected answer replaces the gold of the 99 and its corrected evidence replaces the cited
  evidence of the 57 citation-only entries; LLM-free metrics follow at once, judge labels only after a re-judge.

Question ids: the audit's `locomo_<i>_qa<j>` is conversation i in `locomo10.json` order and position j in its `qa`
list, which is this project's `<sample_id>:<j>` (bench.data.slices).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench.data import files as data
from bench.errors import DataError

ERRATA_FILE = "locomo-audit/errors.json"
OFFICIAL = "official"
AUDITED_EXCLUDE = "audited-exclude"
AUDITED = "audited"
GOLDS = (OFFICIAL, AUDITED_EXCLUDE, AUDITED)
CITATION_ONLY = "WRONG_CITATION"
# LoCoMo's scored categories: the audit's ceiling is over these (adversarial questions have no gold answer).
SCORED_CODES = (1, 2, 3, 4)
_FIELDS = ("question_id", "category", "error_type", "correct_answer")


@dataclass(frozen=True)
class Erratum:
    """One audited question: what the audit found wrong with its gold and what it should have been."""

    question_id: str  # this project's id, `<sample_id>:<position>`
    audit_id: str  # the audit's `locomo_<i>_qa<j>`
    category: int  # LoCoMo's category code
    error_type: str
    golden_answer: str
    correct_answer: str
    cited_evidence: tuple[str, ...]
    correct_evidence: tuple[str, ...]
    reasoning: str

    @property
    def corrupts_score(self) -> bool:
        """Whether the gold answer itself is wrong or disputable (every kind except a wrong citation)."""
        return self.error_type != CITATION_ONLY


@dataclass(frozen=True)
class Errata:
    """Every erratum by this project's question id, and the file it came from."""

    source: str
    sha256: str
    entries: Mapping[str, Erratum]

    @property
    def corrupting(self) -> frozenset[str]:
        return frozenset(q for q, e in self.entries.items() if e.corrupts_score)

    def get(self, question_id: str) -> Erratum | None:
        return self.entries.get(question_id)


def check_gold(name: str, where: str = "--gold") -> str:
    """The gold's name, or a DataError naming the accepted ones."""
    if name not in GOLDS:
        raise DataError(f"{where}: expected one of {', '.join(GOLDS)}, found {name!r}")
    return name


def _locomo_index() -> tuple[list[str], dict[str, int]]:
    """(conversation ids in file order, category code by question id) of the LoCoMo file this repo ships."""
    conversations = data.load_locomo()
    order = [str(c["sample_id"]) for c in conversations]
    codes = {f"{c['sample_id']}:{j}": int(qa["category"]) for c in conversations for j, qa in enumerate(c["qa"])}
    return order, codes


def our_question_id(audit_id: Any, order: list[str], where: str) -> str:
    """`locomo_<i>_qa<j>` -> `<sample_id of conversation i>:<j>`; a malformed id or conversation index is a
    DataError (a question position past the end is caught by the caller, which knows the questions)."""
    parts = str(audit_id).split("_")
    ok = len(parts) == 3 and parts[0] == "locomo" and parts[1].isdigit() and parts[2][:2] == "qa"
    if not ok or not parts[2][2:].isdigit():
        raise DataError(f"{where}: field question_id: expected locomo_<i>_qa<j>, found {audit_id!r}")
    index = int(parts[1])
    if index >= len(order):
        raise DataError(
            f"{where}: field question_id: expected a conversation index below {len(order)}, found {audit_id!r}"
        )
    return f"{order[index]}:{int(parts[2][2:])}"


def _evidence(value: Any, where: str, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: field {name}: expected a list of dialogue ids, found {value!r:.60}")
    return tuple(value)


def parse_errata(document: Any, where: str, sha256: str) -> Errata:
    """Check and index an errata document: a list of objects, each naming a LoCoMo question once, with the category
    LoCoMo gives it. Any problem is one DataError naming the entry."""
    if not isinstance(document, list):
        raise DataError(f"{where}: expected a list of errata objects, found {type(document).__name__}")
    if not document:  # an audit that corrects nothing would silently be the official gold under another name
        raise DataError(f"{where}: expected at least one errata object, found an empty list")
    order, codes = _locomo_index()
    entries: dict[str, Erratum] = {}
    for i, record in enumerate(document):
        at = f"{where}: entry {i}"
        if not isinstance(record, dict) or any(name not in record for name in _FIELDS):
            raise DataError(f"{at}: expected an object with {', '.join(_FIELDS)}, found {str(record)[:80]!r}")
        qid = our_question_id(record["question_id"], order, at)
        if qid not in codes:
            raise DataError(f"{at}: field question_id: expected a LoCoMo question, found {record['question_id']!r}")
        if qid in entries:
            raise DataError(
                f"{at}: field question_id: expected each question once, found {record['question_id']} twice"
            )
        category = record["category"]
        if isinstance(category, bool) or not isinstance(category, int) or category != codes[qid]:
            raise DataError(
                f"{at}: field category of {record['question_id']}: expected LoCoMo's category {codes[qid]}, "
                f"found {category!r}"
            )
        entries[qid] = Erratum(
            question_id=qid,
            audit_id=str(record["question_id"]),
            category=category,
            error_type=str(record["error_type"]),
            golden_answer=str(record.get("golden_answer", "")),
            correct_answer=str(record["correct_answer"]),
            cited_evidence=_evidence(record.get("cited_evidence"), at, "cited_evidence"),
            correct_evidence=_evidence(record.get("correct_evidence"), at, "correct_evidence"),
            reasoning=str(record.get("reasoning", "")),
        )
    return Errata(source=where, sha256=sha256, entries=entries)


@cache
def _shipped(data_root: str) -> Errata:
    # data_root keys the cache so a test pointing ENGRAM_DATA_DIR elsewhere reads its own copy.
    return parse_errata(data.load_json(ERRATA_FILE), f"data/{ERRATA_FILE}", data.file_sha256(ERRATA_FILE))


def load_errata(path: Path | None = None) -> Errata:
    """The shipped errata (hash-checked against data/SOURCES.md), or another errata file of the same format."""
    if path is None:
        return _shipped(str(data.data_dir()))
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{where}: expected a readable errata file, found {exc.strerror or exc}") from exc
    try:
        document = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{where}: expected JSON, found a parse error: {exc}") from exc

    return parse_errata(document, where, hashlib.sha256(raw).hexdigest())


@dataclass(frozen=True)
class Ceiling:
    """The best score a perfect system can get against the official gold in one group of questions: every
    question except the score-corrupting ones."""

    group: str
    n: int
    corrupting: int

    @property
    def value(self) -> float:
        return (self.n - self.corrupting) / self.n if self.n else float("nan")


def official_ceilings(errata: Errata | None = None) -> list[Ceiling]:
    """Per LoCoMo category (1-4, LoCoMo's numbering) and overall: how far a perfect system can score against the
    official gold, computed from the errata and the questions `locomo10.json` holds."""
    errata = errata or load_errata()
    _, codes = _locomo_index()
    scored = Counter(code for code in codes.values() if code in SCORED_CODES)
    wrong = Counter(e.category for e in errata.entries.values() if e.corrupts_score and e.category in SCORED_CODES)
    rows = [Ceiling(str(code), scored[code], wrong[code]) for code in SCORED_CODES]
    rows.append(Ceiling("1-4", sum(scored.values()), sum(wrong.values())))
    return rows
