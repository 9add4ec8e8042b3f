"""Answer, judge and token count on the paper stack, over real HTTP to a local fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakeservers import COUNT_TOKENS, MESSAGES, FakeModelServer, default_responder, fake_message

from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.judge import CORRECT
from bench.models.providers import Models
from bench.models.stacks import build_stack
from bench.models.tokens import retrieved_tokens

LINES = ["1:56 pm on 8 May, 2023: Caroline went to a LGBTQ support group"]


def paper_models(gateway: Gateway) -> Models:
    """The paper stack's answerer, judge and counter, sharing one Anthropic client."""
    return Models.for_stack("paper", build_stack("paper").models, gateway, shared_minilm)


def responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    if path != MESSAGES:
        return default_responder(path, body)
    if body.get("system"):  # the answer prompt travels as the system prompt
        return 200, {}, fake_message(body, "7 May 2023")
    return 200, {}, fake_message(body, 'Same date. {"label": "CORRECT"}')


def test_paper_answer_judge_and_count_go_to_claude_and_replay_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-FAKE-0123456789abcdef")
    with FakeModelServer(responder) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        gateway = Gateway(local=tmp_path / "cache", subsets=[], mode="record")
        models = paper_models(gateway)
        try:
            answer = models.answerer().answer("When did Caroline go?", LINES, ["Caroline", "Melanie"], ["Caroline"])
            verdict = models.judge().judge("When did Caroline go?", "7 May 2023", answer.text)
            tokens = retrieved_tokens(models.token_counter(), LINES)
        finally:
            models.close()
        bodies = [r.body for r in server.requests if r.path == MESSAGES]
        counted = [r.body for r in server.requests if r.path == COUNT_TOKENS]

    assert (answer.text, verdict.label) == ("7 May 2023", CORRECT) and answer.cost_usd > 0
    answer_body, judge_body = bodies
    assert answer_body["temperature"] == 0.0 and answer_body["max_tokens"] == 1024
    assert "Caroline went to a LGBTQ support group" in answer_body["system"]
    assert "Gold answer: 7 May 2023" in judge_body["messages"][0]["content"] and judge_body["temperature"] == 0.0
    assert [c["messages"][0]["content"] for c in counted] == [json.dumps(LINES, indent=4), "[]"]
    assert tokens > 0

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replay = Gateway(local=tmp_path / "cache", subsets=[], strict=True)
    models = paper_models(replay)
    try:
        again = models.answerer().answer("When did Caroline go?", LINES, ["Caroline", "Melanie"], ["Caroline"])
        assert again.text == answer.text and again.cached
        assert retrieved_tokens(models.token_counter(), LINES) == tokens
    finally:
        models.close()
