"""The memory-system protocol's replies, read and checked (docs/memory-protocol.md, docs/memory-protocol.schema.json).

Checked by hand rather than with jsonschema, which is a test dependency only: each check names the request and the
field, so a system that breaks the protocol stops the run with one line saying where. A test validates the same
replies against the schema file, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.errors import SystemFailed

PROTOCOL = "engram-memory/1"
USAGE_COUNTS = ("calls", "input_tokens", "output_tokens")
USAGE_FIGURES = ("cost_usd", "latency_ms")


@dataclass(frozen=True)
class Usage:
    """What one request cost, as the system reported it (None = unknown)."""

    calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    # A project-environment adapter's calls through its own gateway (bench.systems.handoff), for the result's key
    # list and hit/miss counts.
    cache_keys: tuple[str, ...] = ()
    cache_hits: int = 0
    cache_misses: int = 0


@dataclass(frozen=True)
class Identity:
    """The /health reply's `system`: what the result records about the system that answered."""

    name: str
    library: str
    version: str
    store: str
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WriteReply:
    usage: Usage
    stored: int | None


@dataclass(frozen=True)
class Line:
    text: str
    sources: tuple[str, ...]
    score: float | None = None


@dataclass(frozen=True)
class RetrieveReply:
    lines: tuple[Line, ...]
    retrieved_tokens: int | None
    usage: Usage


