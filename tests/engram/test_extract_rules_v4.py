"""`RulesExtractor(version=4)`, an OFFLINE STAND-IN revision (the default since 2026-12-05; v3 before): first-person statements that leave their "I" out, and facts about a person the speaker
names by a tie to herself, which become that person's facts.

Scenarios run through the public API (`Engram.offline(..., extractor=RulesExtractor(version=4))`) where they are
about closing; what the extractor writes is read straight off its drafts.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from engram import Engram, ExtractionContext, InvalidInput, Message, RulesExtractor

SAID = datetime(2024, 6, 3, 19, 15)
NO_CONTEXT = ExtractionContext(previous=[], similar_facts=[], current_date="2026-09-23")


def drafts(text: str, speaker: str = "Oskar", previous: tuple[str, ...] = (), version: int = 4):
    context = ExtractionContext(
        previous=[Message(f"p{i}", t, speaker, SAID) for i, t in enumerate(previous)],
        similar_facts=[],
        current_date="2026-09-23",
    )
    return RulesExtractor(version=version).extract(Message("m", text, speaker, SAID), context).facts  # type: ignore[arg-type]


def tell(memory: Engram, speaker: str, *messages: str) -> None:
    for n, text in enumerate(messages):
        memory.add(text, speaker=speaker, when=SAID + timedelta(days=11 * n))


def closed(memory: Engram, words: str) -> bool:
    return any(words in f.text and not f.is_open for f in memory.facts(valid_only=False))


def test_the_default_is_version_4_and_version_3_can_still_be_asked_for():
    assert RulesExtractor().model == "rules-extractor-standin-v4"
    assert RulesExtractor(version=3).model == "rules-extractor-standin-v3"
    assert drafts("Moved to Haarlem last month!", version=3) == []


def test_an_unknown_version_is_refused():
    with pytest.raises(InvalidInput, match="expected 3 or 4"):
        RulesExtractor(version=7)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "said, written",
    [
        ("Moved to Haarlem last month!", "Oskar moved to Haarlem last month"),
        ("Sold my Passat and bought a Skoda last weekend.", "Oskar sold Oskar's Passat and bought a Skoda"),
        ("Finished my thesis in June.", "Oskar finished Oskar's thesis in June"),
        ("Just adopted a kitten named Miso.", "Oskar just adopted a kitten named Miso"),
    ],
)
def test_a_statement_that_leaves_its_i_out_is_the_speakers(said, written):
    (fact,) = drafts(said)
    assert fact.text.startswith(written) and fact.subject == "Oskar"
    assert fact.source_text == said  # the quote keeps the words as said


@pytest.mark.parametrize("said", ["Call me when you land.", "Love this song.", "Thanks for the tip!", "Sounds fun."])
def test_commands_reactions_and_thanks_are_not_given_an_i(said):
    assert drafts(said) == []


def test_a_person_tied_to_the_speaker_is_the_subject_here_and_in_later_messages():
    (fact,) = drafts("My sister Lena got a job at Zeiss.", speaker="Greta")
    assert fact.subject == "Lena" and fact.text.startswith("Greta's sister Lena")
    (later,) = drafts("Lena lives in Jena now.", speaker="Greta", previous=("My sister Lena got a job at Zeiss.",))
    assert later.subject == "Lena"


def test_a_bare_name_or_a_shared_report_stays_the_speakers():
    # a bare name may be a pet's ("Biscuit died"): compared with the speaker's "I have a dog named Biscuit"
    assert drafts("Biscuit died last night.", speaker="Greta")[0].subject == "Greta"
    assert drafts("My uncle Piet and I went fishing.", speaker="Greta")[0].subject == "Greta"


@pytest.mark.slow
@pytest.mark.parametrize(
    "speaker, first, change, old_word",
    [
        ("Oskar", "I drive an old Passat.", "Sold my Passat and bought a Skoda last weekend.", "Passat"),
        ("Oskar", "I live in Utrecht.", "Moved to Haarlem last month!", "Utrecht"),
    ],
)
def test_a_change_without_its_i_closes_the_old_value(tmp_path, minilm, speaker, first, change, old_word):
    memory = Engram.offline(tmp_path / "e.db", embedder=minilm, extractor=RulesExtractor(version=4))
    tell(memory, speaker, first, change)
    assert closed(memory, old_word), [(f.text, f.is_open) for f in memory.facts(valid_only=False)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "remark",
    [
        "Lived in Lyon as a kid.",  # a past mention
        "Thought about moving to Ghent.",  # a wish
        "Would have moved to Ghent if the job had worked out.",  # a hypothetical
        "Planning to move to Ghent next year.",  # a plan
    ],
)
def test_a_subjectless_mention_wish_hypothetical_or_plan_closes_nothing(tmp_path, minilm, remark):
    memory = Engram.offline(tmp_path / "e.db", embedder=minilm, extractor=RulesExtractor(version=4))
    tell(memory, "Oskar", "I live in Utrecht.", remark)
    assert not memory.stats()["closes"] and not closed(memory, "Utrecht")


@pytest.mark.slow
def test_a_second_hobby_without_its_i_closes_nothing(tmp_path, minilm):
    memory = Engram.offline(tmp_path / "e.db", embedder=minilm, extractor=RulesExtractor(version=4))
    tell(memory, "Oskar", "I enjoy hiking.", "Picked up knitting last month.")
    assert not memory.stats()["closes"] and len(memory.facts()) == 2


@pytest.mark.slow
def test_a_friends_move_is_the_friends_and_leaves_the_speakers_home_open(tmp_path, minilm):
    memory = Engram.offline(tmp_path / "e.db", embedder=minilm, extractor=RulesExtractor(version=4))
    tell(memory, "Greta", "I live in Bristol.", "My friend Tariq lives in York.", "My friend Tariq moved to Leeds.")
    subjects = {f.text: f.subject for f in memory.facts(valid_only=False)}
    assert subjects["Greta lives in Bristol"] == "greta"
    assert {s for t, s in subjects.items() if "Tariq" in t} == {"tariq"}
    assert closed(memory, "York") and not closed(memory, "Bristol")
