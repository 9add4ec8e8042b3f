"""The OpenAI-compatible client (over the harness's HTTP client) against a local HTTP server speaking chat completions:
what is sent and keyed, log-probabilities, retries that follow Retry-After (recorded, never slept), failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeservers import (  # noqa: F401 (fixtures)
    CHAT_COMPLETIONS,
    Canned,
    FakeModelServer,
    fake_chat_completion,
    fake_openai,
    sleeps,
)

from bench.errors import CacheMiss, ConfigError, OpenAIRefused, OpenAIUnavailable
from bench.models.budget import Budget, Ledger, RunLabels
from bench.models.cache import CallRequest
from bench.models.clients.retry import RetryPolicy
from bench.models.gateway import Gateway
from bench.models.providers.openai.client import LOCAL_PLACEHOLDER_KEY, OpenAIChat, server_identity
from engram import LLM, LLMError

FAKE_KEY = "sk-FAKE-openai-0123456789abcdef"
QUESTION = [{"role": "user", "content": "Where did Melanie camp last summer?"}]


def gateway_at(tmp_path: Path, mode: str | None = "live") -> Gateway:
    labels = RunLabels("openai-test")
    return Gateway(
        local=tmp_path / "cache",
        subsets=[],
        mode=mode,  # type: ignore[arg-type]
        labels=labels,
        budget=Budget(Ledger(tmp_path / "ledger.jsonl"), labels),
    )


@pytest.fixture
def llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeModelServer, sleeps):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    client = OpenAIChat(gateway_at(tmp_path), f"{fake_openai.url}/v1", timeout_s=0.5, retry=RetryPolicy(sleep=sleeps))
    yield client
    client.close()


def answer(llm: OpenAIChat, model: str = "gpt-4o-mini"):
    return llm.complete(
        role="answer", model=model, system="Answer briefly.", messages=QUESTION, max_tokens=256, temperature=0.0
    )


def test_a_completion_sends_the_system_prompt_first_and_is_priced_from_the_stack(llm, fake_openai) -> None:
    assert isinstance(llm, LLM)
    completion = answer(llm)
    sent = fake_openai.requests[0]
    assert sent.path == CHAT_COMPLETIONS
    assert sent.body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "Answer briefly."}, *QUESTION],
        "max_tokens": 256,
        "temperature": 0.0,
    }
    assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert completion.text == "fake reply" and not completion.cached
    assert completion.input_tokens > 0 and completion.output_tokens == 2
    # gpt-4o-mini's price in stacks/openai.toml: $0.15 / $0.60 per million tokens
    assert completion.cost_usd == pytest.approx((completion.input_tokens * 0.15 + 2 * 0.6) / 1e6)
    assert completion.latency_ms > 0


def test_asking_again_is_served_from_cache_with_the_recorded_latency(llm, fake_openai) -> None:
    first, second = answer(llm), answer(llm)
    assert fake_openai.count() == 1
    assert second.cached and (second.text, second.latency_ms, second.cost_usd) == (
        first.text,
        first.latency_ms,
        first.cost_usd,
    )


def test_log_probabilities_are_asked_for_and_passed_through(llm, fake_openai) -> None:
    reply = llm.ask("gpt-4o-mini", QUESTION, purpose="decide", max_tokens=1, logprobs=True, top_logprobs=3)
    assert fake_openai.requests[0].body["logprobs"] is True and fake_openai.requests[0].body["top_logprobs"] == 3
    assert reply.text == "fake reply" and reply.logprobs is not None
    assert [t.token for t in reply.logprobs] == ["fake", "reply"]
    assert reply.logprobs[0].logprob == -0.1
    assert reply.logprobs[0].top == {"fake": -0.1, "fake~1": -2.0, "fake~2": -3.0}
    # the server's JSON is kept whole in the cache, so a replay reads the same alternatives
    assert reply.result.body["choices"][0]["logprobs"]["content"][1]["top_logprobs"][0]["token"] == "reply"


def test_a_reply_without_logprobs_says_so_rather_than_inventing_them(llm, fake_openai) -> None:
    assert llm.ask("gpt-4o-mini", QUESTION, purpose="answer", max_tokens=8).logprobs is None
    # a server that names the token but leaves its log-probability out: not read as log 1 = certain
    reply = fake_chat_completion({"model": "gpt-4o-mini", "messages": QUESTION}, "yes")
    reply["choices"][0]["logprobs"] = {"content": [{"token": "yes", "top_logprobs": []}]}
    fake_openai.script(CHAT_COMPLETIONS, Canned(body=reply))
    partial = llm.ask("gpt-4o-mini", QUESTION, purpose="decide", max_tokens=1, logprobs=True, top_logprobs=2)
    assert partial.text == "yes" and partial.logprobs is None


def test_the_server_is_part_of_the_key_but_the_api_key_is_not(llm, fake_openai, tmp_path, monkeypatch) -> None:
    answer(llm)
    with FakeModelServer() as other:
        elsewhere = OpenAIChat(llm.gateway, f"{other.url}/v1", retry=llm.retry)
        try:
            assert not answer(elsewhere).cached and other.count() == 1  # another server is asked afresh
        finally:
            elsewhere.close()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-key-entirely")
    again = OpenAIChat(llm.gateway, f"{fake_openai.url}/v1/", retry=llm.retry)  # trailing slash: same server
    try:
        assert answer(again).cached and fake_openai.count() == 1
    finally:
        again.close()
    for key in llm.gateway.keys_read():
        assert FAKE_KEY not in key


def test_server_identity_is_scheme_host_port_and_path_without_credentials() -> None:
    assert server_identity("https://user:secret@API.example.com/v1/?x=1") == "https://api.example.com:443/v1"
    assert server_identity("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert server_identity("http://[::1]:11434/v1") == "http://[::1]:11434/v1"
    with pytest.raises(ConfigError, match="expected an http"):
        server_identity("127.0.0.1:8000/v1")


def test_a_429_waits_as_long_as_retry_after_asks_then_succeeds(llm, fake_openai, sleeps) -> None:
    limited = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    fake_openai.script(CHAT_COMPLETIONS, Canned(429, body=limited, headers={"Retry-After": "3"}))
    assert answer(llm).text == "fake reply"
    assert sleeps.delays == [3.0] and fake_openai.count() == 2


def test_retry_after_ms_is_read_in_milliseconds(llm, fake_openai, sleeps) -> None:
    fake_openai.script(
        CHAT_COMPLETIONS, Canned(429, body={"error": {"message": "slow"}}, headers={"retry-after-ms": "1500"})
    )
    answer(llm)
    assert sleeps.delays == [1.5]


def test_a_long_rate_limit_does_not_end_the_run_when_the_stack_allows_long_waits(
    tmp_path, fake_openai, sleeps, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    # stacks/openai.toml: 6 attempts, waits up to 60 s
    patient = OpenAIChat(
        gateway_at(tmp_path), f"{fake_openai.url}/v1", retry=RetryPolicy(attempts=6, max_retry_after_s=60, sleep=sleeps)
    )
    busy = Canned(429, body={"error": {"message": "try again in 20s"}}, headers={"Retry-After": "20"})
    fake_openai.script(CHAT_COMPLETIONS, busy, busy, busy, busy)
    try:
        assert answer(patient).text == "fake reply"
    finally:
        patient.close()
    assert sleeps.delays == [20.0] * 4 and fake_openai.count() == 5


def test_a_500_is_retried_with_backoff(llm, fake_openai, sleeps) -> None:
    fake_openai.script(CHAT_COMPLETIONS, Canned(500, body={"error": {"message": "internal"}}))
    assert answer(llm).text == "fake reply" and sleeps.delays == [0.25]


def test_timeouts_exhaust_the_retries_as_an_llm_error(llm, fake_openai, sleeps) -> None:
    fake_openai.script(CHAT_COMPLETIONS, *[Canned(delay_s=0.5)] * 3)
    impatient = OpenAIChat(llm.gateway, f"{fake_openai.url}/v1", timeout_s=0.15, retry=llm.retry)
    try:
        with pytest.raises(OpenAIUnavailable, match="timeout, timeout, timeout") as caught:
            answer(impatient)
    finally:
        impatient.close()
    assert isinstance(caught.value, LLMError) and fake_openai.wait_for_count(3) == 3


@pytest.mark.parametrize(
    "raw",
    [b'{"id": "chatcmpl-1", "choices": [tru', b'{"id": "chatcmpl-1", "object": "chat.completion"}'],
    ids=["truncated JSON", "JSON without choices"],
)
def test_a_malformed_reply_is_an_error_and_is_not_cached(llm, fake_openai, raw: bytes) -> None:
    fake_openai.script(CHAT_COMPLETIONS, Canned(raw=raw))
    with pytest.raises(OpenAIUnavailable, match="expected a (JSON reply|chat completion)"):
        answer(llm)
    assert len(llm.gateway.local) == 0


def test_an_unknown_model_404_fails_at_once_and_stops_the_run(llm, fake_openai, sleeps) -> None:
    fake_openai.script(
        CHAT_COMPLETIONS,
        Canned(404, body={"error": {"message": "The model `local-model` does not exist", "code": "model_not_found"}}),
    )
    with pytest.raises(OpenAIRefused, match="found 404") as caught:
        answer(llm, model="local-model")
    assert not isinstance(caught.value, LLMError) and fake_openai.count() == 1 and sleeps.delays == []


def test_a_local_server_is_called_without_a_key_but_a_remote_one_is_not(tmp_path, fake_openai, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = OpenAIChat(gateway_at(tmp_path), f"{fake_openai.url}/v1")
    try:
        assert answer(local, model="local-model").text == "fake reply"
    finally:
        local.close()
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    remote = OpenAIChat(gateway_at(tmp_path / "remote"), "https://api.openai.com/v1")
    try:
        with pytest.raises(OpenAIRefused, match="OPENAI_API_KEY: expected a key"):
            answer(remote)
    finally:
        remote.close()


def test_replay_without_a_key_raises_cache_miss_and_sends_nothing(tmp_path, fake_openai, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = OpenAIChat(gateway_at(tmp_path, mode=None), f"{fake_openai.url}/v1")
    try:
        with pytest.raises(CacheMiss, match="openai/gpt-4o-mini \\(purpose answer"):
            answer(client)
    finally:
        client.close()
    assert fake_openai.count() == 0


def test_keys_of_the_other_providers_are_unchanged_by_the_server_field() -> None:
    # The target field joins a key only when set: every recorded Anthropic, Jev and stand-in call keeps its key.
    body = {"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": QUESTION}
    request = CallRequest("anthropic", "messages", "claude-sonnet-4-6", body, "answer")
    assert "target" not in request.key_material()
    assert (
        CallRequest("openai", "chat.completions", "m", body, "answer", 0, "http://a:1/v1").key()
        != CallRequest("openai", "chat.completions", "m", body, "answer", 0, "http://b:1/v1").key()
    )


def test_a_server_that_only_answers_429_is_rate_limited(llm, fake_openai, sleeps) -> None:
    from bench.errors import OpenAIRateLimited, ProviderRateLimited

    fake_openai.script(CHAT_COMPLETIONS, *[Canned(429, body={"error": {"message": "slow down"}})] * 3)
    with pytest.raises(OpenAIRateLimited, match="429, 429, 429") as caught:
        answer(llm)
    assert isinstance(caught.value, ProviderRateLimited) and isinstance(caught.value, LLMError)
    assert caught.value.provider == "openai"


def test_429_then_500s_is_an_outage_not_a_rate_limit(llm, fake_openai, sleeps) -> None:
    from bench.errors import ProviderRateLimited

    fake_openai.script(CHAT_COMPLETIONS, Canned(429, body={"error": {"message": "slow"}}), Canned(500), Canned(503))
    with pytest.raises(OpenAIUnavailable, match="429, 500, 503") as caught:
        answer(llm)
    assert not isinstance(caught.value, ProviderRateLimited)


def test_a_reply_without_choices_is_a_malformed_reply_of_the_openai_provider(llm, fake_openai) -> None:
    from bench.errors import ProviderMalformedReply

    fake_openai.script(CHAT_COMPLETIONS, Canned(raw=b'{"id": "chatcmpl-9", "choices": []}'))
    with pytest.raises(ProviderMalformedReply, match="expected a chat completion") as caught:
        answer(llm)
    assert caught.value.provider == "openai" and isinstance(caught.value, LLMError)