class Reply:
    """Readers for one reply body; `where` is the prefix of every complaint ("system 'x': POST /write: ...")."""

    def __init__(self, body: Any, where: str) -> None:
        self.where = where
        self.body = self.object(body, "reply")

    def fail(self, what: str) -> SystemFailed:
        return SystemFailed(f"{self.where}: {what}")

    def object(self, value: Any, name: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(f"{name}: expected a JSON object, found {_kind(value)}")
        return value

    def required(self, data: Mapping[str, Any], key: str, name: str) -> Any:
        if key not in data:
            raise self.fail(f"{name}: expected a field {key!r}, found keys {sorted(data)}")
        return data[key]

    def string(self, value: Any, name: str, *, empty: bool = True) -> str:
        if not isinstance(value, str) or (not empty and not value):
            raise self.fail(f"{name}: expected a{'' if empty else ' non-empty'} string, found {_kind(value)}")
        return value

    def count(self, value: Any, name: str, *, nullable: bool = True) -> int | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return self._bad(f"{name}: expected a whole number >= 0{' or null' if nullable else ''}", value)
        return value

    def figure(self, value: Any, name: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            return self._bad(f"{name}: expected a number >= 0 or null", value)
        return float(value)

    def _bad(self, expected: str, value: Any) -> Any:
        raise self.fail(f"{expected}, found {_kind(value)}")

    def usage(self, value: Any) -> Usage:
        if value is None:
            return Usage()
        data = self.object(value, "usage")
        counts = {key: self.count(data.get(key), f"usage.{key}") for key in USAGE_COUNTS}
        figures = {key: self.figure(data.get(key), f"usage.{key}") for key in USAGE_FIGURES}
        keys = data.get("cache_keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise self.fail(f"usage.cache_keys: expected an array of cache keys, found {_kind(keys)}")
        hits = self.count(data.get("cache_hits", 0), "usage.cache_hits", nullable=False) or 0
        misses = self.count(data.get("cache_misses", 0), "usage.cache_misses", nullable=False) or 0
        return Usage(**counts, **figures, cache_keys=tuple(keys), cache_hits=hits, cache_misses=misses)  # type: ignore[arg-type]


def read_health(body: Any, where: str) -> Identity:
    reply = Reply(body, where)
    data = reply.body
    if data.get("status") != "ok":
        raise reply.fail(f"status: expected 'ok', found {data.get('status')!r}")
    if data.get("protocol") != PROTOCOL:
        raise reply.fail(f"protocol: expected {PROTOCOL!r}, found {data.get('protocol')!r}")
    system = reply.object(reply.required(data, "system", "health"), "system")
    texts = {
        key: reply.string(reply.required(system, key, "system"), f"system.{key}", empty=False)
        for key in ("name", "library", "version", "store")
    }
    config = reply.object(system.get("config", {}), "system.config")
    return Identity(**texts, config=dict(config))


def read_reset(body: Any, where: str) -> None:
    reply = Reply(body, where)
    if reply.body.get("ok") is not True:
        raise reply.fail(f"ok: expected true, found {reply.body.get('ok')!r}")


def read_write(body: Any, where: str) -> WriteReply:
    reply = Reply(body, where)
    usage = reply.usage(reply.required(reply.body, "usage", "write reply"))
    return WriteReply(usage=usage, stored=reply.count(reply.body.get("stored"), "stored"))


def read_retrieve(body: Any, where: str, k: int | None, written: Mapping[str, Any]) -> RetrieveReply:
    """The lines of a retrieve reply; more than k lines or a source id never written is a contract break."""
    reply = Reply(body, where)
    raw = reply.required(reply.body, "lines", "retrieve reply")
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise reply.fail(f"lines: expected a JSON array, found {_kind(raw)}")
    if k is not None and len(raw) > k:
        raise reply.fail(f"lines: expected at most k={k} lines, found {len(raw)}")
    lines = tuple(_line(reply, item, i, written) for i, item in enumerate(raw))
    if "retrieved_tokens" not in reply.body:
        raise reply.fail("retrieved_tokens: expected a whole number >= 0 or null, found no such field")
    tokens = reply.count(reply.body["retrieved_tokens"], "retrieved_tokens")
    return RetrieveReply(lines=lines, retrieved_tokens=tokens, usage=reply.usage(reply.body.get("usage")))


def _line(reply: Reply, item: Any, i: int, written: Mapping[str, Any]) -> Line:
    name = f"lines[{i}]"
    data = reply.object(item, name)
    text = reply.string(reply.required(data, "text", name), f"{name}.text")
    sources = reply.required(data, "sources", name)
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise reply.fail(f"{name}.sources: expected an array of message ids, found {_kind(sources)}")
    unknown = [s for s in sources if s not in written]
    if unknown:
        raise reply.fail(f"{name}.sources: expected ids of written messages, found {unknown[0]!r}, never written")
    score = data.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise reply.fail(f"{name}.score: expected a number or null, found {_kind(score)}")
    return Line(text=text, sources=tuple(dict.fromkeys(sources)), score=None if score is None else float(score))


def read_stats(body: Any, where: str) -> dict[str, Any]:
    reply = Reply(body, where)
    stored = reply.count(reply.required(reply.body, "stored", "stats reply"), "stored", nullable=False)
    unit = reply.body.get("unit", "item")
    read: dict[str, Any] = {"stored": stored, "unit": reply.string(unit, "unit", empty=False)}
    if reply.body.get("health") is not None:  # run-health counts by name (e.g. empty_notes), optional
        health = reply.object(reply.body["health"], "health")
        read["health"] = {
            str(name): reply.count(value, f"health.{name}", nullable=False) for name, value in health.items()
        }
    return read


def _kind(value: Any) -> str:
    """A short description of a JSON value for an error line (its type and, when short, itself)."""
    text = repr(value)
    shown = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(value).__name__} {shown}"


def read_facts(body: Any, where: str, written: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The optional /facts reply: every stored item with its source message, for the update-set scoring."""
    reply = Reply(body, where)
    raw = reply.required(reply.body, "facts", "facts reply")
    if not isinstance(raw, list):
        raise reply.fail(f"facts: expected a JSON array, found {_kind(raw)}")
    facts = []
    for i, item in enumerate(raw):
        name = f"facts[{i}]"
        data = reply.object(item, name)
        source = data.get("source")
        if source is not None and source not in written:
            raise reply.fail(f"{name}.source: expected the id of a written message or null, found {source!r}")
        active = data.get("active", True)
        if not isinstance(active, bool):
            raise reply.fail(f"{name}.active: expected true or false, found {_kind(active)}")
        facts.append(
            {
                "id": reply.string(reply.required(data, "id", name), f"{name}.id", empty=False),
                "text": reply.string(reply.required(data, "text", name), f"{name}.text"),
                "source": source,
                "active": active,
                "closed_reason": data.get("closed_reason"),
                "closed_by": data.get("closed_by"),
            }
        )
    return facts
