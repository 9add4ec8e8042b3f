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


def compare_and_keep(
    path: Path | None,
    identity: Mapping[str, Any],
    retrieved: Mapping[str, Sequence[str]],
    shipped: Sequence[Path] = (),
) -> Comparison:
    """Compare this part's retrievals (`question_key` -> lines) with the record: the shipped copies of it
    (`cache export` puts a run's records in its subset, `<subset>/retrievals/`; the first holding a question wins)
    and the local one at `path`; then add the questions none of them holds to the local one (None: no local cache,
    nothing kept)."""
    local = _read(path) if path is not None else {}
    recorded: dict[str, list[str]] = {}
    for record in (*shipped, *([path] if path is not None else [])):
        for key, lines in (local if record == path else _read(record)).items():
            recorded.setdefault(key, lines)
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
    if added and path is not None:
        write_json(path, {"format": RECORD_FORMAT, "identity": dict(identity), "lines": {**local, **added}})
    return Comparison(compared, differing, first)


def records_of_arm(folder: Path, arm: str, settings: Mapping[str, Any], stack: str) -> list[Path]:
    """The records in a cache (or subset) folder made by `arm` with these settings on `stack`, any slice part: what
    `cache export` ships beside a result's calls. A record of another slice or cut of the same arm only adds
    comparisons for runs with exactly its identity."""
    found = []
    for path in sorted((folder / RETRIEVALS_DIR).glob("*.json")):
        try:
            identity = json.loads(path.read_text())["identity"]
        except (ValueError, KeyError, TypeError):
            raise CorruptEntry(f"{path}: a run's retrieval record: expected JSON with an identity table") from None
        if (identity.get("arm"), identity.get("settings"), identity.get("stack")) == (arm, dict(settings), stack):
            found.append(path)
    return found


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
