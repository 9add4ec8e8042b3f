"""The choices §3 of the article leaves unstated, each a named setting in `engram.config` whose default is what the
original implementation did: where an acted-on fact's belief starts, whose fact an extracted fact is, the
confidence the read path's relation pull needs, and how many superseded generations a kept fact brings along.

Each scenario runs through the public API over the scripted decider, once with the default and once with the
setting moved, so a test fails if the setting is not what the code reads.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pytest

from engram import ExtractedFact, Extraction, ExtractionContext, Flags, Message, config
from engram import _belief as belief
from tests.engram.conftest import day


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _fact(memory, words: str):
    return next(f for f in memory.facts(valid_only=False) if words in f.text)


# ---- where an acted-on fact's belief starts ------------------------------------------------------------------------


def test_the_default_start_is_b_max_so_one_confirmed_update_needs_more_than_theta_act():
    # Computed from the config, not typed in: 2 logit p = logit b_max - logit theta_close.
    bound = 1.0 / (1.0 + math.exp(-(_logit(config.BELIEF_MAX) - _logit(config.THETA_CLOSE)) / 2.0))
    assert config.INITIAL_ACTED_BELIEF is None
    assert belief.initial_belief(1.0, tentative=False) == config.BELIEF_MAX
    assert math.isclose(belief.single_update_close_bound(config.BELIEF_MAX), bound)
    assert bound > config.THETA_ACT  # the consequence the docstring and README state
    above, below = bound + 0.002, bound - 0.002
    assert belief.shift(config.BELIEF_MAX, belief.against_evidence(above, above)) < config.THETA_CLOSE
    assert belief.shift(config.BELIEF_MAX, belief.against_evidence(below, below)) >= config.THETA_CLOSE


def _move(memory, decider, p: float) -> None:
    decider.on("edge_type", {"lives_in": 0.95})
    decider.on("relation_to_candidate", {"update": p}, new="Narva", existing="Tartu")
    decider.on("relation_to_candidate_recheck", {"update": p}, new="Narva", existing="Tartu")
    memory.add("Hanna lives in Tartu.", speaker="Hanna", when=day(0))
    memory.add("Hanna lives in Narva.", speaker="Hanna", when=day(30))


def test_a_confirmed_update_between_theta_act_and_the_bound_leaves_a_fresh_fact_open(make_memory, decider):
    memory = make_memory()
    _move(memory, decider, 0.90)
    old = _fact(memory, "Tartu")
    assert old.is_open and config.THETA_CLOSE < old.belief < 0.5


def test_a_confirmed_update_above_the_bound_closes_a_fresh_fact(make_memory, decider):
    memory = make_memory()
    _move(memory, decider, round(belief.single_update_close_bound(config.BELIEF_MAX) + 0.01, 3))
    assert not _fact(memory, "Tartu").is_open


def test_a_lower_starting_belief_lets_the_same_update_close(make_memory, decider, monkeypatch):
    monkeypatch.setattr(config, "INITIAL_ACTED_BELIEF", 0.9)
    memory = make_memory()
    decider.on("edge_type", {"lives_in": 0.95})
    memory.add("Hanna lives in Tartu.", speaker="Hanna", when=day(0))
    assert _fact(memory, "Tartu").belief == pytest.approx(0.9)
    decider.on("relation_to_candidate", {"update": 0.90}, new="Narva", existing="Tartu")
    decider.on("relation_to_candidate_recheck", {"update": 0.90}, new="Narva", existing="Tartu")
    memory.add("Hanna lives in Narva.", speaker="Hanna", when=day(30))
    assert not _fact(memory, "Tartu").is_open


# ---- whose fact it is ----------------------------------------------------------------------------------------------


@dataclass
class NamingExtractor:
    """Test extractor: a sentence opening with a name from `people` is that person's fact, any other the speaker's."""

    people: tuple[str, ...]
    name: str = "naming"
    model: str = "naming-test"

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        facts = []
        for sentence in (s.strip() for s in re.split(r"(?<=[.!?])\s+", message.text) if s.strip()):
            first = sentence.split()[0]
            subject = first if first in self.people else message.speaker
            facts.append(ExtractedFact(text=sentence.rstrip("."), subject=subject, source_text=sentence))
        return Extraction(facts=facts)


def _friend_moves(make_memory, decider):
    memory = make_memory(extractor=NamingExtractor(people=("Bruno",)))
    decider.on("edge_type", {"lives_in": 0.95})
    # a confident contradiction between the speaker's home and her friend's: only a same-subject pair may close
    decider.on("relation_to_candidate", {"contradiction": 0.97}, new="Braga", existing="Faro")
    decider.on("relation_to_candidate_recheck", {"contradiction": 0.97}, new="Braga", existing="Faro")
    memory.add("I live in Faro.", speaker="Ines", when=day(0))
    memory.add("Bruno lives in Braga.", speaker="Ines", when=day(5))
    return memory


def test_a_fact_about_a_friend_is_the_friends_and_leaves_the_speakers_home_alone(make_memory, decider):
    assert config.FACT_SUBJECT == "extracted"
    memory = _friend_moves(make_memory, decider)
    assert _fact(memory, "Braga").subject == "bruno" and _fact(memory, "Faro").subject == "ines"
    assert _fact(memory, "Faro").is_open  # g_C: a contradiction needs the same subject
    assert memory.stats()["blocked"]["cardinality"] >= 1


def test_with_every_fact_the_speakers_the_friends_move_contradicts_her_own_home(make_memory, decider, monkeypatch):
    monkeypatch.setattr(config, "FACT_SUBJECT", "speaker")
    memory = _friend_moves(make_memory, decider)
    assert _fact(memory, "Braga").subject == "ines"
    assert not _fact(memory, "Faro").is_open


def test_graph_candidates_gather_the_named_persons_facts(make_memory, decider):
    # G(f)'s same-subject half: Bruno's new home is compared with his old one, found by subject and relation
    # even though nothing but the relation links their wording.
    memory = make_memory(extractor=NamingExtractor(people=("Bruno",)))
    decider.on("edge_type", {"lives_in": 0.95})
    memory.add("Bruno lives in Braga.", speaker="Ines", when=day(0))
    memory.add("Bruno lives in Coimbra.", speaker="Ines", when=day(9))
    asked = [a.refs["existing_fact"]["text"] for a in decider.asked("relation_to_candidate")]
    assert "Bruno lives in Braga" in asked


# ---- the relation pull's confidence ----------------------------------------------------------------------------


def _homes(make_memory, decider):
    memory = make_memory(flags=Flags(retrieval_floor=0))  # no floor: only relevant or pulled facts are shown
    decider.on("edge_type", {"lives_in": 0.95}, new="lives")
    for n, town in enumerate(("Gdynia", "Sopot", "Elblag")):
        memory.add(f"Cousin {n} lives in {town}.", speaker="Olek", when=day(n))
    decider.on("query_relation", {"lives_in": 0.8})
    return memory


def test_a_relation_named_below_the_pull_confidence_pulls_nothing(make_memory, decider):
    assert config.RELATION_PULL_CONFIDENCE == 0.85
    memory = _homes(make_memory, decider)
    assert [line.source for line in memory.search("Where do the cousins live?")] == []


def test_a_lower_pull_confidence_pulls_the_relations_valid_facts(make_memory, decider, monkeypatch):
    monkeypatch.setattr(config, "RELATION_PULL_CONFIDENCE", 0.75)
    memory = _homes(make_memory, decider)
    lines = memory.search("Where do the cousins live?")
    assert {line.source for line in lines} == {"relation"} and len(lines) == 3


# ---- how deep the superseded chain goes ----------------------------------------------------------------------------


def _seven_moves(make_memory, decider):
    memory = make_memory(flags=Flags(retrieval_floor=0))
    towns = ("Aalborg", "Odense", "Vejle", "Horsens", "Randers", "Kolding", "Esbjerg")
    decider.on("edge_type", {"lives_in": 0.95})
    decider.on("relation_to_candidate", {"update": 0.97})
    decider.on("relation_to_candidate_recheck", {"update": 0.97})
    for n, town in enumerate(towns):
        memory.add(f"Freja lives in {town}.", speaker="Freja", when=day(20 * n))
    decider.on("relevant_to_query", 0.95, memory="Esbjerg")
    return memory


def test_a_kept_fact_brings_five_superseded_generations_by_default(make_memory, decider):
    assert config.HISTORY_DEPTH == 5
    memory = _seven_moves(make_memory, decider)
    lines = memory.search("Where does Freja live?")
    assert lines[0].text.endswith("Esbjerg") or "Esbjerg" in lines[0].text
    assert [line.source for line in lines[1:]] == ["history"] * 5
    assert not any("Aalborg" in line.text for line in lines)  # the sixth generation back stays out


def test_a_shallower_history_brings_fewer_generations(make_memory, decider, monkeypatch):
    monkeypatch.setattr(config, "HISTORY_DEPTH", 2)
    memory = _seven_moves(make_memory, decider)
    lines = memory.search("Where does Freja live?")
    assert [line.source for line in lines[1:]] == ["history"] * 2
    assert "Kolding" in lines[1].text and "Randers" in lines[2].text
