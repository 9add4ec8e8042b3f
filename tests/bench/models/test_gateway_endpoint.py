"""A foreign memory system talks to the harness's gateway endpoint with the official `openai` SDK, as it would to
OpenAI: it asks for `engram-bench/<role>`, gets the stack's model behind the cache, and the endpoint makes a weaker
server (declared in the stack file) look like OpenAI, naming every translation it made."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
from fakeservers import CHAT_COMPLETIONS, FakeModelServer, fake_chat_completion

from bench.errors import CacheMiss, ConfigError, SystemFailed
from bench.models.cache import LocalStore
from bench.models.endpoint import EndpointHandle, start_endpoint
from bench.run.runner import run_arm
from engram.testing import HashEmbedder
from tests.bench.run_args import RunArgs, run_args

NOTING_SERVICE = Path(__file__).parents[1].joinpath("noting_memory_service.py")


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return tmp_path


def _client(handle: EndpointHandle) -> openai.OpenAI:
    return openai.OpenAI(base_url=handle.base_url, api_key="whatever-the-system-has", max_retries=0)


def _start(stack: str, sandbox: Path, mode: str | None = "record", **options: Any) -> EndpointHandle:
    return start_endpoint(stack, mode, cache_dir=sandbox / "cache", embedder=lambda: HashEmbedder(), **options)  # type: ignore[arg-type]


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    """An OpenAI-compatible server behind the `local` stack (the stack's base URL is overridden to it)."""
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        yield server


def _last_sent(server: FakeModelServer) -> dict[str, Any]:
    return [r.body for r in server.requests if r.path == CHAT_COMPLETIONS][-1]


def test_a_system_asks_for_a_role_and_gets_the_stacks_model_then_the_same_reply_from_the_cache(
    sandbox: Path, upstream: FakeModelServer
) -> None:
    question = [{"role": "user", "content": "Which city did Marisol move to last spring?"}]
    with _start("local", sandbox) as handle:
        client = _client(handle)
        listed = [m.id for m in client.models.list()]
        assert "engram-bench/extract" in listed and "engram-bench/embed" in listed
        first = client.chat.completions.create(model="engram-bench/answer", messages=question, max_tokens=30)
        assert _last_sent(upstream)["model"] == "local-model"  # the stack's model for `answer`
        assert handle.report()["calls"] == {"answer": {"sent": 1}}
    with _start("local", sandbox, mode="replay") as handle:
        again = _client(handle).chat.completions.create(model="engram-bench/answer", messages=question, max_tokens=30)
        assert handle.report()["calls"] == {"answer": {"cached": 1}}
        handle.check()
    assert again.choices[0].message.content == first.choices[0].message.content == "fake reply"
    assert upstream.count(CHAT_COMPLETIONS) == 1


def test_an_unknown_model_name_gets_an_openai_shaped_400_listing_the_known_ones_and_stops_the_run(
    sandbox: Path, upstream: FakeModelServer
) -> None:
    with _start("local", sandbox) as handle:
        with pytest.raises(openai.BadRequestError) as refused:
            _client(handle).chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hello there"}]
            )
        error = refused.value.body
        assert isinstance(error, dict) and error["code"] == "model_not_found" and error["param"] == "model"
        assert "engram-bench/extract" in error["message"] and "engram-bench/embed" in error["message"]
        with pytest.raises(ConfigError, match="'gpt-4o'"):
            handle.check()
    assert upstream.count() == 0


def test_a_replay_miss_is_an_error_the_system_sees_and_the_run_stops_naming_the_key(
    sandbox: Path, upstream: FakeModelServer
) -> None:
    with _start("local", sandbox, mode="replay") as handle:
        with pytest.raises(openai.BadRequestError) as refused:
            _client(handle).chat.completions.create(
                model="engram-bench/extract", messages=[{"role": "user", "content": "Tobias adopted a greyhound."}]
            )
        assert refused.value.body["code"] == "cache_miss"  # type: ignore[index]
        with pytest.raises(CacheMiss) as stopped:
            handle.check()
    assert "key " in str(stopped.value) and "\n" not in str(stopped.value)
    assert upstream.count() == 0


def test_the_offline_stack_says_it_has_no_stand_in_for_foreign_prompts_but_embeds(sandbox: Path) -> None:
    with _start("offline", sandbox, mode=None) as handle:
        client = _client(handle)
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="engram-bench/extract", messages=[{"role": "user", "content": "I repainted the shed green."}]
            )
        assert "no stand-in for a foreign system's prompts" in refused.value.message
        assert "use a stack with a model" in refused.value.message
        vectors = client.embeddings.create(model="engram-bench/embed", input=["the shed is green", "a red barn"])
        assert [d.index for d in vectors.data] == [0, 1]
        with pytest.raises(ConfigError, match="no stand-in"):
            handle.check()


