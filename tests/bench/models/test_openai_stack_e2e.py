"""The openai stack end to end through the command line, against a local OpenAI-compatible server: a researcher
points OPENAI_BASE_URL at their server, records `full-context` on the dev slice, then replays it with the server
gone and gets the same answers, verdicts and token counts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fakeservers import CHAT_COMPLETIONS, FakeModelServer

from bench.models.providers.openai.client import LOCAL_PLACEHOLDER_KEY
from bench.results.schema import read_result
from tests.cli_main import exit_code_of


def cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_code_of(argv, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-for-the-test-server")
    return tmp_path


def test_full_context_on_the_openai_stack_records_then_replays_with_the_server_gone(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded, replayed = sandbox / "recorded", sandbox / "replayed"
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        code, out, err = cli(
            [
                "run",
                "full-context",
                "--slice",
                "dev",
                "--stack",
                "openai",
                "--mode",
                "record",
                "--yes",
                "--quiet",
                "--out",
                str(recorded),
            ],
            monkeypatch,
            capsys,
        )
        assert code == 0, err
        sent = server.count(CHAT_COMPLETIONS)
    first = read_result(recorded / "full-context.json")
    assert sent == 2 * len(first.answers) > 0  # one answer and one judge call per question
    assert first.models["answer"] == "openai/gpt-4o-mini" and first.models["judge"] == "openai/gpt-4o-mini"
    assert first.models["count_tokens"] in ("openai/approx-wordpiece-v1", "openai/tiktoken-o200k_base")
    assert first.standins == []  # every role is the OpenAI-compatible model, typed decisions included
    assert {a.answer for a in first.answers} == {"fake reply"} and all(a.label == "CORRECT" for a in first.answers)
    assert "gpt-4o-mini" in out and "stand-ins for" not in out
    # the banner is a few short lines from "run full-context on dev" on; the estimate is one of them
    banner = out[out.index("run full-context on dev") :]
    assert "estimate: up to $" in banner and f"uncached of {sent + len(first.answers) + 1} calls" in banner

    # the server is gone (its port closed) and the key too: only the cache answers now
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out, err = cli(
        [
            "run",
            "full-context",
            "--slice",
            "dev",
            "--stack",
            "openai",
            "--mode",
            "replay",
            "--quiet",
            "--out",
            str(replayed),
        ],
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    second = read_result(replayed / "full-context.json")
    assert [a.to_dict() if hasattr(a, "to_dict") else a for a in second.answers] == [
        a.to_dict() if hasattr(a, "to_dict") else a for a in first.answers
    ]
    assert second.calls.misses == 0 and second.calls.hits > 0
    assert (
        json.loads((replayed / "full-context.json").read_text())["models"]
        == json.loads((recorded / "full-context.json").read_text())["models"]
    )


def test_a_replay_that_misses_says_how_to_call_live_and_writes_nothing(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    out_dir = sandbox / "never"
    code, _, err = cli(
        [
            "run",
            "full-context",
            "--slice",
            "dev",
            "--stack",
            "openai",
            "--limit",
            "1",
            "--quiet",
            "--out",
            str(out_dir),
        ],
        monkeypatch,
        capsys,
    )
    assert code == 2 and len(err.splitlines()) == 1
    assert "no cached response for openai/gpt-4o-mini" in err and "OPENAI_API_KEY" in err
    assert not (out_dir / "full-context.json").exists()


def test_the_local_stack_needs_no_key_and_asks_no_spending_question(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: a paid run would stop here
    monkeypatch.delenv("ENGRAM_ASSUME_YES", raising=False)
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")  # the laptop's server, on another port
        code, out, err = cli(
            [
                "run",
                "full-context",
                "--stack",
                "local",
                "--limit",
                "2",
                "--mode",
                "record",
                "--quiet",
                "--out",
                str(sandbox / "local"),
            ],
            monkeypatch,
            capsys,
        )
        sent = list(server.requests)
    assert code == 0, err
    assert len(sent) == 4 and {r.body["model"] for r in sent} == {"local-model"}
    assert {r.headers["authorization"] for r in sent} == {f"Bearer {LOCAL_PLACEHOLDER_KEY}"}
    result = read_result(sandbox / "local" / "full-context.json")
    assert (
        result.models["answer"] == "openai/local-model"
        and result.models["count_tokens"] == "openai/approx-wordpiece-v1"
    )
    assert "declared free in the stack: $0" in out
    assert json.loads((sandbox / "ledger.jsonl").read_text().splitlines()[0])["usd"] == 0.0
