"""More of issue 23's item 3 in the stand-ins `RulesExtractor(version=4)` + `RulesDecider(version=9)`: a
restatement in other words is linked as a duplicate (same_as); a change the speaker reports about a relative or a
friend named only by the tie ("my brother ...") is that person's, so it ends that person's fact and never the
speaker's; a pet that passed away or was rehomed is no longer had (its name is not taken for a person); a job title
said to have a new value ("I'm now lead analyst") is an update, not a refinement. Past mentions, hypotheticals,
plans, "not ... yet" and a second value of a relation that holds several still close nothing.

Every scenario goes through the public API, as a user would: `Engram.offline(path, extractor=..., decider=...)`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from engram import Engram, RulesExtractor
from engram.deciders import RulesDecider

FIRST_DAY = datetime(2025, 2, 17, 8, 45)

pytestmark = pytest.mark.slow


def remember(tmp_path, minilm, speaker: str, *messages: str, revised: bool = True) -> Engram:
    extractor, decider = (
        (RulesExtractor(version=4), RulesDecider(minilm, version=9))
        if revised
        else (RulesExtractor(version=3), RulesDecider(minilm, version=8))
    )
    memory = Engram.offline(
        tmp_path / ("revised.db" if revised else "default.db"), embedder=minilm, extractor=extractor, decider=decider
    )
    for n, text in enumerate(messages):
        memory.add(text, speaker=speaker, when=FIRST_DAY + timedelta(days=6 * n))
    return memory


def still_open(memory: Engram, words: str) -> bool:
    return any(words in f.text and f.is_open for f in memory.facts(valid_only=False))


def table(memory: Engram) -> list[tuple[str, str, bool]]:
    return [(f.subject, f.text, f.is_open) for f in memory.facts(valid_only=False)]


# ---- a restatement in other words ------------------------------------------------------------------------------

RESTATEMENTS = [
    ("Hedda", "I love cooking Thai curries.", "Thai curry is what I love to cook most."),
    ("Wim", "I enjoy knitting wool socks.", "Knitting socks out of wool is something I really love."),
]


@pytest.mark.parametrize(("speaker", "first", "again"), RESTATEMENTS)
def test_a_restatement_in_other_words_is_linked_as_the_same_fact(tmp_path, minilm, speaker, first, again):
    memory = remember(tmp_path, minilm, speaker, first)
    report = memory.add(again, speaker=speaker, when=FIRST_DAY + timedelta(days=3))
    assert report.actions == ["same_as"], table(memory)
    (original,) = [f for f in memory.facts() if f.id != report.outcomes[0].fact_id]
    assert {f.id for f in memory.same_as(original.id)} == {original.id, report.outcomes[0].fact_id}
    assert not memory.stats()["closes"]


def test_versions_3_and_8_kept_such_a_restatement_as_a_second_fact(tmp_path, minilm):
    memory = remember(tmp_path, minilm, *RESTATEMENTS[0], revised=False)
    assert memory.stats()["same_as_links"] == 0 and len(memory.facts()) == 2


@pytest.mark.parametrize(
    "other",
    [
        "I go climbing every Tuesday morning.",  # a second value of a hobby: both hold
        "I used to go swimming every Tuesday morning.",  # a past mention
        "I might go swimming every Tuesday evening instead.",  # a possibility
    ],
)
def test_a_second_value_or_a_past_or_possible_one_is_no_restatement(tmp_path, minilm, other):
    memory = remember(tmp_path, minilm, "Ilka", "I go swimming every Tuesday morning.", other)
    assert memory.stats()["same_as_links"] == 0 and not memory.stats()["closes"], table(memory)
    assert still_open(memory, "goes swimming every Tuesday morning")


# ---- a change about another person, reported by the speaker ---------------------------------------------------


def test_a_relatives_change_ends_the_relatives_fact_whose_subject_is_the_relative(tmp_path, minilm):
    memory = remember(tmp_path, minilm, "Bjorn", "My brother owns a sailboat.", "My brother sold his sailboat in May.")
    assert not still_open(memory, "owns a sailboat"), table(memory)
    assert {f.subject for f in memory.facts(valid_only=False)} == {"bjorn's brother"}


@pytest.mark.parametrize(
    ("first", "news", "kept"),
    [
        ("I own a sailboat.", "My brother sold his sailboat in May.", "Bjorn owns a sailboat"),
        ("I work at a florist.", "My sister quit her job at the florist.", "Bjorn works at a florist"),
    ],
)
def test_a_relatives_change_leaves_the_speakers_own_fact(tmp_path, minilm, first, news, kept):
    memory = remember(tmp_path, minilm, "Bjorn", first, news)
    assert still_open(memory, kept) and not memory.stats()["closes"], table(memory)


@pytest.mark.parametrize(
    "remark",
    [
        "My brother hasn't sold his sailboat yet.",  # a plan still open
        "If my brother sold his sailboat, he could buy a camper van.",  # a hypothetical
        "My brother is going to sell his sailboat next summer.",  # a plan
    ],
)
def test_a_relatives_plan_or_hypothetical_ends_nothing(tmp_path, minilm, remark):
    memory = remember(tmp_path, minilm, "Bjorn", "My brother owns a sailboat.", remark)
    assert still_open(memory, "owns a sailboat") and not memory.stats()["closes"], table(memory)


# ---- a pet that passed away or was rehomed --------------------------------------------------------------------

PET_ENDINGS = [
    ("Tove", "I have a cat named Juniper.", "Juniper passed away on Sunday.", "cat named Juniper"),
    ("Tove", "I have a rabbit called Pepper.", "Sadly we had to rehome Pepper last week.", "rabbit called Pepper"),
    ("Arvo", "Our hamster is called Nugget.", "Nugget died this morning.", "hamster is called Nugget"),
]


@pytest.mark.parametrize(("speaker", "first", "ending", "old_words"), PET_ENDINGS)
def test_a_pet_that_passed_away_or_was_rehomed_is_no_longer_had(tmp_path, minilm, speaker, first, ending, old_words):
    memory = remember(tmp_path, minilm, speaker, first, ending)
    assert not still_open(memory, old_words), table(memory)
    # the pet's name is not taken for a person: every fact stays the speaker's
    assert {f.subject for f in memory.facts(valid_only=False)} == {speaker.lower()}


@pytest.mark.parametrize("remark", ["Pepper learned to use the litter box.", "We might rehome Pepper if we move."])
def test_news_of_a_pet_or_a_possible_rehoming_ends_nothing(tmp_path, minilm, remark):
    memory = remember(tmp_path, minilm, "Tove", "I have a rabbit called Pepper.", remark)
    assert still_open(memory, "rabbit called Pepper") and not memory.stats()["closes"], table(memory)


# ---- a job title with a new value ------------------------------------------------------------------------------


@pytest.mark.parametrize("news", ["I'm now lead analyst.", "My new title is lead analyst."])
def test_a_title_with_a_new_value_updates_the_old_title(tmp_path, minilm, news):
    memory = remember(tmp_path, minilm, "Ravi", "I work as an analyst at Nordea.", news)
    assert not still_open(memory, "works as an analyst"), table(memory)
    assert still_open(memory, "lead analyst")


def test_versions_3_and_8_read_the_longer_title_as_a_refinement(tmp_path, minilm):
    memory = remember(
        tmp_path, minilm, "Ravi", "My job title is analyst.", "My job title is now lead analyst.", revised=False
    )
    assert still_open(memory, "title is analyst")
    revised = remember(tmp_path, minilm, "Ravi", "My job title is analyst.", "My job title is now lead analyst.")
    assert not still_open(revised, "title is analyst"), table(revised)


@pytest.mark.parametrize(
    "remark",
    [
        "I hope to be lead analyst next year.",  # a wish and a plan
        "My colleague is now lead analyst.",  # someone else's title
        "I used to be a lead analyst at Handelsbanken.",  # a past mention
        "I haven't been made lead analyst yet.",  # not yet: still to come
    ],
)
def test_a_hoped_for_past_or_colleagues_title_changes_nothing(tmp_path, minilm, remark):
    memory = remember(tmp_path, minilm, "Ravi", "I work as an analyst at Nordea.", remark)
    assert still_open(memory, "works as an analyst") and not memory.stats()["closes"], table(memory)


# ---- a relative named once by the tie, later by name alone --------------------------------------------------


def test_a_later_change_told_by_name_alone_ends_the_named_relatives_fact(tmp_path, minilm):
    memory = remember(
        tmp_path, minilm, "Greta", "I live in Bristol.", "My cousin Ilse lives in Bonn.", "Ilse moved to Kiel."
    )
    assert not still_open(memory, "Ilse lives in Bonn"), table(memory)
    assert still_open(memory, "Greta lives in Bristol") and still_open(memory, "Ilse moved to Kiel")


@pytest.mark.parametrize("remark", ["Ilse used to live in Hamburg.", "Ilse might move to Kiel next year."])
def test_a_named_relatives_past_or_possible_move_ends_nothing(tmp_path, minilm, remark):
    memory = remember(tmp_path, minilm, "Greta", "My cousin Ilse lives in Bonn.", remark)
    assert still_open(memory, "Ilse lives in Bonn") and not memory.stats()["closes"], table(memory)