def test_embeddings_come_back_as_floats_or_base64_equal_to_the_local_embedder(sandbox: Path) -> None:
    texts = ["Priya bakes sourdough on Sundays", "the ferry leaves at noon"]
    expected = HashEmbedder().embed(texts)
    with _start("offline", sandbox, mode=None) as handle:
        client = _client(handle)
        floats = client.embeddings.create(model="engram-bench/embed", input=texts, encoding_format="float")
        packed = client.embeddings.create(model="engram-bench/embed", input=texts[1], encoding_format="base64")
        with pytest.raises(openai.BadRequestError, match="chat model"):
            client.embeddings.create(model="engram-bench/answer", input="x")
    assert np.allclose(np.array([d.embedding for d in floats.data]), expected, atol=1e-6)
    raw = packed.data[0].embedding
    decoded = np.frombuffer(base64.b64decode(raw), dtype="<f4") if isinstance(raw, str) else np.array(raw)
    assert np.allclose(decoded, expected[1], atol=1e-6)


def _schema_reply(content: str) -> Any:
    def respond(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        return 200, {}, fake_chat_completion(body, content)

    return respond


def test_json_schema_is_translated_for_a_server_that_cannot_take_it_and_the_reply_is_repaired(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What llama.cpp's server does under a grammar: a raw newline inside a string.
    with FakeModelServer(_schema_reply('{"facts": ["Odile keeps bees", "line one\nline two"]}')) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        schema = {"type": "object", "properties": {"facts": {"type": "array", "items": {"type": "string"}}}}
        with _start("local", sandbox) as handle:
            reply = _client(handle).chat.completions.create(
                model="engram-bench/extract",
                messages=[{"role": "user", "content": "Odile keeps bees."}],
                response_format={"type": "json_schema", "json_schema": {"name": "facts", "schema": schema}},
            )
            report = handle.report()
        sent = _last_sent(server)
    # stacks/local.toml declares json_schema = false, max_array_items = 5 and max_string_length = 120
    assert sent["response_format"]["type"] == "json_object"
    facts = sent["response_format"]["schema"]["properties"]["facts"]
    assert facts["maxItems"] == 5 and facts["items"]["maxLength"] == 120
    content = reply.choices[0].message.content
    assert content is not None and json.loads(content)["facts"][1] == "line one\nline two"
    named = [
        "max_tokens_defaulted",
        "json_schema_as_json_object",
        "arrays_bounded",
        "strings_bounded",
        "json_control_chars_repaired",
    ]
    assert reply.model_extra is not None and reply.model_extra["x_engram_bench"]["translations"] == named
    assert report["translations"] == {name: 1 for name in named}
    store = LocalStore(sandbox / "cache")
    try:
        [entry] = [store.get(key) for key in store.keys()]
    finally:
        store.close()
    assert entry is not None and entry.body["x_engram_bench"]["translations"] == named


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "remember",
            "description": "store one memory",
            "parameters": {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
        },
    },
    {"type": "function", "function": {"name": "finish", "description": "nothing to store", "parameters": {}}},
]


