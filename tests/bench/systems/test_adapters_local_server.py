"""Third-party memory libraries as arms, for real: A-MEM and LangMem, each in its own environment (.venvs/<name>/,
built by `engram-bench systems install <name>`, or `make adapters`), their model calls through the gateway endpoint
to llama.cpp's server with SmolLM2-135M (stacks/local.toml). Each is run as a user runs it, `engram-bench run NAME
--slice dev --stack local --limit 5 --messages 8 --mode record`, then the same command replays with the server
stopped and gives the same retrieved lines and answers.

Skips unless both the `local` extra and the adapter's environment are installed; with
ENGRAM_BENCH_REQUIRE_LOCAL_SERVER=1 a missing server fails instead, and with ENGRAM_BENCH_REQUIRE_ADAPTERS=1 (both set
by .ci/run) a missing adapter environment does too. A 135M model's notes are junk; what is tested is that every
call of a library we do not control goes through the cache and replays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fakeservers import CHAT_COMPLETIONS, FakeModelServer, fake_chat_completion, schema_valid_responder

from bench.cli.program import main
from bench.models.local_server import llama_server, unavailable_reason
from bench.systems.adapters import load_adapter

pytestmark = [pytest.mark.slow]
MESSAGES, QUESTIONS = 8, 5
# Graphiti makes 3-9 calls per message and took 43-140 s a message on SmolLM2 here (2-core AMD EPYC): five keep
# its record within a few minutes of CI time
MESSAGES_OF = {"graphiti": 5}
REQUIRE_SERVER, REQUIRE_ADAPTERS = "ENGRAM_BENCH_REQUIRE_LOCAL_SERVER", "ENGRAM_BENCH_REQUIRE_ADAPTERS"


def messages_of(adapter: str) -> int:
    return MESSAGES_OF.get(adapter, MESSAGES)


def adapter_ready(adapter: str, *, server: bool) -> None:
    """Skip (or fail, when CI requires them) unless the adapter's environment, and the local server if asked, are
    there."""
    reason = unavailable_reason() if server else None
    if reason is not None and os.environ.get(REQUIRE_SERVER) == "1":
        pytest.fail(f"{REQUIRE_SERVER}=1 but the local server cannot start: {reason}")
    not_installed = load_adapter(adapter).not_runnable_reason()
    if not_installed is not None and os.environ.get(REQUIRE_ADAPTERS) == "1":
        pytest.fail(f"{REQUIRE_ADAPTERS}=1 but {adapter}: {not_installed} (or `make adapters`)")
    if reason is not None or not_installed is not None:
        pytest.skip(f"{adapter} adapter test skipped: {reason or not_installed}")


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr("sys.argv", ["engram-bench", *argv])
    try:
        main()
    except SystemExit as exited:
        out, err = capsys.readouterr()
        assert not exited.code, f"engram-bench {' '.join(argv)} exited {exited.code}: {err.strip()}"
        return out
    return capsys.readouterr().out


def the_run(adapter: str, mode: str, out: Path) -> list[str]:
    return [
        "run", adapter, "--slice", "dev", "--stack", "local", "--limit", str(QUESTIONS),
        "--messages", str(messages_of(adapter)), "--mode", mode, "--out", str(out), "--quiet",
    ]  # fmt: skip


def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))


def record_then_replay(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Record on the real server, stop it, replay: the replay makes the same calls, every one from the cache."""
    sandbox(tmp_path, monkeypatch)
    with llama_server(log=tmp_path / "server.log") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        run_cli(the_run(adapter, "record", tmp_path / "rec"), monkeypatch, capsys)
    # the server is stopped: every call the library makes must now come from the cache
    said = run_cli(the_run(adapter, "replay", tmp_path / "rep"), monkeypatch, capsys)
    messages = messages_of(adapter)
    assert f"on the first {QUESTIONS} of" in said and f"after the first {messages} messages" in said
    first, again = (result_of(tmp_path / side) for side in ("rec", "rep"))
    assert first["extras"]["system"]["memory_system"]["library"] in (adapter, f"{adapter}-core")
    assert first["extras"]["messages"] == messages and len(first["answers"]) == QUESTIONS
    assert again["calls"]["misses"] == 0 and first["calls"]["misses"] > 0
    endpoint, replayed_endpoint = (r["extras"]["system"]["model_endpoint"] for r in (first, again))
    # every call the library made is answered from the cache: those sent, and any it repeated word for word
    assert replayed_endpoint["calls"]["extract"] == {"cached": sum(endpoint["calls"]["extract"].values())}
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in first["answers"]]
    assert [a["answer"] for a in again["answers"]] == [a["answer"] for a in first["answers"]]
    assert again["store"] == first["store"]
    sources_written(adapter, first)
    return first, endpoint


def sources_written(adapter: str, result: dict[str, Any]) -> set[str]:
    """The message ids the result's lines name, each one of the messages the run wrote."""
    sources = {s for a in result["answers"] for line in a["sources"] for s in line}
    assert sources <= {f"D1:{i}" for i in range(1, messages_of(adapter) + 1)}
    return sources


