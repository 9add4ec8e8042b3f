"""engram's typed questions asked of an OpenAI-compatible server through the logprob decider, against a local fake
server: the distribution read from the letters' log-probabilities, the cache, the concurrency bound, and what happens
when the server cannot give log-probabilities."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeservers import CHAT_COMPLETIONS, Canned, FakeModelServer, RecordedSleeps, fake_chat_completion

from bench.cli.program import main
from bench.errors import LogprobDecisionFailed, LogprobsUnavailable
from bench.models.clients.retry import RetryPolicy
from bench.models.gateway import Gateway
from bench.models.providers.openai.client import OpenAIChat
from bench.models.providers.openai.logprob import LogprobDecider
from engram import Ask, DecisionError
from engram.questions import FACT_KIND, FACT_QUESTIONS, WORTH_REMEMBERING

STATE = {
    "new_fact": {"text": "Melanie painted a lake sunrise", "subject": "Melanie", "object": "painting"},
    "source_message": "I painted a lake sunrise last year!",
}
# The letters the fake model puts first: B most likely, then A, then a word that names no option.
LETTERS = [("B", math.log(0.6)), (" A", math.log(0.2)), ("The", math.log(0.1))]


def letters_reply(body: Any) -> dict[str, Any]:
    reply = fake_chat_completion(body, text="B")
    top = [{"token": token, "logprob": logprob, "bytes": None} for token, logprob in LETTERS]
    reply["choices"][0]["logprobs"] = {"content": [{"token": "B", "logprob": LETTERS[0][1], "top_logprobs": top}]}
    return reply


def letters(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    return 200, {}, letters_reply(body)


def no_logprobs(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """A server that ignores `logprobs` (as some do) and answers with text only."""
    reply = fake_chat_completion(body, text="B")
    reply["choices"][0]["logprobs"] = None
    return 200, {}, reply


class Decider:
    """A logprob decider on a fake server, with its gateway and cache in a temporary folder."""

    def __init__(self, server: FakeModelServer, cache: Path, mode: str = "record", concurrency: int = 4) -> None:
        self.gateway = Gateway(local=cache, subsets=[], mode=mode)  # type: ignore[arg-type]
        retry = RetryPolicy(sleep=RecordedSleeps())
        self.chat = OpenAIChat(self.gateway, f"{server.url}/v1", max_concurrency=concurrency, retry=retry)
        self.decider = LogprobDecider(self.chat, "local-model")

    def close(self) -> None:
        self.decider.close()
        self.chat.close()
        self.gateway.close()


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Any]:
    made: list[Decider] = []

    def build(server: FakeModelServer, **options: Any) -> Decider:
        made.append(Decider(server, tmp_path / "cache", **options))
        return made[-1]

    yield build
    for decider in made:
        decider.close()


def test_each_option_gets_its_letters_probability_renormalised_and_the_tokens_are_recorded(make) -> None:
    with FakeModelServer(letters) as server:
        d = make(server)
        decisions = d.decider.ask(STATE, [Ask("fact_kind", FACT_KIND), Ask("worth_remembering", WORTH_REMEMBERING)])
        sent = server.requests
    kind, worth = decisions["fact_kind"], decisions["worth_remembering"]
    assert (kind.chosen, worth.chosen) == ("bio", "no")  # B is bio in fact_kind, no in yes/no
    assert kind.probs["bio"] == pytest.approx(0.75) and kind.probs["preference"] == pytest.approx(0.25)
    assert kind.backend == "logprob" and kind.model == "local-model" and not kind.fallback
    assert kind.scored is not None and [t[2] for t in kind.scored["tokens"]] == ["bio", "preference", None]
    body = sent[0].body
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert "A. preference:" in body["messages"][0]["content"] or "A. yes:" in body["messages"][0]["content"]


def test_a_question_asked_again_is_answered_from_the_cache_with_the_server_gone(make) -> None:
    asks = [Ask(q.id, q) for q in FACT_QUESTIONS]
    with FakeModelServer(letters) as server:
        first = make(server).decider.ask(STATE, asks)
        assert server.count(CHAT_COMPLETIONS) == len(asks)
    # The server's port is closed and replay sends nothing: a question missing from the cache would raise.
    again = make(server, mode="replay").decider.ask(STATE, asks)
    assert again == first


def test_the_asks_of_one_state_travel_together_but_never_more_than_the_stack_allows(make) -> None:
    lock, now, peak = threading.Lock(), [0], [0]

    def slow(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return letters(path, body)

    with FakeModelServer(slow) as server:
        make(server, concurrency=2).decider.ask(STATE, [Ask(q.id, q) for q in FACT_QUESTIONS])
    assert peak[0] == 2


def test_a_server_answering_without_log_probabilities_is_refused_at_the_probe_and_nothing_is_cached(make) -> None:
    with FakeModelServer(no_logprobs) as server:
        d = make(server)
        with pytest.raises(LogprobsUnavailable, match="logprobs.content") as refused:
            d.decider.probe()
    assert "\n" not in str(refused.value) and "openai/local-model" in str(refused.value)
    assert d.gateway.local is not None and len(d.gateway.local) == 0


def test_a_server_refusing_log_probabilities_outright_is_refused_at_the_probe_too(make) -> None:
    refusal = Canned(
        500, body={"error": {"message": "logprobs is not supported for models created with logits_all=False"}}
    )
    with FakeModelServer(letters) as server:
        server.script(CHAT_COMPLETIONS, refusal, refusal, refusal)
        with pytest.raises(LogprobsUnavailable, match="expected an answer with log-probabilities"):
            make(server).decider.probe()


def test_a_decision_call_that_fails_after_its_retries_degrades_the_write_like_jevs(make) -> None:
    with FakeModelServer(letters) as server:
        server.script(CHAT_COMPLETIONS, *[Canned(503)] * 3)
        with pytest.raises(LogprobDecisionFailed) as failed:
            make(server).decider.ask(STATE, [Ask("fact_kind", FACT_KIND)])
    assert isinstance(failed.value, DecisionError)


def test_engram_on_a_server_without_log_probabilities_stops_with_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    out = tmp_path / "out"
    with FakeModelServer(no_logprobs) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        argv = ["run", "engram", "--slice", "dev", "--stack", "local", "--limit", "1", "--mode", "record"]
        monkeypatch.setattr("sys.argv", ["engram-bench", *argv, "--yes", "--quiet", "--out", str(out)])
        with pytest.raises(SystemExit) as exited:
            main()
        sent = server.count(CHAT_COMPLETIONS)
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2
    assert len(err.splitlines()) == 1 and "log-probabilities" in err
    assert sent == 1  # the probe question, and nothing after it: no extraction, no answer
    # no result file: --out holds only the run's own working folder (its store, under out/runs/, issue 25)
    assert not out.exists() or {p.name for p in out.iterdir()} <= {"runs"}
    assert not list(out.rglob("*.json"))
    cache = Gateway(local=tmp_path / "cache", subsets=[]).local
    assert cache is not None and len(cache) == 0
