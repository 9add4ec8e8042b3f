"""mem0 on the paper stack: its one extraction call per message goes to Anthropic (a local fake server) through
the gateway with mem0's own prompt and defaults, and replays from the cache with the server gone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer, default_responder, fake_message

from bench.data.slices import load_slice
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.stacks import build_stack
from bench.systems import SystemContext, build_system

pytestmark = pytest.mark.slow
TURNS = 3


def extraction_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """Answers mem0's extraction request with one memory: the new message's last line, in mem0's JSON."""
    if path != MESSAGES:
        return default_responder(path, body)
    user = body["messages"][-1]["content"]
    new = [line for line in user.splitlines() if line.startswith("user: [")][-1]
    memory = new.split("] ", 1)[1]
    return 200, {}, fake_message(body, json.dumps({"memory": [{"id": "0", "text": memory}]}))


def _system(tmp: Path, cache: Path, mode: str, strict: bool = False):
    dev = load_slice("dev")
    gateway = Gateway(local=cache, subsets=[], mode=mode, strict=strict)
    context = SystemContext(
        stack="paper",
        models=build_stack("paper").models,
        gateway=gateway,
        run_dir=tmp,
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )
    return build_system("mem0", {}, context), dev


def test_mem0_extraction_goes_to_claude_haiku_with_mems0_own_request_then_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-FAKE-0123456789abcdef")
    with FakeModelServer(extraction_responder) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        system, dev = _system(tmp_path / "run1", tmp_path / "cache", "record")
        try:
            usages = [system.write(m) for m in dev.messages[:TURNS]]
            recorded = system.facts_for_audit()
        finally:
            system.close()
        sent = [r.body for r in server.requests if r.path == MESSAGES]

    assert len(sent) == TURNS  # one call per add()
    from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT

    for body in sent:
        assert body["model"] == "claude-haiku-4-5"
        assert body["max_tokens"] == 2000 and body["temperature"] == 0.1  # mem0's defaults
        assert body["system"] == ADDITIVE_EXTRACTION_PROMPT
        assert "## Current Date\n2026-09-23" in body["messages"][0]["content"]
    assert all(u.extract_cost_usd > 0 and u.calls == 1 for u in usages)  # priced at Haiku's rates
    assert [f.source_message_id for f in recorded] == [m.id for m in dev.messages[:TURNS]]

    # The server is gone and no key is needed: strict replay rebuilds the same store from the cache.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replay, _ = _system(tmp_path / "run2", tmp_path / "cache", "replay", strict=True)
    try:
        replayed = [replay.write(m) for m in dev.messages[:TURNS]]
        assert [(f.fact_id, f.text) for f in replay.facts_for_audit()] == [(f.fact_id, f.text) for f in recorded]
        assert [u.extract_cost_usd for u in replayed] == [u.extract_cost_usd for u in usages]  # nominal costs
        assert [u.extract_ms for u in replayed] == [u.extract_ms for u in usages]  # recorded latencies
    finally:
        replay.close()
