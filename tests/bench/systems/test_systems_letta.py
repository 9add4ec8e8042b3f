"""Letta as an arm (systems/letta/): its adapter, in its own environment, against a Letta server. No Letta server
with an embedded store installs from PyPI, so these tests run it against tests/bench/fake_letta_server.py, which
answers the routes `letta-client` calls and embeds through whatever endpoint the agent names, as a real one does.

Skips unless the adapter's environment is built (`engram-bench systems install letta`); with
ENGRAM_BENCH_REQUIRE_ADAPTERS=1 (set by .ci/run) a missing one fails instead.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from fake_letta_server import FakeLettaServer

from bench.systems.adapters import load_adapter
from tests.cli_main import exit_code_of

REQUIRE_ADAPTERS = "ENGRAM_BENCH_REQUIRE_ADAPTERS"
MESSAGES, QUESTIONS = 8, 5


@pytest.fixture(autouse=True)
def letta_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = load_adapter("letta").not_runnable_reason()
    if reason is not None and os.environ.get(REQUIRE_ADAPTERS) == "1":
        pytest.fail(f"{REQUIRE_ADAPTERS}=1 but letta: {reason}")
    if reason is not None:
        pytest.skip(f"letta adapter test skipped: {reason}")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))


def run_letta(out: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    argv = ["run", "letta", "--slice", "dev", "--limit", str(QUESTIONS), "--messages", str(MESSAGES), "--out", str(out)]
    code = exit_code_of([*argv, "--quiet"], monkeypatch)
    return code, capsys.readouterr().err


def the_result(folder: Path) -> dict[str, Any]:
    [path] = folder.glob("*.json")
    return dict(json.loads(path.read_text()))


def test_each_message_becomes_an_archival_passage_and_the_support_group_question_finds_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLettaServer() as letta:
        monkeypatch.setenv("LETTA_BASE_URL", letta.url)
        code, err = run_letta(tmp_path / "out", monkeypatch, capsys)
        assert code == 0, err
        stored = letta.passages_of("engram-bench-conv-26")
        embedded_by_server = letta.embedding_calls
    result = the_result(tmp_path / "out")
    assert result["store"]["stored"] == MESSAGES and result["store"]["health"]["empty_writes"] == 0
    # every passage carries the id of the message it holds, and holds that message's words
    assert sorted(tag for p in stored for tag in p["tags"]) == sorted(f"engram-message:D1:{i}" for i in range(1, 9))
    assert any("support group" in p["text"] and p["tags"] == ["engram-message:D1:3"] for p in stored)
    first = result["answers"][0]
    assert "LGBTQ support group" in first["question"] and first["sources"][0] == ["D1:3"]
    written = {f"D1:{i}" for i in range(1, MESSAGES + 1)}
    assert {s for a in result["answers"] for line in a["sources"] for s in line} <= written
    # the server's embeddings went through the harness's endpoint (MiniLM, served there), one call per request
    endpoint = result["extras"]["system"]["model_endpoint"]
    assert endpoint["calls"]["embed"]["local"] == embedded_by_server > MESSAGES
    assert result["extras"]["system"]["memory_system"]["library"] == "letta-client"


def test_a_run_without_a_letta_server_address_stops_in_one_line_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LETTA_BASE_URL", raising=False)
    code, err = run_letta(tmp_path / "out", monkeypatch, capsys)
    assert code == 2 and "LETTA_BASE_URL is not set" in err
    assert not list((tmp_path / "out").glob("*.json"))


def test_a_letta_server_that_is_not_there_stops_the_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("LETTA_BASE_URL", f"http://127.0.0.1:{port}")
    code, err = run_letta(tmp_path / "out", monkeypatch, capsys)
    assert code == 2 and f"the Letta server at http://127.0.0.1:{port} did not answer" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not list((tmp_path / "out").glob("*.json"))
