"""The gateway endpoint in front of a real llama.cpp server with SmolLM2-135M (stacks/local.toml): a system that
speaks plain OpenAI (json_schema, tools with tool_choice "required") gets replies it can parse, although the server
itself refuses json_schema and ignores tools; then the same calls replay with the server stopped.

Needs the `local` extra; skips without it unless ENGRAM_BENCH_REQUIRE_LOCAL_SERVER=1 (then it fails). The content is
a 135M model's: junk, but the plumbing under test is real.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import openai
import pytest

from bench.models.endpoint import start_endpoint
from bench.models.local_server import llama_server, unavailable_reason

pytestmark = [pytest.mark.local_server, pytest.mark.slow]
REQUIRE_ENV = "ENGRAM_BENCH_REQUIRE_LOCAL_SERVER"
SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "save_memory",
            "description": "save one memory about the user",
            "parameters": {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
        },
    }
]
MESSAGES = [{"role": "user", "content": "Remember this: Wendell grows chillies on his balcony."}]


@pytest.fixture(scope="module")
def local_server_ready() -> None:
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but the local-server test cannot run: {reason}")
    pytest.skip(f"local-server test skipped: {reason} (set {REQUIRE_ENV}=1 to make this a failure)")


def _ask(client: openai.OpenAI) -> tuple[Any, Any]:
    facts = client.chat.completions.create(
        model="engram-bench/extract",
        messages=MESSAGES,
        response_format={"type": "json_schema", "json_schema": {"name": "facts", "schema": SCHEMA}},
        max_tokens=400,
        temperature=0,
    )
    tool = client.chat.completions.create(
        model="engram-bench/extract",
        messages=MESSAGES,
        tools=TOOLS,
        tool_choice="required",
        max_tokens=400,
        temperature=0,  # type: ignore[arg-type]
    )
    return facts, tool


def test_a_plain_openai_system_gets_parseable_json_and_tool_calls_from_smollm2_and_replays_them(
    local_server_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with llama_server(log=tmp_path / "server.log") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        direct = openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
        with pytest.raises(openai.InternalServerError):  # why stacks/local.toml says json_schema = false
            direct.chat.completions.create(
                model=server.model,
                messages=MESSAGES,
                response_format={"type": "json_schema", "json_schema": {"name": "facts", "schema": SCHEMA}},
                max_tokens=20,
            )
        with start_endpoint("local", "record", cache_dir=tmp_path / "cache") as handle:
            facts, tool = _ask(openai.OpenAI(base_url=handle.base_url, api_key="none", max_retries=0))
            recorded = handle.report()

    assert isinstance(json.loads(facts.choices[0].message.content or "")["facts"], list)
    calls = tool.choices[0].message.tool_calls or []
    assert calls and all(c.function.name == "save_memory" for c in calls)
    assert all(isinstance(json.loads(c.function.arguments), dict) for c in calls)
    assert recorded["translations"]["json_schema_as_json_object"] == 1
    assert recorded["translations"]["tools_emulated:required"] == 1

    with start_endpoint("local", "replay", strict=True, cache_dir=tmp_path / "cache") as handle:
        facts_again, tool_again = _ask(openai.OpenAI(base_url=handle.base_url, api_key="none", max_retries=0))
        handle.check()
        assert handle.report()["calls"] == {"extract": {"cached": 2}}
    assert facts_again.choices[0].message.content == facts.choices[0].message.content
    assert [c.function.arguments for c in tool_again.choices[0].message.tool_calls or []] == [
        c.function.arguments for c in calls
    ]
