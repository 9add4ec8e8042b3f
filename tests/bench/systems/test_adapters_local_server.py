"""Third-party memory libraries as arms, for real: A-MEM and LangMem, each in its own environment (.venvs/<name>/,
built by `engram-bench systems install <name>`), their model calls through the gateway endpoint to llama.cpp's server
with SmolLM2-135M (stacks/local.toml), record on dev's first messages and replay with the server stopped, with the
same answers.

Skips unless both the `local` extra and the adapter's environment are installed (with
ENGRAM_BENCH_REQUIRE_LOCAL_SERVER=1 a missing server fails instead). A 135M model's notes are junk; what is tested is
that every call of a library we do not control goes through the cache and replays.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakeservers import FakeModelServer, fake_chat_completion

from bench.models.local_server import first_messages, llama_server, unavailable_reason
from bench.run.runner import RunOptions, run_arm
from bench.systems.adapters import load_adapter

pytestmark = [pytest.mark.slow]
MESSAGES = 3


def _ready(adapter: str) -> None:
    reason = unavailable_reason()
    if reason is not None and os.environ.get("ENGRAM_BENCH_REQUIRE_LOCAL_SERVER") == "1":
        pytest.fail(f"ENGRAM_BENCH_REQUIRE_LOCAL_SERVER=1 but the local server cannot start: {reason}")
    not_installed = load_adapter(adapter).not_runnable_reason()
    if reason is not None or not_installed is not None:
        pytest.skip(f"{adapter} adapter test skipped: {reason or not_installed}")


def _run(adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    base = RunOptions(
        stack="local",
        limit=1,
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        assume_yes=True,
        slice_loader=lambda name: first_messages(name, MESSAGES),
    )
    with llama_server(log=tmp_path / "server.log") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        [recorded] = run_arm(adapter, "dev", replace(base, mode="record", out=tmp_path / "rec"))
    [replayed] = run_arm(adapter, "dev", replace(base, mode="replay", strict=True, out=tmp_path / "rep"))
    first, again = json.loads(recorded.read_text()), json.loads(replayed.read_text())
    assert first["extras"]["system"]["memory_system"]["library"] == adapter
    assert again["calls"]["misses"] == 0 and first["calls"]["misses"] > 0
    endpoint, replayed_endpoint = (r["extras"]["system"]["model_endpoint"] for r in (first, again))
    assert replayed_endpoint["calls"]["extract"] == {"cached": endpoint["calls"]["extract"]["sent"]}
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in first["answers"]]
    return first, endpoint


@pytest.mark.local_server
def test_a_mem_records_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ready("a-mem")
    first, endpoint = _run("a-mem", tmp_path, monkeypatch)
    system = first["extras"]["system"]
    assert system["memory_system"]["library"] == "a-mem" and system["adapter"]["environment"] == "venv"
    # one analysis per note, written messages plus the isolation canary, and evolution calls from the second note on
    assert endpoint["calls"]["extract"]["sent"] >= MESSAGES + 1
    assert endpoint["translations"]["json_schema_as_json_object"] == endpoint["calls"]["extract"]["sent"]
    assert first["store"]["stored"] == MESSAGES  # one note per message, whatever the model said
    assert all(sources for a in first["answers"] for sources in a["sources"])


@pytest.mark.local_server
def test_langmem_calls_tools_and_embeds_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ready("langmem")
    first, endpoint = _run("langmem", tmp_path, monkeypatch)
    # LangMem's store embeds through the endpoint, and its tool calls (tool_choice "any" = "required") are emulated
    # for llama.cpp's server, which ignores tools
    assert endpoint["calls"]["embed"]["local"] >= MESSAGES
    assert endpoint["translations"].get("tools_emulated:required", 0) >= MESSAGES
    assert first["extras"]["system"]["adapter"]["roles"] == ["extract", "embed"]


def _tool_reply(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """A schema-valid emulated tool call for whatever tools LangMem offers (the first one named in the schema)."""
    schema = json.dumps((body.get("response_format") or {}).get("schema") or {})
    name = schema.split('"enum": ["', 1)[1].split('"', 1)[0] if '"enum": ["' in schema else "Memory"
    call = {"name": name, "arguments": {"content": "Caroline went to a support group"}}
    return 200, {}, fake_chat_completion(body, json.dumps({"tool_calls": [call]}))


def test_langmem_records_against_a_schema_valid_fake_server_and_replays_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run twice, the second from the cache alone: LangMem's random memory ids would reach its prompts and
    miss the cache, so the adapter draws them from a seeded generator."""
    if load_adapter("langmem").not_runnable_reason() is not None:
        pytest.skip(f"langmem: {load_adapter('langmem').not_runnable_reason()}")
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    base = RunOptions(
        stack="local",
        limit=1,
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        assume_yes=True,
        slice_loader=lambda name: first_messages(name, MESSAGES),
    )
    with FakeModelServer(_tool_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        [recorded] = run_arm("langmem", "dev", replace(base, mode="record", out=tmp_path / "rec"))
    [replayed] = run_arm("langmem", "dev", replace(base, mode="replay", strict=True, out=tmp_path / "rep"))
    first, again = json.loads(recorded.read_text()), json.loads(replayed.read_text())
    assert again["calls"]["misses"] == 0 and [a["lines"] for a in again["answers"]] == [
        a["lines"] for a in first["answers"]
    ]
    assert first["store"]["stored"] >= 1 and "health" in first["store"]
