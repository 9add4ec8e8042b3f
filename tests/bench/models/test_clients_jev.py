"""The Jev client against a real local HTTP server speaking the Jev API: success, per-question caching, retries,
timeouts, malformed replies, a malformed single answer, refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeservers import SYSTEMONE, Canned, FakeModelServer, RecordedSleeps, fake_jev, fake_jev_answer, sleeps  # noqa: F401 (fixtures)

from bench.errors import CacheMiss, JevRefused, JevUnavailable
from bench.models.budget import Budget, Ledger, RunLabels
from bench.models.clients.retry import RetryPolicy
from bench.models.gateway import Gateway
from bench.models.providers.jev.client import JevDecider, validate_answer
from engram import Ask, DecisionError, Question

RELATION = Question(
    id="relation_to_candidate",
    kind="choice",
    instructions="How does new_fact relate to existing_fact?",
    criteria={"new": "different things", "duplicate": "same information", "update": "new value replaces old"},
    default="new",
)
WORTH = Question(
    id="worth_remembering",
    kind="yes_no",
    instructions="Keep this in long-term memory?",
    criteria={"yes": "a stable personal detail", "no": "small talk"},
    default="no",
)
STATE = {
    "new_fact": {"text": "Caroline moved to Boston", "subject": "caroline", "object": "boston"},
    "source_message": "I moved to Boston last month!",
}


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    monkeypatch.setenv("TYPESAFE_API_KEY", "ts-FAKE-key-for-tests")
    labels = RunLabels("jev-test")
    return Gateway(
        local=tmp_path / "cache", subsets=[], labels=labels, budget=Budget(Ledger(tmp_path / "ledger.jsonl"), labels)
    )


def make_decider(gateway: Gateway, sleeps: RecordedSleeps, **kw) -> JevDecider:
    return JevDecider(gateway, retry=RetryPolicy(sleep=sleeps), requests_per_second=1000, **kw)


def asks() -> list[Ask]:
    existing = {
        "existing_fact": {
            "text": "Caroline lives in Denver",
            "subject": "caroline",
            "object": "denver",
            "valid_from": "2023-01-02",
        }
    }
    return [Ask("relation_to_candidate__3", RELATION, refs=existing, target="fact-3"), Ask("worth", WORTH)]


def test_one_request_answers_every_question_and_splits_its_cost(fake_jev: FakeModelServer, gateway, sleeps) -> None:
    decisions = make_decider(gateway, sleeps).ask(STATE, asks())
    assert fake_jev.count(SYSTEMONE) == 1
    sent = fake_jev.requests[0]
    assert sent.headers["authorization"] == "Bearer ts-FAKE-key-for-tests"
    assert sent.body["model"] == "jev-1.13.0" and sent.body["state"] == STATE
    assert set(sent.body["questions"]) == {"relation_to_candidate__3", "worth"}
    relation, worth = decisions["relation_to_candidate__3"], decisions["worth"]
    assert (relation.chosen, relation.confidence, relation.target) == ("new", 0.9, "fact-3")
    assert (worth.chosen, worth.probs["yes"], worth.backend) == ("yes", 0.9, "jev")
    input_tokens = max(1, len(__import__("json").dumps(sent.body)) // 4)
    assert relation.cost_usd == worth.cost_usd == pytest.approx(input_tokens * 0.042e-6 / 2)
    assert relation.latency_ms == worth.latency_ms > 0


def test_a_partly_cached_request_sends_only_the_missing_questions(fake_jev, gateway, sleeps) -> None:
    decider = make_decider(gateway, sleeps)
    decider.ask(STATE, asks()[:1])
    again = decider.ask(STATE, [Ask("other_key", RELATION, refs=asks()[0].refs, target="fact-9"), asks()[1]])
    assert fake_jev.count(SYSTEMONE) == 2
    assert list(fake_jev.requests[1].body["questions"]) == ["worth"]
    assert again["other_key"].target == "fact-9"  # the ask key and target are not part of the cache key


def test_429_waits_as_long_as_retry_after_says_capped_at_five_seconds(fake_jev, gateway, sleeps) -> None:
    fake_jev.script(SYSTEMONE, Canned(429, headers={"Retry-After": "1"}), Canned(429, headers={"Retry-After": "30"}))
    decider = make_decider(gateway, sleeps)
    assert decider.ask(STATE, asks())["worth"].chosen == "yes"
    assert sleeps.delays == [1.0, 5.0] and fake_jev.count() == 3
    assert decider.http_statuses == {"429": 2, "200": 1}


def test_500_then_success_backs_off_a_quarter_second(fake_jev, gateway, sleeps) -> None:
    fake_jev.script(SYSTEMONE, Canned(500))
    decisions = make_decider(gateway, sleeps).ask(STATE, asks())
    assert sleeps.delays == [0.25] and not decisions["worth"].fallback


def test_timeouts_exhaust_three_attempts_and_fail_the_request_only(fake_jev, gateway, sleeps) -> None:
    fake_jev.script(SYSTEMONE, *[Canned(delay_s=0.6)] * 3)
    decider = make_decider(gateway, sleeps, timeout_s=0.15)
    with pytest.raises(JevUnavailable, match=r"3 attempts failed \(timeout, timeout, timeout\)") as caught:
        decider.ask(STATE, asks())
    assert isinstance(caught.value, DecisionError)  # engram degrades the fact instead of crashing the run
    assert sleeps.delays == [0.25, 0.5]


def test_a_non_json_reply_fails_the_request_and_nothing_is_cached(fake_jev, gateway, sleeps) -> None:
    fake_jev.script(SYSTEMONE, Canned(raw=b"{not json"))
    with pytest.raises(JevUnavailable, match="expected a JSON body"):
        make_decider(gateway, sleeps).ask(STATE, asks())
    assert len(gateway.local) == 0


def test_one_malformed_answer_degrades_only_its_own_question(fake_jev, gateway, sleeps) -> None:
    def responder(path, body):
        answers = {k: fake_jev_answer(p) for k, p in body["questions"].items()}
        answers["relation_to_candidate__3"]["probabilities"]["new"] = 0.2  # no longer sums to 1
        return 200, {}, {"answers": answers, "usage": {"input_tokens": 600}}

    fake_jev.responder = responder
    decisions = make_decider(gateway, sleeps).ask(STATE, asks())
    bad, good = decisions["relation_to_candidate__3"], decisions["worth"]
    assert bad.fallback and bad.chosen == "new" and "sum" in bad.error and bad.target == "fact-3"
    assert not good.fallback and good.chosen == "yes"


def test_401_fails_at_once_and_stops_the_run(fake_jev, gateway, sleeps) -> None:
    fake_jev.script(SYSTEMONE, Canned(401, body={"error": "bad key"}))
    with pytest.raises(JevRefused, match="found 401") as caught:
        make_decider(gateway, sleeps).ask(STATE, asks())
    assert not isinstance(caught.value, DecisionError) and fake_jev.count() == 1 and sleeps.delays == []


def test_replay_without_a_key_never_touches_the_network(fake_jev, tmp_path, sleeps, monkeypatch) -> None:
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    replay = Gateway(local=tmp_path / "cache", subsets=[])
    with pytest.raises(CacheMiss, match="jev/jev-1.13.0 \\(purpose decide"):
        make_decider(replay, sleeps).ask(STATE, asks())
    assert fake_jev.count() == 0


@pytest.mark.parametrize(
    "answer, problem",
    [
        ({"probabilities": {"new": 0.9, "duplicate": 0.05, "update": 0.05}, "choice": "merge"}, "not one of"),
        ({"probabilities": {"new": 0.9, "duplicate": 0.1}, "choice": "new"}, "exactly"),
        ({"probabilities": {"new": float("nan"), "duplicate": 0.5, "update": 0.5}, "choice": "new"}, "finite"),
        ({"probabilities": {"new": 1.2, "duplicate": -0.1, "update": -0.1}, "choice": "new"}, "in \\[0, 1\\]"),
        ({"probabilities": {"new": 0.5, "duplicate": 0.3, "update": 0.1}, "choice": "new"}, "sum"),
        ({"probabilities": {"new": 0.3, "duplicate": 0.6, "update": 0.1}, "choice": "new"}, "most probable"),
    ],
)
def test_answers_that_break_a_rule_are_rejected(answer, problem) -> None:
    with pytest.raises(ValueError, match=problem):
        validate_answer(RELATION, answer)


def test_jev_rounding_within_a_hundredth_is_accepted() -> None:
    probs, chosen = validate_answer(
        RELATION, {"probabilities": {"new": 0.44, "duplicate": 0.45, "update": 0.11}, "choice": "new"}
    )
    assert chosen == "new" and probs["duplicate"] == 0.45
    assert validate_answer(WORTH, {"noul": 0.3})[1] == "no"
    with pytest.raises(ValueError):
        validate_answer(WORTH, {"noul": True})


def test_connection_errors_are_retried_then_fail_the_request(gateway, sleeps) -> None:
    with FakeModelServer() as server:
        closed_url = server.url  # a port that nothing listens on once the server has stopped
    decider = JevDecider(gateway, base_url=closed_url, retry=RetryPolicy(sleep=sleeps), requests_per_second=1000)
    with pytest.raises(JevUnavailable, match=r"connection, connection, connection"):
        decider.ask(STATE, asks())
    assert sleeps.delays == [0.25, 0.5] and len(gateway.local) == 0


def test_request_starts_are_paced_to_the_configured_rate() -> None:
    import asyncio

    from bench.models.providers.jev.client import RateLimiter

    now = [100.0]
    waits: list[float] = []

    async def virtual_sleep(seconds: float) -> None:  # a virtual clock: sleeping advances it, nothing waits
        waits.append(round(seconds, 6))
        now[0] += seconds

    async def five_starts() -> None:
        limiter = RateLimiter(per_second=15, clock=lambda: now[0], sleep=virtual_sleep)
        for _ in range(5):
            await limiter.wait()

    asyncio.run(five_starts())
    assert waits == [round(1 / 15, 6)] * 4  # the first start is free, each later one waits 1/15 s


def test_429_on_every_attempt_is_rate_limited_not_an_outage(fake_jev, gateway, sleeps) -> None:
    from bench.errors import JevRateLimited, ProviderRateLimited

    fake_jev.script(SYSTEMONE, *[Canned(429)] * 3)
    with pytest.raises(JevRateLimited, match=r"429, 429, 429") as caught:
        make_decider(gateway, sleeps).ask(STATE, asks())
    # One tree by kind of failure, naming the provider; still engram's DecisionError, so the write degrades.
    assert isinstance(caught.value, ProviderRateLimited) and isinstance(caught.value, JevUnavailable)
    assert isinstance(caught.value, DecisionError) and caught.value.provider == "jev"


def test_a_non_json_reply_is_a_malformed_reply(fake_jev, gateway, sleeps) -> None:
    from bench.errors import ProviderMalformedReply, ProviderRateLimited

    fake_jev.script(SYSTEMONE, Canned(raw=b"[1, 2"))
    with pytest.raises(ProviderMalformedReply) as caught:
        make_decider(gateway, sleeps).ask(STATE, asks())
    assert not isinstance(caught.value, ProviderRateLimited) and caught.value.provider == "jev"
