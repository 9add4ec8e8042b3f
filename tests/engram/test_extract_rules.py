"""Extraction: the offline rules stand-in, and mem0's additive prompt on a (local, fake) chat model."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pytest

from engram import Completion, ExtractionContext, LLMError, Mem0PromptExtractor, Message, RulesExtractor
from engram._extract import locomo_time

WHEN = datetime(2023, 5, 8, 13, 56)
NO_CONTEXT = ExtractionContext(previous=[], similar_facts=[], current_date="2026-09-23")


def say(text: str, speaker: str = "Caroline", when: datetime = WHEN, mid: str = "m1") -> Message:
    return Message(id=mid, text=text, speaker=speaker, when=when)


def test_statements_become_facts_about_the_speaker_and_chatter_is_dropped():
    message = say(
        "Hey Mel! Good to see you! I moved to Berlin last month. Have you been there? "
        "My sister lives in Paris. Thanks so much!"
    )
    facts = RulesExtractor().extract(message, NO_CONTEXT).facts
    assert [f.text for f in facts] == ["Caroline moved to Berlin last month", "Caroline's sister lives in Paris"]
    # v4 (the default): the sister is named by her tie only, and the fact about her is hers
    assert [f.subject for f in facts] == ["Caroline", "Caroline's sister"]
    assert facts[0].source_text == "I moved to Berlin last month."  # the verbatim quote
    assert facts[0].object == "Berlin" and facts[0].predicate_hint == "lives_in"


def test_the_rules_extractor_is_deterministic_and_labelled_a_stand_in():
    extractor = RulesExtractor()
    message = say("I'm thinking of getting a dog. We love hiking on weekends.")
    assert extractor.extract(message, NO_CONTEXT) == extractor.extract(message, NO_CONTEXT)
    assert "standin" in extractor.model and extractor.name == "rules"
    texts = [f.text for f in extractor.extract(message, NO_CONTEXT).facts]
    assert texts == ["Caroline is thinking of getting a dog", "Caroline loves hiking on weekends"]


def test_a_message_of_pure_small_talk_yields_nothing():
    assert RulesExtractor().extract(say("Wow, that sounds amazing! Thanks, Mel!"), NO_CONTEXT).facts == []


@dataclass
class FakeHaiku:
    """A local chat model that replies with a fixed mem0 extraction JSON and keeps what it was sent."""

    reply: str
    calls: list[dict] = field(default_factory=list)

    def complete(self, *, role, model, system, messages, max_tokens, temperature=None) -> Completion:
        self.calls.append(
            {
                "role": role,
                "model": model,
                "system": system,
                "messages": messages,
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
        )
        return Completion(
            text=self.reply, model=model, input_tokens=9000, output_tokens=60, cost_usd=0.0093, latency_ms=1800.0
        )


def test_mem0_extraction_sends_mem0s_own_prompt_with_the_articles_inputs():
    from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT

    history = [say(f"message number {i}", speaker="Melanie", mid=f"p{i}") for i in range(12)]
    context = ExtractionContext(previous=history, similar_facts=["Caroline likes hiking"], current_date="2026-09-23")
    fake = FakeHaiku(
        '```json\n{"memory": [{"id": "0", "text": "Caroline moved to Berlin"}, '
        '{"id": "1", "text": "Caroline moved to Berlin"}, {"id": "2", "text": ""}]}\n```'
    )
    extraction = Mem0PromptExtractor(fake).extract(say("I moved to Berlin!"), context)

    [call] = fake.calls
    assert call["system"] == ADDITIVE_EXTRACTION_PROMPT and call["model"] == "claude-haiku-4-5"
    assert (call["role"], call["max_tokens"], call["temperature"]) == ("extract", 2000, 0.1)
    prompt = call["messages"][0]["content"]
    assert "## Current Date\n2026-09-23" in prompt  # pinned, not today's date
    assert "message number 2" in prompt and "message number 1\n" not in prompt  # only the last 10 messages
    assert '[{"id": "0", "text": "Caroline likes hiking"}]' in prompt
    assert f"user: [{locomo_time(WHEN)}] Caroline: I moved to Berlin!" in prompt
    assert [f.text for f in extraction.facts] == ["Caroline moved to Berlin"]  # duplicates and empties dropped
    assert extraction.facts[0].object == "unspecified" and extraction.facts[0].subject == "Caroline"
    [usage] = extraction.usage
    assert (usage.role, usage.cost_usd, usage.latency_ms) == ("extract", 0.0093, 1800.0)


def test_an_unreadable_extraction_reply_is_no_facts_but_still_costs_the_call():
    extraction = Mem0PromptExtractor(FakeHaiku("I could not find any memories, sorry.")).extract(say("hi"), NO_CONTEXT)
    assert extraction.facts == [] and extraction.usage[0].cost_usd == 0.0093


def test_locomo_dates_are_written_the_way_locomo_writes_them():
    assert locomo_time(datetime(2023, 5, 8, 13, 56)) == "1:56 pm on 8 May, 2023"
    assert locomo_time(datetime(2023, 7, 21, 0, 5)) == "12:05 am on 21 July, 2023"


def test_a_failing_chat_model_surfaces_as_an_llm_error():
    class Down:
        def complete(self, **_):
            raise LLMError("anthropic unavailable")

    with pytest.raises(LLMError):
        Mem0PromptExtractor(Down()).extract(say("I moved to Berlin."), NO_CONTEXT)


def test_openers_unresolved_pronouns_and_talk_about_the_listener_are_left_out():
    message = say(
        "Yeah, I painted that lake sunrise last year! It's special to me. "
        "Your empathy will really help people. That's really cool.",
        speaker="Melanie",
    )
    assert [f.text for f in RulesExtractor().extract(message, NO_CONTEXT).facts] == [
        "Melanie painted that lake sunrise last year"
    ]
