"""A server reply quoted in an error never shows a key or an Authorization value."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeservers import MESSAGES, SYSTEMONE, Canned, FakeModelServer

from bench.models.clients.retry import RetryPolicy
from bench.models.gateway import Gateway
from bench.models.providers.anthropic.client import AnthropicLLM, AnthropicRefused
from bench.models.providers.jev.client import JevDecider, JevRefused
from bench.models.redact import MASK, quoted, redact
from engram import Ask, Question

ANTHROPIC_KEY = "sk-ant-api03-SECRETsecretSECRET"
JEV_KEY = "ts-live-SECRET-0123456789"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer abc.def.ghi-123", "abc.def.ghi-123"),
        ('{"headers": {"x-api-key": "k-99887766"}}', "k-99887766"),
        ("request failed: api_key=hunter2hunter2 was rejected", "hunter2hunter2"),
        ("invalid key sk-ant-api03-abcdefgh12345678 for org", "sk-ant-api03-abcdefgh12345678"),
        ("<html>proxy-authorization: Basic dXNlcjpwYXNz</html>", "dXNlcjpwYXNz"),
    ],
)
def test_credential_shapes_are_masked(text: str, secret: str) -> None:
    cleaned = redact(text, environ={})
    assert secret not in cleaned and MASK in cleaned


def test_the_environments_own_keys_are_masked_wherever_they_appear_even_when_cut() -> None:
    env = {"TYPESAFE_API_KEY": JEV_KEY}
    assert JEV_KEY not in redact(f"echo: {JEV_KEY}!", environ=env)
    assert "ts-live-SECRET" not in quoted("x" * 150 + JEV_KEY, limit=160)  # redacted before it is cut
    assert redact("nothing secret here, 401 unauthorized", environ=env) == "nothing secret here, 401 unauthorized"


def test_an_anthropic_refusal_that_echoes_the_key_does_not_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        echo = {
            "type": "error",
            "error": {"type": "authentication_error", "message": f"invalid x-api-key {ANTHROPIC_KEY}"},
        }
        server.script(MESSAGES, Canned(401, body=echo))
        llm = AnthropicLLM(Gateway(local=tmp_path / "cache", subsets=[], mode="live"), retry=RetryPolicy())
        try:
            with pytest.raises(AnthropicRefused, match="found 401") as caught:
                llm.complete(role="answer", model="claude-sonnet-4-6", system=None, messages=[], max_tokens=5)
        finally:
            llm.close()
    assert ANTHROPIC_KEY not in str(caught.value) and "invalid x-api-key" in str(caught.value)


def test_a_jev_refusal_that_echoes_the_authorization_header_does_not_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worth = Question(
        id="worth", kind="yes_no", instructions="Keep?", criteria={"yes": "keep", "no": "drop"}, default="no"
    )
    with FakeModelServer() as server:
        monkeypatch.setenv("TYPESAFE_URL", server.url)
        monkeypatch.setenv("TYPESAFE_API_KEY", JEV_KEY)
        server.script(SYSTEMONE, Canned(403, raw=f"forbidden; you sent Authorization: Bearer {JEV_KEY}".encode()))
        decider = JevDecider(Gateway(local=tmp_path / "cache", subsets=[], mode="live"), requests_per_second=1000)
        try:
            with pytest.raises(JevRefused, match="found 403") as caught:
                decider.ask({"new_fact": {"text": "x"}}, [Ask("worth", worth)])
        finally:
            decider.close()
    assert JEV_KEY not in str(caught.value) and "forbidden" in str(caught.value)
