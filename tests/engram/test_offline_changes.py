"""A person states something, later says it changed (or only mentions, plans or imagines a change): does the offline
stack (rules extractor + rules decider stand-ins over MiniLM) close the old fact exactly when it should?

Each scenario goes through the public API only: `Engram.offline`, `add`, `facts`, `search`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from engram import Engram

START = datetime(2024, 2, 5, 9, 30)


def tell(memory: Engram, speaker: str, *messages: str) -> None:
    for day, text in enumerate(messages):
        memory.add(text, speaker=speaker, when=START + timedelta(days=9 * day))


def still_current(memory: Engram, words: str) -> bool:
    return any(words in fact.text for fact in memory.facts())


def closed(memory: Engram, words: str) -> bool:
    return any(words in f.text and not f.is_open for f in memory.facts(valid_only=False))


CLEAR_CHANGES = [
    # (speaker, first statement, the change, a word only the old fact has, a word only the new fact has)
    ("Ana", "I live in Toronto.", "Big news: I moved to Vancouver last week!", "Toronto", "Vancouver"),
    ("Tomas", "I live in Lisbon with my cat.", "We relocated to Porto in January.", "Lisbon", "Porto"),
    ("Keiko", "I'm based in Osaka.", "These days I live in Kyoto.", "Osaka", "Kyoto"),
    ("Marcus", "I work at Deloitte as an auditor.", "I started working at KPMG on Monday.", "Deloitte", "KPMG"),
    ("Priya", "I work for a small bakery.", "I took a job at the city library last month.", "bakery", "library"),
    ("Olu", "I drive a Toyota Corolla.", "I sold my Corolla and bought a Honda Accord.", "Toyota", "Accord"),
    ("Sven", "I use an Android phone.", "I switched to an iPhone.", "Android", "iPhone"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("speaker", "first", "change", "old_word", "new_word"), CLEAR_CHANGES)
def test_a_clear_change_of_a_single_value_closes_the_old_value(
    tmp_path, minilm, speaker, first, change, old_word, new_word
):
    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm)
    tell(memory, speaker, first, change)

    assert closed(memory, old_word), [(f.text, f.is_open, round(f.belief, 3)) for f in memory.facts(valid_only=False)]
    assert still_current(memory, new_word)


NOT_A_CHANGE = [
    # (speaker, first statement, a later remark that changes nothing, a word of the first fact)
    ("Lena", "I live in Munich.", "I used to live in Hamburg.", "Munich"),
    ("Dev", "I live in Pune.", "Back in college I lived in Chennai.", "Pune"),
    ("Rosa", "I live in Seville.", "I'm planning to move to Valencia next spring.", "Seville"),
    ("Ivan", "I work at Siemens.", "If I took a job at Bosch, I'd have a shorter commute.", "Siemens"),
    ("Noor", "I live in Amman.", "I might move to Dubai someday.", "Amman"),
    ("Jonas", "I like hiking.", "I like painting.", "hiking"),
    ("Mei", "I love jazz.", "I also enjoy opera.", "jazz"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("speaker", "first", "remark", "old_word"), NOT_A_CHANGE)
def test_past_mentions_plans_hypotheticals_and_second_values_close_nothing(
    tmp_path, minilm, speaker, first, remark, old_word
):
    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm)
    tell(memory, speaker, first, remark)

    assert still_current(memory, old_word), [(f.text, round(f.belief, 3)) for f in memory.facts(valid_only=False)]
    assert not memory.stats()["closes"]


@pytest.mark.slow
def test_a_move_then_a_second_move_leaves_only_the_latest_home_current(tmp_path, minilm):
    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm)
    tell(memory, "Farah", "I live in Nairobi.", "I moved to Kampala for work.", "I now live in Kigali.")

    assert still_current(memory, "Kigali")
    assert not still_current(memory, "Nairobi")
    assert not still_current(memory, "Kampala")