def result_of(folder: Path) -> dict[str, Any]:
    """The one result file a single-k run wrote into `folder`."""
    [path] = folder.glob("*.json")
    return dict(json.loads(path.read_text()))


def replayed_on_a_fake_server(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], set[str]]:
    """The run recorded against a server whose every reply is JSON valid under the schema asked for, then replayed
    with that server still up: the replay must miss nothing, send it nothing and retrieve the same lines. Returns
    the recorded result and the message ids its lines name."""
    adapter_ready(adapter, server=False)
    sandbox(tmp_path, monkeypatch)
    with FakeModelServer(schema_valid_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        run_cli(the_run(adapter, "record", tmp_path / "rec"), monkeypatch, capsys)
        sent = server.count()
        run_cli(the_run(adapter, "replay", tmp_path / "rep"), monkeypatch, capsys)
    first, again = (result_of(tmp_path / side) for side in ("rec", "rep"))
    assert again["calls"]["misses"] == 0 and server.count() == sent > 0
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in first["answers"]]
    return first, sources_written(adapter, first)


@pytest.mark.local_server
def test_a_mem_records_on_smollm2_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter_ready("a-mem", server=True)
    first, endpoint = record_then_replay("a-mem", tmp_path, monkeypatch, capsys)
    system = first["extras"]["system"]
    assert system["memory_system"]["library"] == "a-mem" and system["adapter"]["environment"] == "venv"
    # one analysis per note, written messages plus the isolation canary, and evolution calls from the second note on
    assert endpoint["calls"]["extract"]["sent"] >= MESSAGES + 1
    assert endpoint["translations"]["json_schema_as_json_object"] == endpoint["calls"]["extract"]["sent"]
    assert first["store"]["stored"] == MESSAGES  # one note per message, whatever the model said
    assert all(sources for a in first["answers"] for sources in a["sources"])
    # A-MEM's own JSON is read by its own format, not mem0's extraction rule, so no false alarm about extract
    assert not any(p.startswith("extract:") for p in first["extras"]["health"]["problems"])


@pytest.mark.local_server
def test_langmem_calls_tools_and_embeds_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter_ready("langmem", server=True)
    first, endpoint = record_then_replay("langmem", tmp_path, monkeypatch, capsys)
    # LangMem's store embeds through the endpoint, and its tool calls are emulated for llama.cpp's server, which
    # ignores tools; whether SmolLM2 then calls a tool or answers in prose is counted, never hidden
    assert endpoint["calls"]["embed"]["local"] >= MESSAGES
    emulated = sum(n for name, n in endpoint["translations"].items() if name.startswith("tools_emulated:"))
    assert emulated >= MESSAGES
    health = first["store"]["health"]
    assert first["store"]["stored"] > 0 or health["empty_writes"] + health["failed_writes"] == MESSAGES
    assert first["extras"]["system"]["adapter"]["roles"] == ["extract", "embed"]


def test_langmem_records_against_a_schema_valid_fake_server_and_replays_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same run twice, the second from the cache alone: LangMem's random memory ids would reach its prompts and
    miss the cache, so the adapter draws them from a seeded generator."""
    first, sources = replayed_on_a_fake_server("langmem", tmp_path, monkeypatch, capsys)
    # a model that always calls the insert tool with what was said: one memory per message, each sourced to it
    assert first["store"]["stored"] == MESSAGES and first["store"]["health"]["empty_writes"] == 0
    assert sources


def test_cognee_records_against_a_schema_valid_fake_server_and_replays_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """cognee's whole pipeline (chunking, graph extraction, summaries, embeddings, chunk search) run twice, the second
    time from the cache alone: every prompt it builds must be the same on a second run for that to hold."""
    first, sources = replayed_on_a_fake_server("cognee", tmp_path, monkeypatch, capsys)
    # each message is one document, cognified whole: every retrieved line is a stored message, sourced to it
    assert first["store"]["stored"] == MESSAGES and first["store"]["health"]["failed_writes"] == 0
    assert sources
    assert first["extras"]["system"]["model_endpoint"]["calls"]["embed"]["local"] > 0


def test_graphiti_records_against_a_schema_valid_fake_server_and_replays_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Graphiti on embedded FalkorDB, run twice, the second time from the cache alone: its uuids (seeded by the
    adapter) and one-call-at-a-time writes keep every prompt the same on a second run."""
    first, _ = replayed_on_a_fake_server("graphiti", tmp_path, monkeypatch, capsys)
    assert first["store"]["health"]["failed_writes"] == 0  # a schema-valid model: every episode was added
    assert first["extras"]["system"]["model_endpoint"]["calls"]["embed"]["local"] > 0


