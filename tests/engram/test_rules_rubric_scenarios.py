"""The rules stand-in on pairs written from the relation and temporal rubrics (a made-up person, Ana; none of these
are the article's 50 gold pairs, which are only scored by scripts/rules_contradiction_pairs.py)."""

from __future__ import annotations

import pytest

from engram import Ask
from engram.deciders import RulesDecider
from engram.questions import RELATION_TO_CANDIDATE, TEMPORAL_STATUS

RELATION_SCENARIOS = [
    ("Ana works at Acme", "Ana started a new job at Globex", "I started a new job at Globex!", {"update"}),
    ("Ana has a dog named Rex", "Ana's dog Rex passed away", "Rex passed away last night.", {"negates"}),
    ("Ana plays tennis", "Ana quit tennis", "I quit tennis.", {"negates"}),
    ("Ana is vegetarian", "Ana eats chicken now", "I eat chicken now.", {"update", "contradiction"}),
    ("Ana is married to Bo", "Ana divorced Bo", "Bo and I got divorced.", {"negates", "update"}),
    ("Ana's favorite color is blue", "Ana's favorite color is green now", "Green is my favorite now.", {"update"}),
    ("Ana owns a bike", "Ana bought a car", "I bought a car.", {"new"}),
    ("Ana likes jazz", "Ana likes jazz, especially Coltrane", "I like jazz, especially Coltrane.", {"refinement"}),
    ("Ana lives in Lisbon", "Ana used to live in Porto", "I used to live in Porto.", {"new"}),
    ("Ana lives in Lisbon", "Ana might move to Madrid next year", "I might move to Madrid next year.", {"new"}),
    ("Ana studies biology", "Ana switched her major to chemistry", "I switched my major to chemistry.", {"update"}),
    ("Ana was born in Porto", "Ana was born in Faro", "I was born in Faro.", {"contradiction"}),
    ("Ana loves sushi", "Ana hates sushi", "I hate sushi.", {"contradiction"}),
    ("Ana has two kids", "Ana has two kids aged 4 and 7", "My two kids are 4 and 7.", {"refinement"}),
    ("Ana drinks coffee every morning", "Ana gave up coffee", "I gave up coffee.", {"negates"}),
    ("Ana uses Windows", "Ana switched to a Mac", "I switched to a Mac.", {"update"}),
    ("Ana lives in Lisbon", "Ana visited Paris last week", "I visited Paris last week.", {"new"}),
    ("Ana is single", "Ana is dating Carl", "I'm dating Carl!", {"update"}),
    ("Ana works as a nurse", "Ana works as a paramedic now", "I'm a paramedic now.", {"update"}),
    ("Ana's sister lives in Rome", "Ana lives in Madrid", "I live in Madrid.", {"new"}),
    ("Ana speaks French", "Ana is learning German", "I'm learning German.", {"new"}),
    ("Ana is allergic to nuts", "Ana is not allergic to nuts", "I'm not allergic to nuts.", {"contradiction"}),
    ("Ana sold her bike", "Ana has a bike", "I have a bike.", {"contradiction", "update", "new"}),  # never duplicate
    # an age is one value at a time (rules-standin-v9, the default since 2026-12-05; v8 had no rule for ages)
    ("Ana is 30 years old", "Ana turned 31", "I turned 31 today!", {"update"}),
]

TEMPORAL_SCENARIOS = [
    ("Ana is planning a trip to Japan", "I'm planning a trip to Japan.", "planned"),
    ("Ana went to a wedding last weekend", "I went to a wedding last weekend.", "past"),
    ("Ana moved to Madrid", "I moved to Madrid.", "current"),
    ("Ana would love to learn piano", "I'd love to learn piano someday.", "hypothetical"),
    ("Ana works as a nurse", "I work as a nurse.", "current"),
    ("Ana played soccer in college", "I played soccer in college.", "past"),
    ("Ana will start a new job in May", "I'll start a new job in May.", "planned"),
    ("Ana quit smoking", "I quit smoking.", "current"),
    ("Ana is thinking about adopting a cat", "I'm thinking about adopting a cat.", "hypothetical"),
    ("Ana lived in Porto as a child", "I lived in Porto as a kid.", "past"),
    ("Ana moved to Madrid last month", "Big news: I moved to Madrid last month!", "current"),  # the date dates the move
    ("Ana went hiking last weekend", "I went hiking last weekend.", "past"),
]


@pytest.fixture(scope="module")
def rules(minilm) -> RulesDecider:
    return RulesDecider(minilm)


@pytest.mark.parametrize(("old", "new", "message", "accept"), RELATION_SCENARIOS)
def test_relation_follows_the_rubric(rules, old, new, message, accept):
    state = {"new_fact": {"text": new, "subject": "Ana", "object": "unspecified"}, "source_message": message}
    ask = Ask("rel", RELATION_TO_CANDIDATE, refs={"existing_fact": {"text": old, "subject": "Ana"}}, target="f")
    assert rules.ask(state, [ask])["rel"].chosen in accept


@pytest.mark.parametrize(("text", "message", "status"), TEMPORAL_SCENARIOS)
def test_temporal_status_follows_the_rubric(rules, text, message, status):
    state = {"new_fact": {"text": text, "subject": "Ana"}, "source_message": message}
    assert rules.ask(state, [Ask("t", TEMPORAL_STATUS)])["t"].chosen == status
