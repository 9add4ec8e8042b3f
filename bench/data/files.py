"""Pinned data files: locate, verify against data/SOURCES.md, parse.

Every file the harness reads from `data/` is listed in `data/SOURCES.md` with its SHA-256. A file is verified the
first time it is loaded in a process; a missing, altered or malformed file raises `DataError` with one line naming
the file, what was expected and what was found. Nothing is fetched at run time.

LoCoMo is parsed with the stdlib `json` module on purpose: its fields are messy (answers that are ints in some
questions and strings in others, session keys that vary per conversation), and a columnar loader would coerce them.
We keep every field exactly as published.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from bench import settings
from bench.errors import DataError
from bench.vocab import REPO_ROOT

LOCOMO = "locomo/locomo10.json"
UPDATE_SET_1 = "engram-eval-v1/updates_conv26.json"
UPDATE_SET_2 = "engram-eval-v1/updates2_conv26.json"
CONTRADICTION_PAIRS = "engram-eval-v1/contradiction_pairs.jsonl"
SUPERSEDED_LABELS = "engram-eval-v1/slices/conv26_superseded.json"
V1_DEV_SLICE = "engram-eval-v1/slices/conv26_slice.json"
V1_STRESS_SLICE = "engram-eval-v1/slices/conv26_stress.json"
# The v3 paper's per-question labels and aggregate inputs (imported by bench.exchange.importv3).
V3_DIR = "engram-eval-v3"
V3_MANIFEST = f"{V3_DIR}/MANIFEST.tsv"
V3_ARTICLE_NUMBERS = f"{V3_DIR}/article_numbers_v3.tsv"
V3_LONGMEMEVAL = f"{V3_DIR}/longmemeval_tests.json"
V3_WRITE_COSTS = f"{V3_DIR}/supplement/write_costs.json"
# LongMemEval's oracle split (bench.data.longmemeval); its s and m splits are the user's.
LONGMEMEVAL_DIR = "longmemeval"

_SOURCES_ROW = re.compile(r"^\|\s*`(?P<file>[^`]+)`\s*\|.*\|\s*`(?P<sha>[0-9a-f]{64})`\s*\|\s*$")


def data_dir() -> Path:
    """`data/` in the repo, or the folder named by ENGRAM_DATA_DIR (tests point it at a doctored copy)."""
    return settings.current().data_dir


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


@cache
def _expected_hashes(root: Path) -> dict[str, str]:
    sources = root / "SOURCES.md"
    if not sources.is_file():
        raise DataError(f"{_display(sources)}: missing; expected the table of data files with their sha256")
    hashes = {}
    for line in sources.read_text(encoding="utf-8").splitlines():
        match = _SOURCES_ROW.match(line)
        if match:
            hashes[match["file"]] = match["sha"]
    if not hashes:
        raise DataError(f"{_display(sources)}: expected a table of | `file` | ... | `sha256` | rows; found none")
    return hashes


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def _verified_bytes(root: Path, relative: str) -> bytes:
    path = root / relative
    expected = _expected_hashes(root).get(relative)
    if expected is None:
        raise DataError(
            f"{_display(path)}: not listed in data/SOURCES.md; expected every data file to be listed with its sha256"
        )
    if not path.is_file():
        raise DataError(f"{_display(path)}: missing; expected the file with sha256 {expected} (see data/SOURCES.md)")
    raw = path.read_bytes()
    found = hashlib.sha256(raw).hexdigest()
    if found != expected:
        raise DataError(f"{_display(path)}: sha256 mismatch; expected {expected}, found {found}")
    return raw


def file_sha256(relative: str) -> str:
    """The verified SHA-256 of a data file (for provenance)."""
    _verified_bytes(data_dir(), relative)
    return _expected_hashes(data_dir())[relative]


def verified_bytes(relative: str) -> bytes:
    """The bytes of a data file after checking its sha256 against data/SOURCES.md."""
    return _verified_bytes(data_dir(), relative)


def verified_text(relative: str) -> str:
    """A verified data file as UTF-8 text (TSV tables, READMEs)."""
    raw = verified_bytes(relative)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{_display(data_dir() / relative)}: expected UTF-8 text; found {exc.reason}") from None


def load_json(relative: str) -> Any:
    """A verified data file parsed as JSON."""
    raw = _verified_bytes(data_dir(), relative)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{_display(data_dir() / relative)}: expected valid JSON; found a parse error at line {exc.lineno}: {exc.msg}"
        ) from None


def _require(condition: bool, relative: str, expected: str, found: str) -> None:
    if not condition:
        raise DataError(f"{_display(data_dir() / relative)}: expected {expected}; found {found}")


def load_locomo() -> list[dict[str, Any]]:
    """The ten LoCoMo conversations, every field as published, after checking every field the slices read."""
    return _checked_locomo(str(data_dir()))


@cache
def _checked_locomo(root: str) -> list[dict[str, Any]]:
    # root is part of the cache key so a test pointing ENGRAM_DATA_DIR elsewhere is checked afresh.
    conversations = load_json(LOCOMO)
    _require(isinstance(conversations, list), LOCOMO, "a JSON list of conversations", type(conversations).__name__)
    for position, conv in enumerate(conversations):
        ok = isinstance(conv, dict) and {"sample_id", "conversation", "qa"} <= conv.keys()
        _require(
            ok,
            LOCOMO,
            "each conversation to have 'sample_id', 'conversation' and 'qa'",
            f"entry {position} without them",
        )
        _check_locomo_conversation(conv)
    return conversations


_LOCOMO_SESSION = re.compile(r"session_(\d+)")
_LOCOMO_TURN_FIELDS = ("speaker", "dia_id", "text")


def _check_locomo_conversation(conv: dict[str, Any]) -> None:
    """Every field the slices read, present and of the published type; one line naming the first one that is not."""
    sample_id = conv["sample_id"]
    body = conv["conversation"]
    _require(isinstance(body, dict), LOCOMO, f"{sample_id}.conversation to be an object", type(body).__name__)
    for speaker in ("speaker_a", "speaker_b"):
        _require(isinstance(body.get(speaker), str), LOCOMO, f"{sample_id}.conversation.{speaker} (a name)", "none")
    sessions = [key for key in body if _LOCOMO_SESSION.fullmatch(key)]
    _require(bool(sessions), LOCOMO, f"{sample_id}.conversation to hold session_<n> lists", "none")
    for key in sessions:
        turns = body[key]
        _require(isinstance(turns, list), LOCOMO, f"{sample_id}.{key} to be a list of turns", type(turns).__name__)
        _require(isinstance(body.get(f"{key}_date_time"), str), LOCOMO, f"{sample_id}.{key}_date_time (a date)", "none")
        for index, turn in enumerate(turns):
            for name in _LOCOMO_TURN_FIELDS:
                found = turn.get(name) if isinstance(turn, dict) else None
                _require(isinstance(found, str), LOCOMO, f"{sample_id}.{key}[{index}].{name} (a string)", repr(found))
    _require(isinstance(conv["qa"], list), LOCOMO, f"{sample_id}.qa to be a list", type(conv["qa"]).__name__)
    for index, qa in enumerate(conv["qa"]):
        where = f"{sample_id}.qa[{index}]"
        _require(isinstance(qa, dict), LOCOMO, f"{where} to be an object", type(qa).__name__)
        _require(isinstance(qa.get("question"), str), LOCOMO, f"{where}.question (a string)", repr(qa.get("question")))
        _require(
            isinstance(qa.get("evidence", []), list), LOCOMO, f"{where}.evidence (a list)", repr(qa.get("evidence"))
        )
        category = qa.get("category")
        _require(category in (1, 2, 3, 4, 5), LOCOMO, f"{where}.category (1-5)", repr(category))
        gold = "adversarial_answer" if category == 5 else "answer"
        _require(gold in qa, LOCOMO, f"{where}.{gold} (category {category} carries one)", "none")


def locomo_conversation(sample_id: str) -> dict[str, Any]:
    for conv in load_locomo():
        if conv["sample_id"] == sample_id:
            return conv
    known = ", ".join(c["sample_id"] for c in load_locomo())
    raise DataError(f"{_display(data_dir() / LOCOMO)}: expected a conversation '{sample_id}'; found only {known}")


def load_update_set1() -> dict[str, Any]:
    data = load_json(UPDATE_SET_1)
    _require(
        isinstance(data, dict) and isinstance(data.get("items"), list),
        UPDATE_SET_1,
        "an object with an 'items' list",
        "something else",
    )
    for item in data["items"]:
        ok = {"id", "tier", "expected", "original", "update", "question", "gold"} <= item.keys()
        _require(
            ok,
            UPDATE_SET_1,
            "items with id, tier, expected, original, update, question, gold",
            f"item {item.get('id')!r} without them",
        )
    return data


def load_update_set2() -> dict[str, Any]:
    data = load_json(UPDATE_SET_2)
    ok = isinstance(data, dict) and isinstance(data.get("messages"), list) and isinstance(data.get("questions"), list)
    _require(ok, UPDATE_SET_2, "an object with 'messages' and 'questions' lists", "something else")
    return data


def load_contradiction_pairs() -> list[dict[str, Any]]:
    raw = _verified_bytes(data_dir(), CONTRADICTION_PAIRS).decode("utf-8")
    pairs = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            pairs.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{_display(data_dir() / CONTRADICTION_PAIRS)}: expected one JSON object per line; line {number}: {exc.msg}"
            ) from None
    return pairs


def load_superseded_labels() -> dict[str, Any]:
    return load_json(SUPERSEDED_LABELS)


def load_v1_slice_definition(relative: str) -> dict[str, Any]:
    """The original harness's slice files (used to cross-check the slices we build from LoCoMo)."""
    return load_json(relative)
