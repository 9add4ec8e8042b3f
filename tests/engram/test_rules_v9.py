"""`RulesDecider(version=9)`, an OFFLINE STAND-IN revision (the default since 2026-12-05; v8 before): "not ... yet" says a plan is still open, so it never negates the plan; a pet that died, ran
away or was rehomed ends "has a dog named ..." even though the pet's name is the new fact's subject; a real
negation, a plan carried out and a value given up still act as before, and what merely happens to a pet, or to
someone else's, ends nothing. An age is one value at a time: "turned 35" replaces "is 34 years old"; a child's
birthday, a distance or the same age said again replace nothing. A move told with another verb first ("rented a flat in
Braga and moved there") replaces the home; a move dated long ago, a possible move and a purchase alone do not. A
promotion gives the job title held now; a friend's promotion or a hoped-for one changes nothing.

Scenarios go through the public API: `Engram.offline(..., decider=RulesDecider(minilm, version=9))`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from engram import Engram, InvalidInput
from engram.deciders import RulesDecider

SAID = datetime(2024, 11, 4, 12, 0)


def memory_with(tmp_path, minilm, version: int, speaker: str, *messages: str) -> Engram:
    memory = Engram.offline(tmp_path / f"v{version}.db", embedder=minilm, decider=RulesDecider(minilm, version=version))
    for n, text in enumerate(messages):
        memory.add(text, speaker=speaker, when=SAID + timedelta(days=8 * n))
    return memory


def is_open(memory: Engram, words: str) -> bool:
    return any(words in f.text and f.is_open for f in memory.facts(valid_only=False))


def test_the_default_is_version_9_and_version_8_can_still_be_asked_for(minilm):
    assert RulesDecider(minilm).model == "rules-standin-v9" == RulesDecider.model
    assert RulesDecider(minilm, version=8).model == "rules-standin-v8"
    with pytest.raises(InvalidInput, match="expected 8 or 9"):
        RulesDecider(minilm, version=10)


NOT_YET = [
    ("Oskar", "I'm planning to move to York.", "I haven't moved to York yet.", "planning to move"),
    ("Dagny", "I want to learn the cello.", "I have not started cello lessons yet.", "learn the cello"),
    (
        "Ulla",
        "I hope to adopt a greyhound.",
        "We still haven't adopted the greyhound yet, the shelter is slow.",
        "adopt a greyhound",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("speaker", "plan", "not_yet", "plan_words"), NOT_YET)
def test_not_yet_leaves_the_plan_open_and_is_itself_a_plan(tmp_path, minilm, speaker, plan, not_yet, plan_words):
    memory = memory_with(tmp_path, minilm, 9, speaker, plan, not_yet)
    assert is_open(memory, plan_words) and not memory.stats()["closes"]
    later = memory.facts()[-1]
    assert later.temporal_status == "planned"


@pytest.mark.slow
def test_version_8_read_not_yet_as_the_plans_negation(tmp_path, minilm):
    # the gap v9 closes, kept visible: the default stand-in closes the plan
    speaker, plan, not_yet, plan_words = NOT_YET[0]
    memory = memory_with(tmp_path, minilm, 8, speaker, plan, not_yet)
    assert not is_open(memory, plan_words)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plan", "done", "plan_words"),
    [("I'm planning to move to York.", "I moved to York last week.", "planning to move")],
)
def test_a_plan_carried_out_still_closes_as_fulfilled(tmp_path, minilm, plan, done, plan_words):
    memory = memory_with(tmp_path, minilm, 9, "Oskar", plan, done)
    assert not is_open(memory, plan_words) and memory.stats()["closes"].get("fulfilled") == 1


@pytest.mark.slow
def test_a_plain_negation_without_yet_still_negates(tmp_path, minilm):
    memory = memory_with(tmp_path, minilm, 9, "Oskar", "I live in Leeds.", "I don't live in Leeds anymore.")
    assert not is_open(memory, "lives in Leeds")


PET_GONE = [
    ("Oskar", "I have a dog named Biscuit.", "Biscuit died last night.", "dog named Biscuit"),
    ("Lotte", "I have a parrot called Mango.", "Mango ran away in June.", "parrot called Mango"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("speaker", "first", "gone", "old_words"), PET_GONE)
def test_a_pet_that_died_or_ran_away_is_no_longer_had(tmp_path, minilm, speaker, first, gone, old_words):
    assert is_open(memory_with(tmp_path, minilm, 8, speaker, first, gone), old_words)  # the v8 gap
    memory = memory_with(tmp_path, minilm, 9, speaker, first, gone)
    assert not is_open(memory, old_words), [(f.text, f.is_open) for f in memory.facts(valid_only=False)]


@pytest.mark.slow
def test_a_rehomed_pet_named_as_the_object_is_no_longer_had(tmp_path, minilm):
    memory = memory_with(tmp_path, minilm, 9, "Oskar", "I have a cat named Pilot.", "We rehomed Pilot with my aunt.")
    old = next(f for f in memory.facts(valid_only=False) if "cat named Pilot" in f.text)
    # the pet's name, shared by both facts and neither's subject, makes the ending past-tense-proof as "Pilot died"
    # is; before that the one answer (0.9) stayed under the ~0.924 bound and only lowered belief to about 0.4
    assert not old.is_open
    assert memory.explain(old.id)["history"][-1]["event"] == "close"


@pytest.mark.slow
@pytest.mark.parametrize("remark", ["Mango learned a new word.", "My neighbour's dog died."])
def test_news_of_a_pet_or_of_someone_elses_pet_ends_nothing(tmp_path, minilm, remark):
    memory = memory_with(tmp_path, minilm, 9, "Lotte", "I have a parrot called Mango.", remark)
    assert is_open(memory, "parrot called Mango") and not memory.stats()["closes"]


@pytest.mark.slow
def test_a_new_age_replaces_the_old_one(tmp_path, minilm):
    first, birthday = "I am 34 years old.", "I turned 35 today!"
    assert is_open(memory_with(tmp_path, minilm, 8, "Oskar", first, birthday), "34 years old")  # the v8 gap
    memory = memory_with(tmp_path, minilm, 9, "Oskar", first, birthday)
    assert not is_open(memory, "34 years old") and is_open(memory, "turned 35")


@pytest.mark.slow
@pytest.mark.parametrize(
    "remark", ["My son turned 12 today.", "I ran 10 km today.", "I am 41 years old and proud of it."]
)
def test_a_childs_birthday_a_distance_or_the_same_age_replace_nothing(tmp_path, minilm, remark):
    memory = memory_with(tmp_path, minilm, 9, "Ines", "I am 41 years old.", remark)
    assert is_open(memory, "41 years old") and not memory.stats()["closes"]


MOVES_WITH_ANOTHER_VERB = [
    "I rented a flat in Braga and moved there in May.",
    "We bought a house in Faro and moved in last month.",
    "I found a place in Aveiro and moved last week.",
]


@pytest.mark.slow
@pytest.mark.parametrize("move", MOVES_WITH_ANOTHER_VERB)
def test_a_move_told_after_another_verb_replaces_the_home(tmp_path, minilm, move):
    memory = memory_with(tmp_path, minilm, 9, "Ada", "I live in Porto.", move)
    assert not is_open(memory, "lives in Porto"), [(f.text, f.is_open) for f in memory.facts(valid_only=False)]


@pytest.mark.slow
def test_version_8_left_the_home_open_after_such_a_move(tmp_path, minilm):
    memory = memory_with(tmp_path, minilm, 8, "Ada", "I live in Porto.", MOVES_WITH_ANOTHER_VERB[1])
    assert is_open(memory, "lives in Porto")


@pytest.mark.slow
@pytest.mark.parametrize(
    "remark",
    [
        "I moved to Lisbon as a student, years ago.",  # a past mention (v8 closed the home on this)
        "Back in 2010 I moved to Lisbon for a year.",
        "I might buy a flat in Braga and move there.",  # a possibility
        "I bought a bike in Braga.",  # a purchase, no move
    ],
)
def test_an_old_move_a_possible_move_or_a_purchase_leave_the_home(tmp_path, minilm, remark):
    memory = memory_with(tmp_path, minilm, 9, "Ada", "I live in Porto.", remark)
    assert is_open(memory, "lives in Porto") and not memory.stats()["closes"]


@pytest.mark.slow
def test_a_promotion_replaces_the_job_title(tmp_path, minilm):
    first, promoted = "I work as a junior designer.", "I got promoted to senior designer."
    assert is_open(memory_with(tmp_path, minilm, 8, "Ada", first, promoted), "junior designer")  # the v8 gap
    memory = memory_with(tmp_path, minilm, 9, "Ada", first, promoted)
    assert not is_open(memory, "junior designer") and is_open(memory, "senior designer")


@pytest.mark.slow
@pytest.mark.parametrize(
    "remark", ["My friend Joao got promoted to manager.", "I hope to get promoted to senior designer next year."]
)
def test_a_friends_or_a_hoped_for_promotion_changes_nothing(tmp_path, minilm, remark):
    memory = memory_with(tmp_path, minilm, 9, "Ada", "I work as a junior designer.", remark)
    assert is_open(memory, "junior designer") and not memory.stats()["closes"]
