"""Whether a run retrieved what the recorded run retrieved, for systems whose retrieval the cache cannot replay.

The cache replays model calls. A memory server's search is no model call: a replay runs the server again, and when
it returns other lines than the recording did, every answer built on them misses the cache, silently (a stand-in
computes the miss; a paid model would be called again). So for such systems (`System.REPLAY_CHECKED`: the `http`
and `mcp` arms) the first run keeps the lines each question got in the local cache, beside the calls, under
`retrievals/<key>.json`; every later run of the same arm, settings, stack, slice part, message cut and replicate
compares its lines with them. A difference is a health problem of the run (`extras.health`, the terminal's
warning, `--strict` stops), named with its first question. Questions the record lacks (a wider `--limit`) are added
to it; recorded lines are never replaced, as a cache entry is never replaced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.disk.atomic import write_json
from bench.errors import CorruptEntry
from bench.models.cache import canonical_json, sha256_hex

RETRIEVALS_DIR = "retrievals"
RECORD_FORMAT = "engram-bench-retrievals/1"


@dataclass(frozen=True)
class Comparison:
    """How one part's retrievals compared with the record: how many were compared, how many differed, the first."""

    compared: int = 0
    differing: int = 0
    first: str | None = None  # "question <id> at k=<k>: recorded '...', now '...'"

    def __add__(self, other: Comparison) -> Comparison:
        return Comparison(self.compared + other.compared, self.differing + other.differing, self.first or other.first)


def record_path(cache_dir: Path, identity: Mapping[str, Any]) -> Path:
    """The record of one part of one run: named by everything that decides what its system retrieves."""
    return cache_dir / RETRIEVALS_DIR / f"{sha256_hex(canonical_json(dict(identity)))[:32]}.json"


def compare_and_keep(path: Path, identity: Mapping[str, Any], retrieved: Mapping[str, Sequence[str]]) -> Comparison:
    """Compare this part's retrievals (`question_key` -> lines) with the record at `path`, then add the ones it
    lacks."""
    recorded = _read(path)
    now = {key: list(lines) for key, lines in retrieved.items()}
    compared = differing = 0
    first = None
    for key, lines in now.items():
        before = recorded.get(key)
        if before is None:
            continue
        compared += 1
        if before != lines:
            differing += 1
            first = first or _difference(key, before, lines)
    added = {key: lines for key, lines in now.items() if key not in recorded}
    if added:
        write_json(path, {"format": RECORD_FORMAT, "identity": dict(identity), "lines": {**recorded, **added}})
    return Comparison(compared, differing, first)


def question_key(question_id: str, checkpoint: int, k: int | None) -> str:
    return f"{question_id}@{checkpoint}@k={'all' if k is None else k}"


def _read(path: Path) -> dict[str, list[str]]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        lines = data["lines"]
        if data.get("format") != RECORD_FORMAT or not isinstance(lines, dict):
            raise ValueError(f"expected format {RECORD_FORMAT!r} with a lines table")
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptEntry(f"{path}: a run's retrieval record: {exc}; delete the file to record it again") from None
    return {str(key): list(value) for key, value in lines.items()}


def _difference(key: str, before: list[str], now: list[str]) -> str:
    question = key.split("@", 1)[0]
    k = key.rsplit("@k=", 1)[-1]
    pair = next(((a, b) for a, b in zip(before, now, strict=False) if a != b), None)
    if pair is None:
        return f"question {question} at k={k}: recorded {len(before)} lines, now {len(now)}"
    recorded, retrieved = _from_where_they_differ(*pair)
    return f"question {question} at k={k}: recorded {recorded!r}, now {retrieved!r}"


def _from_where_they_differ(a: str, b: str, before: int = 20, width: int = 60) -> tuple[str, str]:
    """Both lines cut to the part where they first differ (a long common start is elided), so the terminal shows
    what changed."""
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, same - before)

    def cut(line: str) -> str:
        part = line[start : start + width]
        return ("…" if start else "") + part + ("…" if start + width < len(line) else "")

    return cut(a), cut(b)
