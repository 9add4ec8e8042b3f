"""The Anthropic client (through the real `anthropic` SDK) against a local HTTP server speaking the Messages API."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeservers import COUNT_TOKENS, MESSAGES, Canned, FakeModelServer, fake_anthropic, sleeps  # noqa: F401 (fixtures)

from bench.errors import AnthropicRefused, AnthropicUnavailable, CacheMiss
from bench.models.budget import Budget, Ledger, RunLabels
from bench.models.clients.retry import RetryPolicy
from bench.models.gateway import Gateway
from bench.models.providers.anthropic.client import AnthropicLLM, AnthropicTokenCounter
from engram import LLM, LLMError

FAKE_KEY = "sk-ant-FAKE-0123456789abcdef"
QUESTION = [{"role": "user", "content": "When did Caroline go to the LGBTQ support group?"}]


@pytest.fixture
def llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic, sleeps):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    labels = RunLabels("anthropic-test")
    gateway = Gateway(
        local=tmp_path / "cache", subsets=[], labels=labels, budget=Budget(Ledger(tmp_path / "ledger.jsonl"), labels)
    )
    client = AnthropicLLM(gateway, timeout_s=0.5, retry=RetryPolicy(sleep=sleeps))
    yield client
    client.close()


def answer(llm: AnthropicLLM):
    return llm.complete(
        role="answer",
        model="claude-sonnet-4-6",
        system="Answer in five words.",
        messages=QUESTION,
        max_tokens=1024,
        temperature=0.0,
    )


def test_a_completion_sends_sampling_parameters_in_the_body_and_is_priced(llm, fake_anthropic) -> None:
    assert isinstance(llm, LLM)
    completion = answer(llm)
    sent = fake_anthropic.requests[0]
    assert sent.path == MESSAGES
    assert sent.body == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "messages": QUESTION,
        "system": "Answer in five words.",
        "temperature": 0.0,
    }
    assert FAKE_KEY in (sent.headers.get("x-api-key", "") + sent.headers.get("authorization", ""))
    assert completion.text == "fake reply" and completion.model == "claude-sonnet-4-6" and not completion.cached
    expected_cost = (completion.input_tokens * 3 + completion.output_tokens * 15) / 1e6
    assert completion.cost_usd == pytest.approx(expected_cost) and completion.latency_ms > 0


def test_the_same_call_again_is_served_from_cache_with_its_recorded_latency(llm, fake_anthropic) -> None:
    first, second = answer(llm), answer(llm)
    assert fake_anthropic.count() == 1
    assert second.cached and (second.text, second.latency_ms, second.cost_usd) == (
        first.text,
        first.latency_ms,
        first.cost_usd,
    )


def test_token_counts_go_through_the_count_endpoint_and_are_cached(llm, fake_anthropic) -> None:
    counter = AnthropicTokenCounter(llm)
    assert counter.count("Caroline lives in Boston.") == counter.count("Caroline lives in Boston.") > 0
    assert fake_anthropic.count(COUNT_TOKENS) == 1
    assert llm.gateway.spent_usd == 0.0  # counting is free


def test_429_with_retry_after_then_success(llm, fake_anthropic, sleeps) -> None:
    fake_anthropic.script(
        MESSAGES,
        Canned(
            429,
            body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            headers={"Retry-After": "2"},
        ),
    )
    assert answer(llm).text == "fake reply"
    assert sleeps.delays == [2.0] and fake_anthropic.count() == 2


def test_500_then_success(llm, fake_anthropic, sleeps) -> None:
    fake_anthropic.script(
        MESSAGES, Canned(500, body={"type": "error", "error": {"type": "api_error", "message": "boom"}})
    )
    assert answer(llm).text == "fake reply" and sleeps.delays == [0.25]


def test_timeouts_exhaust_the_retries_as_an_llm_error(llm, fake_anthropic, sleeps) -> None:
    fake_anthropic.script(MESSAGES, *[Canned(delay_s=0.5)] * 3)
    impatient = AnthropicLLM(llm.gateway, timeout_s=0.15, retry=llm.retry)
    with pytest.raises(AnthropicUnavailable, match="timeout, timeout, timeout") as caught:
        answer(impatient)
    impatient.close()
    assert isinstance(caught.value, LLMError) and fake_anthropic.wait_for_count(3) == 3


def test_a_malformed_json_reply_is_an_error_and_is_not_cached(llm, fake_anthropic) -> None:
    fake_anthropic.script(MESSAGES, Canned(raw=b'{"id": "msg_1", "content": [tru'))
    with pytest.raises(AnthropicUnavailable, match="unreadable"):
        answer(llm)
    assert len(llm.gateway.local) == 0


def test_401_fails_at_once_and_stops_the_run(llm, fake_anthropic, sleeps) -> None:
    fake_anthropic.script(
        MESSAGES,
        Canned(401, body={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    )
    with pytest.raises(AnthropicRefused, match="found 401") as caught:
        answer(llm)
    assert not isinstance(caught.value, LLMError) and fake_anthropic.count() == 1 and sleeps.delays == []


def test_replay_without_a_key_raises_cache_miss_and_sends_nothing(tmp_path, fake_anthropic, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = AnthropicLLM(Gateway(local=tmp_path / "cache", subsets=[]))
    with pytest.raises(CacheMiss, match="anthropic/claude-sonnet-4-6 \\(purpose answer"):
        answer(client)
    assert fake_anthropic.count() == 0


def test_an_unreadable_reply_and_a_refusal_are_different_kinds_naming_anthropic(llm, fake_anthropic, sleeps) -> None:
    from bench.errors import ProviderMalformedReply, ProviderRefused

    fake_anthropic.script(MESSAGES, Canned(raw=b'{"id": "msg_2", "content": [nul'))
    with pytest.raises(ProviderMalformedReply) as malformed:
        answer(llm)
    fake_anthropic.script(
        MESSAGES, Canned(403, body={"type": "error", "error": {"type": "permission_error", "message": "no"}})
    )
    with pytest.raises(ProviderRefused) as refused:
        answer(llm)
    assert malformed.value.provider == refused.value.provider == "anthropic"
    assert isinstance(malformed.value, LLMError) and not isinstance(refused.value, LLMError)