@pytest.mark.local_server
def test_graphiti_builds_its_graph_from_smollm2_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Graphiti's entity, edge and dedupe prompts go to SmolLM2 as json_schema requests the endpoint turns into
    json_object with a schema for llama.cpp's server; its embeddings and the adapter's reranker come from MiniLM."""
    adapter_ready("graphiti", server=True)
    first, endpoint = record_then_replay("graphiti", tmp_path, monkeypatch, capsys)
    messages = messages_of("graphiti")
    assert endpoint["calls"]["extract"]["sent"] >= messages  # at least the entity extraction of every episode
    assert endpoint["translations"]["json_schema_as_json_object"] == endpoint["calls"]["extract"]["sent"]
    assert endpoint["calls"]["embed"]["local"] > 0
    health = first["store"]["health"]
    # every message is an episode, or a write counted as failed: a 135M model's JSON may fail Graphiti's validation
    assert health["episodes"] + health["failed_writes"] == messages


@pytest.mark.local_server
def test_cognee_cognifies_with_smollm2_through_the_endpoint_and_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """cognee's graph extraction goes to SmolLM2 (instructor's json_schema mode, translated for llama.cpp's server);
    a failed structured call is not retried for minutes (the adapter's one attempt) and a failed cognify's document is
    dropped, so the record and the replay both finish, making the same calls in the same order."""
    adapter_ready("cognee", server=True)
    first, endpoint = record_then_replay("cognee", tmp_path, monkeypatch, capsys)
    assert endpoint["calls"]["extract"]["sent"] >= MESSAGES  # each cognify asks for a graph at least
    assert endpoint["translations"]["json_schema_as_json_object"] == endpoint["calls"]["extract"]["sent"]
    store = first["store"]
    assert store["stored"] + store["health"]["failed_writes"] == MESSAGES


def test_a_cognee_write_whose_reply_fails_the_schema_is_counted_failed_at_once_not_retried_for_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model whose JSON never fits cognee's graph schema (a small model cut off at its token cap): each message's
    cognify fails after instructor's re-asks alone, is counted in failed_writes, and the run goes on. cognee's own
    retry (at least 240 s of back-off per call, the same request answered the same from the cache) is off."""
    adapter_ready("cognee", server=False)
    sandbox(tmp_path, monkeypatch)

    def off_schema(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        if path == CHAT_COMPLETIONS and (body.get("response_format") or {}).get("type"):
            return 200, {}, fake_chat_completion(body, '{"nodes": "cut off at the token ca')
        return schema_valid_responder(path, body)

    with FakeModelServer(off_schema) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        run_cli(the_run("cognee", "record", tmp_path / "rec"), monkeypatch, capsys)
        asked = server.count(CHAT_COMPLETIONS)
    first = result_of(tmp_path / "rec")
    assert first["store"]["stored"] == 0 and first["store"]["health"]["failed_writes"] == MESSAGES
    # instructor's re-asks carry the validation error, so each is a new request; cognee's own retry would repeat
    # the same one and sleep first, and tenacity says so in the adapter's log before every sleep
    assert asked >= 2 * MESSAGES
    log = "\n".join(path.read_text(errors="replace") for path in tmp_path.rglob("server.log"))
    assert "cognify of message D1:1 failed" in log and "Retrying cognee." not in log


def test_a_message_cognee_failed_to_cognify_is_dropped_not_retried_with_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Melanie's "swamped with the kids" message gets JSON that never fits the graph schema; every other message gets
    valid JSON. cognee would keep the failed document pending and cognify it again with each later message (counted
    as that message's write, and timing-dependent); the adapter deletes it, so it is asked about only while it is
    written, and the store holds the other seven."""
    adapter_ready("cognee", server=False)
    sandbox(tmp_path, monkeypatch)
    failing, later = "swamped with the kids", "LGBTQ support group"
    graph_requests: list[str] = []  # which message each structured request was about, in the order they came

    def one_message_off_schema(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        if path == CHAT_COMPLETIONS and (body.get("response_format") or {}).get("type"):
            said = json.dumps(body.get("messages"))
            graph_requests.append("failing" if failing in said else "later" if later in said else "other")
            if failing in said:
                return 200, {}, fake_chat_completion(body, '{"nodes": [{"id": "Melanie", "na')
        return schema_valid_responder(path, body)

    with FakeModelServer(one_message_off_schema) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        run_cli(the_run("cognee", "record", tmp_path / "rec"), monkeypatch, capsys)
        recorded = len(graph_requests)
        run_cli(the_run("cognee", "replay", tmp_path / "rep"), monkeypatch, capsys)
    first, again = result_of(tmp_path / "rec"), result_of(tmp_path / "rep")
    assert first["store"]["stored"] == MESSAGES - 1 and first["store"]["health"]["failed_writes"] == 1
    assert "failing" in graph_requests and "later" in graph_requests
    assert graph_requests.index("later") > max(i for i, about in enumerate(graph_requests) if about == "failing")
    assert "D1:2" not in sources_written("cognee", first)
    # the failure replays too: the same calls, all from the cache, none sent, the same store
    assert len(graph_requests) == recorded and again["calls"]["misses"] == 0 and again["store"] == first["store"]
    made = first["extras"]["system"]["model_endpoint"]["calls"]["extract"]
    assert again["extras"]["system"]["model_endpoint"]["calls"]["extract"] == {"cached": sum(made.values())}
