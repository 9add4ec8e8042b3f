"""The paper stack end to end, against local fake Anthropic and Jev servers: record, export, stop, replay.

A researcher with keys runs an arm on the paper stack in record mode; the calls it read are exported as a subset;
with the servers gone and no keys, a strict replay from that subset alone writes the same result file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakeservers import COUNT_TOKENS, MESSAGES, SYSTEMONE, FakeModelServer, default_responder, fake_message

from bench.cli.commands.cache import export_run
from bench.data.slices import Slice, load_slice
from bench.results.schema import read_result
from bench.run.runner import run_arm
from tests.bench.run_args import changed, run_args


def six_message_slice() -> Slice:
    """The first 6 dev messages and 2 questions about them (a test-only slice)."""
    dev = load_slice("dev")
    messages = dev.messages[:6]
    ids = {m.id for m in messages}
    answerable = [q for q in dev.questions if q.evidence and set(q.evidence) <= ids]
    others = [q for q in dev.questions if q not in answerable]
    questions = tuple(replace(q, asked_at=(1,)) for q in (answerable + others)[:2])
    return replace(dev, messages=messages, questions=questions, checkpoints=(1,))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(block.get("text", "") for block in content if isinstance(block, dict))


def plausible_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """Extraction JSON for mem0's prompt, a judge label for the judge prompt, a short answer otherwise; Jev and
    token counts from the default fake."""
    if path != MESSAGES:
        return default_responder(path, body)
    user = _text_of(body["messages"][-1]["content"])
    system = body.get("system") or ""
    system_text = system if isinstance(system, str) else _text_of(system)
    if "CORRECT" in user and "WRONG" in user:
        digest = int(hashlib.sha256(user.encode()).hexdigest(), 16)
        label = "CORRECT" if digest % 2 else "WRONG"
        return 200, {}, fake_message(body, json.dumps({"reasoning": "fake", "label": label}))
    if len(system_text) > 5000:  # mem0's additive extraction prompt
        fact = "The speaker said: " + " ".join(user.split()[-12:])
        return 200, {}, fake_message(body, json.dumps({"memory": [{"id": "0", "text": fact}]}))
    return 200, {}, fake_message(body, "a short fake answer")


@pytest.mark.parametrize("arm", ["mem0", "engram-jev"])
def test_record_on_the_paper_stack_then_replay_without_servers_or_keys(
    arm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.systems import system_names

    wanted = {"mem0": "mem0", "engram-jev": "engram"}[arm]
    if wanted not in system_names():
        pytest.skip(f"system {wanted!r} is not registered in this checkout")
    tiny = six_message_slice()
    base = run_args(
        stack="paper",
        ks=(3,),
        results_root=tmp_path / "results",
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        slice_loader=lambda name: tiny,
    )

    with FakeModelServer(plausible_responder) as anthropic, FakeModelServer(plausible_responder) as jev:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("TYPESAFE_URL", jev.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
        monkeypatch.setenv("TYPESAFE_API_KEY", "test-key-for-the-fake-server")
        recorded_path = run_arm(arm, "dev", *changed(base, mode="record", assume_yes=True))[0]
        assert anthropic.count(MESSAGES) > 0 and anthropic.count(COUNT_TOKENS) > 0
        if arm == "engram-jev":
            assert jev.count(SYSTEMONE) > 0
    recorded = json.loads(recorded_path.read_text())
    assert recorded["stack"] == "paper" and recorded["standins"] == []
    assert recorded["calls"]["misses"] > 0

    subset = tmp_path / "subset"
    export_run(str(recorded_path), subset, cache_dir=tmp_path / "cache", subsets=[])
    for variable in ("ANTHROPIC_API_KEY", "TYPESAFE_API_KEY"):
        monkeypatch.delenv(variable)
    replay_root = tmp_path / "replay"
    replayed_path = run_arm(
        arm, "dev", *changed(base, results_root=replay_root, use_local_cache=False, strict=True, subsets=(subset,))
    )[0]
    replayed = json.loads(replayed_path.read_text())

    for data in (recorded, replayed):
        data.pop("timing")
        data.pop("calls")  # recording missed every call, the replay hit every one: the only other difference
        data["provenance"].pop("cache_subset_sha256")
    assert replayed == recorded
    assert read_result(replayed_path).accuracy.n == 2
