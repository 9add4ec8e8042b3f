"""The trace sidecar of a result file: what the run knew about every line it showed, for the viewer.

A result file keeps, per answer, the lines shown, their source message ids and the question's evidence ids. The
sidecar ``<arm>[__k<k>].trace.json.gz`` next to it (gzipped JSON) (named by the result's ``trace`` field) keeps what is too bulky or
too system-specific for the result itself:

- ``lines``: one entry per answer, in the result's answer order: a list with one mapping per shown line (engram:
  ``fact_id``, ``via`` = how the read path found it, ``score``), or null when the system recorded none;
- ``items``: per conversation, what the system explained about the ids those mappings name (engram: each fact
  with its belief, validity window, the decisions that shaped it, its history of gates blocked, closes and reopens,
  its same_as links and the facts it superseded), taken at the end of the run;
- ``turns``: per conversation, the slice messages the result refers to (line sources, evidence, item sources),
  with speaker, session, date and text, so a reader sees what each line came from without the data set.

Both are keyed by conversation first because message and fact ids (``D1:3``, ``D1:3#0``) repeat across LoCoMo
conversations, and a pooled slice runs several in one result; look them up with the answer's ``conversation``.

Written by the runner before its result file (atomically, validated), read by ``bench.view``. Files from before the
sidecar existed simply have ``trace: null``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from bench.disk.atomic import write_bytes
from bench.errors import TraceError

TRACE_VERSION = 1
# Gzipped: a held-out trace is megabytes of small decision records that compress about tenfold, and no reader diffs
# it; the suffix also keeps it out of every `*.json` scan of a results folder.
TRACE_SUFFIX = ".trace.json.gz"
KIND = "engram-bench trace"


@dataclass(frozen=True)
class Trace:
    result: str  # the name of the result file this trace belongs to
    system: str
    lines: list[list[dict[str, Any]] | None]
    items: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # conversation -> id -> explanation
    turns: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # conversation -> message id -> turn
    kind: str = KIND
    # Not named schema_version on purpose: scanners of result folders tell result files by that key.
    trace_version: int = TRACE_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def trace_name(result_path: str | Path) -> str:
    """``engram__k3.json`` → ``engram__k3.trace.json.gz``."""
    return Path(result_path).with_suffix(TRACE_SUFFIX).name


def jsonable(value: Any) -> Any:
    """Plain JSON data from a system's records: dataclasses and mappings become objects, tuples lists, datetimes
    ISO text, non-finite floats null (JSON has no NaN)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


MESSAGE_KEYS = ("message_id", "source_message_id")


def referenced_messages(
    sources: Iterable[Sequence[Sequence[str]] | None],
    evidence: Iterable[Sequence[str] | None],
    items: Mapping[str, Any],
) -> set[str]:
    """Every message id the result and the explained items point at."""
    ids: set[str] = set()
    for per_line in sources:
        for line_sources in per_line or ():
            ids.update(line_sources)
    for ev in evidence:
        ids.update(ev or ())
    ids.update(_message_ids_in(items))
    return ids


def _message_ids_in(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in MESSAGE_KEYS and isinstance(inner, str):
                yield inner
            else:
                yield from _message_ids_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _message_ids_in(inner)


# --------------------------------------------------------------------------------------------------- validation


def trace_from_dict(d: Any, where: str) -> Trace:
    """Validate a parsed trace; ``TraceError`` names ``where`` and the field."""

    def fail(name: str, expected: str, found: Any) -> TraceError:
        return TraceError(f"{where}: field {name}: expected {expected}, found {json.dumps(found, default=str)[:80]}")

    if not isinstance(d, Mapping):
        raise fail("<top>", "a JSON object", type(d).__name__)
    if d.get("kind") != KIND:
        raise fail("kind", repr(KIND), d.get("kind"))
    if d.get("trace_version") != TRACE_VERSION:
        raise fail("trace_version", str(TRACE_VERSION), d.get("trace_version"))
    unknown = sorted(set(d) - {f.name for f in dataclasses.fields(Trace)})
    if unknown:
        raise TraceError(f"{where}: field {unknown[0]} is not in trace schema v{TRACE_VERSION}")
    for name in ("result", "system"):
        if not isinstance(d.get(name), str) or not d[name]:
            raise fail(name, "a non-empty string", d.get(name))
    lines = d.get("lines")
    if not isinstance(lines, list):
        raise fail("lines", "a list with one entry per answer", lines)
    for i, entry in enumerate(lines):
        if entry is not None and not (isinstance(entry, list) and all(isinstance(x, Mapping) for x in entry)):
            raise fail(f"lines[{i}]", "a list of objects (one per shown line) or null", entry)
    for name in ("items", "turns"):
        block = d.get(name, {})
        if not isinstance(block, Mapping):
            raise fail(name, "an object {conversation: {id: object}}", block)
        for conversation, by_id in block.items():
            if not isinstance(by_id, Mapping) or not all(isinstance(v, Mapping) for v in by_id.values()):
                raise fail(f"{name}.{conversation}", "an object {id: object}", by_id)
    return Trace(
        result=d["result"],
        system=d["system"],
        lines=list(lines),
        items=dict(d.get("items", {})),
        turns=dict(d.get("turns", {})),
    )


def check_against(trace: Trace, answers: Sequence[Any], where: str) -> None:
    """A trace belongs to its result: one entry per answer, and per answer at most one entry per shown line."""
    if len(trace.lines) != len(answers):
        raise TraceError(
            f"{where}: field lines: expected {len(answers)} entries (one per answer), found {len(trace.lines)}"
        )
    for i, (entry, answer) in enumerate(zip(trace.lines, answers)):
        shown = answer.lines
        if entry is not None and shown is not None and len(entry) != len(shown):
            raise TraceError(
                f"{where}: field lines[{i}]: expected {len(shown)} entries (the lines of answer "
                f"{answer.question_id}), found {len(entry)}"
            )


def write_trace(path: str | Path, trace: Trace) -> Path:
    """Validate, then write atomically: compact JSON with sorted keys, gzipped with a zero timestamp so that two runs
    of the same arm on the same cache write the same bytes."""
    data = jsonable(trace.to_dict())
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    trace_from_dict(json.loads(text), where=str(path))
    return write_bytes(path, gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))


def read_trace(path: str | Path) -> Trace:
    p = Path(path)
    try:
        raw = json.loads(gzip.decompress(p.read_bytes()).decode("utf-8"))
    except FileNotFoundError as exc:
        raise TraceError(f"{p}: trace file not found (named by its result's trace field)") from exc
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip.BadGzipFile is an OSError
        raise TraceError(f"{p}: expected gzipped JSON, found {type(exc).__name__}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise TraceError(f"{p}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from exc
    return trace_from_dict(raw, where=str(p))


def trace_of(result_path: str | Path, result: Any) -> Trace | None:
    """The trace a result names, checked against its answers; None when it names none."""
    if result.trace is None:
        return None
    path = Path(result_path).parent / result.trace
    trace = read_trace(path)
    check_against(trace, result.answers, str(path))
    return trace