@pytest.mark.parametrize(
    ("tool_choice", "upstream_says", "expected_calls", "expected_text"),
    [
        (
            "required",
            '{"tool_calls": [{"name": "remember", "arguments": {"content": "Ines rows"}}]}',
            ["remember"],
            None,
        ),
        ("auto", '{"content": "nothing worth keeping"}', [], "nothing worth keeping"),
        (
            {"type": "function", "function": {"name": "remember"}},
            '{"content": "Ines rows at dawn"}',
            ["remember"],
            None,
        ),
    ],
    ids=["required", "auto-answers-in-text", "named"],
)
def test_tool_calls_are_emulated_for_a_server_that_ignores_tools(
    sandbox: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool_choice: Any,
    upstream_says: str,
    expected_calls: list[str],
    expected_text: str | None,
) -> None:
    with FakeModelServer(_schema_reply(upstream_says)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        with _start("local", sandbox) as handle:
            reply = _client(handle).chat.completions.create(
                model="engram-bench/extract",
                messages=[{"role": "user", "content": "Ines rows on the lake at dawn."}],
                tools=TOOLS,  # type: ignore[arg-type]
                tool_choice=tool_choice,
            )
        sent = _last_sent(server)
    assert "tools" not in sent and "tool_choice" not in sent
    assert sent["response_format"]["type"] == "json_object" and "schema" in sent["response_format"]
    assert "remember" in sent["messages"][0]["content"]  # the tools are described to the model
    message = reply.choices[0].message
    assert [c.function.name for c in message.tool_calls or []] == expected_calls
    assert message.content == expected_text
    if expected_calls:
        assert reply.choices[0].finish_reason == "tool_calls"
        assert json.loads(message.tool_calls[0].function.arguments)["content"].startswith("Ines rows")  # type: ignore[index]
    label = tool_choice if isinstance(tool_choice, str) else "named"
    assert (
        reply.model_extra is not None
        and f"tools_emulated:{label}" in reply.model_extra["x_engram_bench"]["translations"]
    )


def test_a_server_that_takes_tools_gets_them_as_sent(sandbox: Path, upstream: FakeModelServer) -> None:
    with _start("openai", sandbox, mode="live") as handle, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-FAKE-for-the-test-server")
        reply = _client(handle).chat.completions.create(
            model="engram-bench/extract",
            messages=[{"role": "user", "content": "Keep this: Bao plays the oboe."}],
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="required",
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
        )
    sent = _last_sent(upstream)
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "required"
    assert sent["response_format"]["type"] == "json_schema" and sent["model"] == "gpt-4o-mini"
    assert reply.model_extra is None or "x_engram_bench" not in reply.model_extra


def _noting_arm(folder: Path) -> Path:
    arms = folder / "arms"
    arms.mkdir(exist_ok=True)
    command = json.dumps([sys.executable, str(NOTING_SERVICE), "--port", "{port}"])
    (arms / "noting.toml").write_text(f'system = "http"\nk = 3\n[settings]\ncommand = {command}\n')
    return arms


def _run_options(folder: Path, **changes: Any) -> RunArgs:
    return run_args(
        **{
            "stack": "local",
            "arms_dir": folder / "arms",
            "runs_root": folder / "runs",
            "cache_dir": folder / "cache",
            "subsets": (),
            "progress": False,
            "assume_yes": True,
            "limit": 2,
            **changes,
        }
    )


def test_a_system_in_another_process_records_through_the_endpoint_and_replays_with_the_server_gone(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _noting_arm(sandbox)
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        [recorded] = run_arm("noting", "dev", *_run_options(sandbox, mode="record", out=sandbox / "rec"))
        sent = server.count(CHAT_COMPLETIONS)
    [replayed] = run_arm("noting", "dev", *_run_options(sandbox, mode="replay", strict=True, out=sandbox / "rep"))

    first, again = json.loads(recorded.read_text()), json.loads(replayed.read_text())
    endpoint = first["extras"]["system"]["model_endpoint"]
    # every message written (and the isolation canary) asked the model once, through the endpoint; the rest of
    # what the server saw is the harness's own answering and judging, two calls per question
    noted = endpoint["calls"]["extract"]["sent"]
    assert noted == first["extras"]["messages"] + 1 and sent == noted + 2 * len(first["answers"])
    assert first["calls"]["misses"] >= sent and again["calls"]["misses"] == 0
    assert again["extras"]["system"]["model_endpoint"]["calls"]["extract"] == {"cached": noted}
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in first["answers"]]
    assert "(note: fake reply)" in first["answers"][0]["lines"][0]
    assert first["store"]["health"] == again["store"]["health"] == {"empty_notes": 0}  # the service's own count


def test_a_replay_miss_stops_an_out_of_process_run_even_when_the_system_swallows_it(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _noting_arm(sandbox)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: nothing may be sent
    with pytest.raises(CacheMiss) as stopped:
        run_arm("noting", "dev", *_run_options(sandbox, mode="replay", out=sandbox / "out"))
    message = str(stopped.value)
    assert "key " in message and "purpose extract" in message and "\n" not in message
    assert not (sandbox / "out").exists() or not list((sandbox / "out").glob("*.json"))
    assert not isinstance(stopped.value, SystemFailed)


def test_a_request_without_max_tokens_gets_the_stacks_default_for_a_server_that_would_run_on(
    sandbox: Path, upstream: FakeModelServer
) -> None:
    with _start("local", sandbox) as handle:
        client = _client(handle)
        bounded = client.chat.completions.create(
            model="engram-bench/extract", messages=[{"role": "user", "content": "Halvard fixes clocks."}]
        )
        assert _last_sent(upstream)["max_tokens"] == 400  # stacks/local.toml: default_max_tokens = 400
        client.chat.completions.create(
            model="engram-bench/extract", messages=[{"role": "user", "content": "Halvard fixes clocks."}], max_tokens=7
        )
        assert _last_sent(upstream)["max_tokens"] == 7  # a system's own limit is kept
    assert bounded.model_extra is not None
    assert bounded.model_extra["x_engram_bench"]["translations"] == ["max_tokens_defaulted"]


def test_a_stats_reply_carries_run_health_counts_and_a_malformed_one_is_one_line() -> None:
    from bench.systems import wire

    read = wire.read_stats({"stored": 4, "unit": "note", "health": {"empty_notes": 3}}, "system 'x': POST /stats")
    assert read["health"] == {"empty_notes": 3}
    with pytest.raises(SystemFailed) as refused:
        wire.read_stats({"stored": 4, "health": {"empty_notes": -1}}, "system 'x': POST /stats")
    assert "health.empty_notes" in str(refused.value) and "\n" not in str(refused.value)


def test_gateway_serve_prints_its_url_answers_until_stopped_and_says_what_it_served(sandbox: Path) -> None:
    env = {**os.environ, "ENGRAM_CACHE_DIR": str(sandbox / "cache"), "PYTHONPATH": str(Path.cwd())}
    command = [sys.executable, "-m", "bench", "gateway", "serve", "--stack", "offline", "--port", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        base_url = first.split()[2]
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        listed = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0).models.list()
        assert "engram-bench/judge" in [m.id for m in listed]
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "gateway endpoint stopped; served:" in out
