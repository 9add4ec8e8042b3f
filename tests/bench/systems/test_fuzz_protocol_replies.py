"""Property: whatever JSON a memory system sends back, the harness either reads it as the protocol says or stops with
one SystemFailed line naming the system and the request, never another exception; and what it accepts is valid
under docs/memory-protocol.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.errors import SystemFailed
from bench.systems import wire

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "docs" / "memory-protocol.schema.json").read_text())
FUZZ = settings(max_examples=150, deadline=None, database=None, derandomize=True)
WRITTEN = {"M1:1": "x", "M1:2": "y"}
WHERE = "system 'fuzzed' (http): POST /retrieve"

SCALAR = st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False, width=32) | st.text(max_size=8)
ANY_JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
SOURCE = st.sampled_from(["M1:1", "M1:2", "M9:9", ""]) | st.integers(0, 3)
LINE = st.fixed_dictionaries(
    {"text": st.text(max_size=12) | st.integers(), "sources": st.lists(SOURCE, max_size=3) | st.text(max_size=3)},
    optional={"score": SCALAR},
)
VALID_LINE = st.fixed_dictionaries(
    {"text": st.text(max_size=12), "sources": st.lists(st.sampled_from(sorted(WRITTEN)), max_size=2)},
    optional={"score": st.floats(-1, 1) | st.none()},
)
# Replies at the protocol's boundary (mostly valid lines, one thing off now and then), and arbitrary JSON.
NEAR = st.fixed_dictionaries(
    {
        "lines": st.lists(VALID_LINE, max_size=5) | st.lists(VALID_LINE | LINE, max_size=5) | ANY_JSON,
        "retrieved_tokens": st.integers(0, 80) | SCALAR,
    },
    optional={"usage": st.fixed_dictionaries({}, optional={"calls": st.integers(0, 3) | SCALAR}) | ANY_JSON},
)


def _valid(body: Any, name: str) -> None:
    jsonschema.validate(body, {**SCHEMA, "$ref": f"#/$defs/{name}"})


@pytest.mark.slow
@FUZZ
@given(body=NEAR | ANY_JSON, k=st.integers(1, 4) | st.none())
def test_any_retrieve_reply_is_read_or_refused_in_one_line(body: Any, k: int | None) -> None:
    try:
        reply = wire.read_retrieve(body, WHERE, k, WRITTEN)
    except SystemFailed as exc:
        assert str(exc).startswith(WHERE + ": ") and "\n" not in str(exc)
        return
    _valid(body, "retrieve_reply")
    assert k is None or len(reply.lines) <= k
    assert all(set(line.sources) <= set(WRITTEN) for line in reply.lines)


@FUZZ
@given(body=ANY_JSON | st.fixed_dictionaries({"usage": ANY_JSON}, optional={"stored": SCALAR}))
def test_any_write_reply_is_read_or_refused_in_one_line(body: Any) -> None:
    try:
        wire.read_write(body, "system 'fuzzed': POST /write")
    except SystemFailed as exc:
        assert "\n" not in str(exc) and str(exc).startswith("system 'fuzzed': POST /write: ")
        return
    _valid(body, "write_reply")


@FUZZ
@given(
    body=ANY_JSON
    | st.fixed_dictionaries(
        {"status": st.sampled_from(["ok", "fine"]), "protocol": st.sampled_from(["engram-memory/1", "v0"])},
        optional={"system": ANY_JSON},
    )
)
def test_any_health_reply_is_read_or_refused_in_one_line(body: Any) -> None:
    try:
        wire.read_health(body, "system 'fuzzed': GET /health")
    except SystemFailed as exc:
        assert "\n" not in str(exc)
        return
    _valid(body, "health_reply")
