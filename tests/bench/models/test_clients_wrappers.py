"""Offline stand-ins pushed through the gateway: cached per question / per input, replayed exactly, $0."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from bench.errors import CacheMiss
from bench.models.clients.wrappers import GatewayDecider, GatewayExtractor, OfflineLLM
from bench.models.gateway import Gateway
from engram import (
    Ask,
    Decision,
    DecisionBackend,
    ExtractedFact,
    Extraction,
    ExtractionContext,
    Extractor,
    Message,
    Question,
)

KIND = Question(
    id="fact_kind",
    kind="choice",
    instructions="What kind of fact?",
    criteria={"preference": "likes", "bio": "stable attribute", "event": "at a time"},
    default="bio",
)
WORTH = Question(
    id="worth_remembering",
    kind="yes_no",
    instructions="Keep it?",
    criteria={"yes": "stable detail", "no": "small talk"},
    default="no",
)


class CountingDecider:
    """A scripted stand-in that says 'event' / 'yes' and counts the asks it actually answered."""

    name, model = "scripted", "scripted-standin-v1"

    def __init__(self, skip: str | None = None) -> None:
        self.answered: list[str] = []
        self.skip = skip

    def ask(self, state: dict, asks) -> dict[str, Decision]:
        self.answered += [a.key for a in asks]
        out = {}
        for a in asks:
            if a.key == self.skip:
                continue
            probs = (
                {"event": 0.8, "bio": 0.1, "preference": 0.1}
                if a.question.kind == "choice"
                else {"yes": 0.7, "no": 0.3}
            )
            out[a.key] = Decision.from_probs(a.question, probs, backend=self.name, model=self.model, target=a.target)
        return out


class CountingExtractor:
    name, model = "rules", "rules-extractor-standin-v1"

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        self.calls += 1
        return Extraction(
            facts=[
                ExtractedFact(text=f"{message.speaker} went hiking", subject=message.speaker, valid_from=message.when)
            ]
        )


class EchoAnswerer(OfflineLLM):
    model = "answer-standin-v1"

    def respond(self, *, role, system, messages, max_tokens, temperature) -> str:
        return messages[-1]["content"].upper()


STATE = {"new_fact": {"text": "Melanie went camping", "subject": "melanie", "object": "camping"}}


def test_gateway_decider_caches_per_question_and_retargets_hits(tmp_path: Path) -> None:
    inner = CountingDecider()
    decider = GatewayDecider(inner, Gateway(local=tmp_path, subsets=[]))
    assert isinstance(decider, DecisionBackend) and decider.model == "scripted-standin-v1"
    first = decider.ask(STATE, [Ask("kind", KIND, target="f1"), Ask("worth", WORTH)])
    second = decider.ask(STATE, [Ask("kind_again", KIND, target="f2"), Ask("w", WORTH, refs={"x": 1})])
    assert inner.answered == ["kind", "worth", "w"]  # the second kind ask was a hit; refs change the payload
    assert first["kind"].chosen == second["kind_again"].chosen == "event"
    assert second["kind_again"].target == "f2" and second["kind_again"].question == "fact_kind"
    assert second["kind_again"].latency_ms == first["kind"].latency_ms


def test_a_missing_answer_from_the_inner_backend_degrades_to_the_safe_default(tmp_path: Path) -> None:
    decider = GatewayDecider(CountingDecider(skip="worth"), Gateway(local=tmp_path, subsets=[]))
    decision = decider.ask(STATE, [Ask("worth", WORTH)])["worth"]
    assert decision.fallback and decision.chosen == "no" and "no answer" in decision.error


def test_gateway_extractor_replays_facts_exactly_and_strict_replay_refuses_new_input(tmp_path: Path) -> None:
    inner = CountingExtractor()
    message = Message(id="D1:3", text="I went hiking on Sunday", speaker="melanie", when=datetime(2023, 5, 8, 13))
    context = ExtractionContext(previous=[], similar_facts=["melanie likes trails"], current_date="2026-09-23")
    extractor = GatewayExtractor(inner, Gateway(local=tmp_path, subsets=[]))
    assert isinstance(extractor, Extractor)
    first, second = extractor.extract(message, context), extractor.extract(message, context)
    assert inner.calls == 1 and list(first.facts) == list(second.facts)
    assert second.facts[0].valid_from == datetime(2023, 5, 8, 13)
    assert second.usage[0].cached and second.usage[0].cost_usd == 0.0
    strict = GatewayExtractor(inner, Gateway(local=tmp_path, subsets=[], strict=True))
    assert strict.extract(message, context).facts == first.facts
    with pytest.raises(CacheMiss, match="rules-extractor-standin-v1 \\(purpose extract"):
        strict.extract(Message(id="D1:4", text="new", speaker="melanie", when=message.when), context)


def test_offline_llm_standins_are_cached_under_their_own_labelled_model(tmp_path: Path) -> None:
    answerer = EchoAnswerer(Gateway(local=tmp_path, subsets=[]))
    kwargs = dict(
        role="answer",
        model="claude-sonnet-4-6",
        system=None,
        messages=[{"role": "user", "content": "where?"}],
        max_tokens=64,
        temperature=0.0,
    )
    first, second = answerer.complete(**kwargs), answerer.complete(**kwargs)
    assert first.text == "WHERE?" and first.model == "answer-standin-v1" and first.cost_usd == 0.0
    assert second.cached and second.latency_ms == first.latency_ms
