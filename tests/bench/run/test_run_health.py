"""A run against a broken model must not look like a success: every result names the server that answered each
role and the model id it reported, counts the unusable replies per role, and a run whose extraction replies were
all unreadable (so nothing was stored) stops under --strict with one line naming the role, or warns without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakeservers import CHAT_COMPLETIONS, FakeModelServer, fake_chat_completion

from bench.analysis.replies import verdict
from bench.results.schema import read_result
from bench.run.health import RunHealth
from tests.cli_main import exit_code_of


def cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_code_of(argv, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_each_role_has_its_own_idea_of_a_usable_reply() -> None:
    assert verdict("extract", '```json\n{"memory": [{"text": "Ines keeps bees"}]}\n```') == "ok"
    assert verdict("extract", 'Sure! {"facts": []}') == "ok"  # an empty list is a readable "nothing new"
    assert verdict("extract", "Ines keeps bees, and that is all I can say.") == "unreadable"
    assert verdict("extract", "   ") == "empty"
    assert verdict("judge", 'Reasoning first. {"label": "wrong"}') == "ok"
    assert verdict("judge", "CORRECT, clearly") == "unreadable"
    assert verdict("decide", '{"probabilities": {"new": 0.9}}') == "ok"
    assert verdict("answer", "Ghent, in 2019") == "ok"
    assert verdict("answer", "") == "empty"


def test_a_foreign_librarys_replies_are_read_by_its_own_format_not_the_roles() -> None:
    """A-MEM's analysis through the gateway endpoint is purpose "extract" but has no mem0 `facts` list: readable
    JSON is fine, prose where JSON was asked is not, and a tool call is an answer."""
    from bench.models.cache import ENDPOINT_CALLER, CallRequest

    def served(text: str | None, asked: dict[str, Any], tool_calls: list[Any] | None = None) -> dict[str, Any]:
        message = {"content": text, "tool_calls": tool_calls} if tool_calls else {"content": text}
        return {"model": "smol", "choices": [{"message": message}]}

    json_body = {"messages": [], "response_format": {"type": "json_object"}}

    class Reply:
        def __init__(self, body: dict[str, Any]) -> None:
            self.body = body

    health = RunHealth()
    for caller, body, reply in [
        (ENDPOINT_CALLER, json_body, served('{"keywords": ["kayak"], "context": "river trip"}', json_body)),
        (ENDPOINT_CALLER, json_body, served(None, json_body, [{"function": {"name": "Memory"}}])),
        (ENDPOINT_CALLER, {"messages": []}, served("plain prose is what this call asked for", {})),
        (ENDPOINT_CALLER, json_body, served("no braces anywhere, sorry", json_body)),
        ("", {"messages": []}, served('{"keywords": ["kayak"]}', {})),  # the harness's own extract: mem0's rule
    ]:
        request = CallRequest("openai", "chat.completions", "smol", body, "extract", 0, "http://x/v1", caller)
        health.watch(request, Reply(reply))
    assert health.roles["extract"].calls == 5 and health.roles["extract"].unreadable == 2


def test_a_role_is_broken_only_past_half_its_replies_and_a_few_calls() -> None:
    class Request:
        provider, target = "openai", "http://127.0.0.1:9/v1"

        def __init__(self, purpose: str) -> None:
            self.purpose = purpose

    class Reply:
        cached = False

        def __init__(self, text: str) -> None:
            self.body = {"model": "tiny-model-q4", "choices": [{"message": {"content": text}}]}

    health = RunHealth()
    for text in ("{}", "nope", "nope", "{}"):  # two of four unreadable: not more than half
        health.watch(Request("decide"), Reply(text))
    assert health.problems() == []
    health.watch(Request("decide"), Reply("still nope"))
    assert health.problems() == ["decide: 3 of 5 replies unusable (3 unreadable, 0 empty)"]
    assert health.servers["decide"] == {
        "provider": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model_reported": "tiny-model-q4",
    }


def _prose_only(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """A server whose model never writes the JSON an extraction asks for (but judges in the expected form)."""
    if path == CHAT_COMPLETIONS:
        prompt = str(body.get("messages"))
        text = '{"label": "WRONG"}' if "CORRECT" in prompt and "WRONG" in prompt else "I am a helpful assistant."
        return 200, {}, fake_chat_completion(body, text)
    return 404, {}, {"error": {"message": f"no route {path}"}}


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-for-the-test-server")
    return tmp_path


@pytest.mark.slow
def test_unreadable_extractions_stop_a_strict_run_and_are_named_in_a_lenient_one(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "engram", "--slice", "dev", "--stack", "openai", "--mode", "record", "--yes", "--quiet", "--k", "3"]
    with FakeModelServer(_prose_only) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        code, out, err = cli([*argv, "--strict", "--out", str(sandbox / "strict")], monkeypatch, capsys)
        assert code == 2, out
        assert len(err.splitlines()) == 1 and "extract:" in err and "0 facts stored" in err
        assert not list((sandbox / "strict").glob("*.json")) if (sandbox / "strict").exists() else True

        code, out, err = cli([*argv, "--out", str(sandbox / "lenient")], monkeypatch, capsys)
        assert code == 0, err
        assert "WARNING" in err and "extract:" in err
    result = read_result(sandbox / "lenient" / "engram__k3.json")
    health = result.extras["health"]
    assert (
        health["facts_stored"] == 0 and health["roles"]["extract"]["unreadable"] == health["roles"]["extract"]["calls"]
    )
    assert any(problem.startswith("extract:") for problem in health["problems"])
    # the result names the server that answered, not only the model the stack file asked for
    assert result.extras["servers"]["extract"]["base_url"] == f"{server.url}/v1"
    assert result.extras["servers"]["answer"]["model_reported"] == "gpt-4o-mini"


def test_compare_shows_each_sides_health_and_servers(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "full-context", "--slice", "dev", "--stack", "openai", "--mode", "record", "--yes", "--quiet"]
    with FakeModelServer(_prose_only) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        assert cli([*argv, "--out", str(sandbox / "a")], monkeypatch, capsys)[0] == 0
    code, out, err = cli(
        ["compare", str(sandbox / "a" / "full-context.json"), str(sandbox / "a" / "full-context.json")],
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    assert f"answer {server.url}/v1 (gpt-4o-mini)" in out and "healthy" in out
