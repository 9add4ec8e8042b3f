"""The offline rules stand-in for a typed decision model: scenarios from the question rubrics, honest distributions."""

from __future__ import annotations

import math

import pytest

from engram import Ask
from engram.deciders import RulesDecider
from engram.questions import (
    ALL_QUESTIONS,
    BY_ID,
    PLAN_FULFILLED,
    QUERY_RELATION,
    RELATION_TO_CANDIDATE,
    RELATION_TO_CANDIDATE_RECHECK,
    RELEVANT_TO_QUERY,
    SAME_FACT,
    TEMPORAL_STATUS,
    relation_questions,
)


@pytest.fixture(scope="module")
def rules(minilm) -> RulesDecider:
    return RulesDecider(minilm)


def write_state(text: str, message: str = "", subject: str = "Caroline") -> dict:
    return {"new_fact": {"text": text, "subject": subject, "object": "unspecified"}, "source_message": message}


def relation(rules, new: str, old: str, message: str = "", question=RELATION_TO_CANDIDATE):
    ask = Ask(
        "rel",
        question,
        refs={
            "existing_fact": {"text": old, "subject": "Caroline", "object": "unspecified", "valid_from": "2023-05-01"}
        },
        target="f1",
    )
    return rules.ask(write_state(new, message), [ask])["rel"]


def temporal(rules, text: str, message: str = ""):
    return rules.ask(write_state(text, message), [Ask("t", TEMPORAL_STATUS)])["t"]


def test_moving_to_berlin_supersedes_living_in_paris(rules):
    decision = relation(rules, "Caroline moved to Berlin", "Caroline lives in Paris", "I moved to Berlin!")
    assert decision.chosen in {"update", "negates"} and decision.confidence >= 0.7
    assert decision.target == "f1" and decision.backend == "rules" and "standin" in decision.model


def test_liking_painting_is_new_beside_liking_hiking(rules):
    decision = relation(rules, "Caroline likes painting", "Caroline likes hiking")
    assert decision.chosen == "new" and decision.p("update") < 0.2


def test_a_plan_to_move_replaces_nothing_and_is_read_as_not_yet_true(rules):
    assert relation(rules, "Caroline is thinking of moving to Rome", "Caroline lives in Paris").chosen == "new"
    status = temporal(rules, "Caroline is thinking of moving to Rome", "I'm thinking of moving to Rome.")
    assert status.chosen in {"planned", "hypothetical"}
    assert status.p("current") + status.p("past") < 0.5  # g_T would block any close


def test_the_same_sentence_again_is_a_duplicate(rules):
    decision = relation(rules, "Caroline lives in Paris", "Caroline lives in Paris")
    assert decision.chosen == "duplicate" and decision.confidence > 0.8
    assert (
        rules.ask(
            {"subject": "Caroline"},
            [Ask("s", SAME_FACT, refs={"fact_a": "Caroline lives in Paris", "fact_b": "Caroline lives in Paris"})],
        )["s"].chosen
        == "yes"
    )


def test_added_detail_is_a_refinement(rules):
    assert (
        relation(rules, "Caroline lives in Paris with her two cats", "Caroline lives in Paris").chosen == "refinement"
    )


def test_stopping_something_negates_it(rules):
    decision = relation(rules, "Caroline no longer eats meat", "Caroline eats meat", "I don't eat meat anymore.")
    assert decision.chosen == "negates"
    v1, _ = relation_questions(1)  # without `negates`, the same evidence reads as a contradiction
    assert relation(rules, "Caroline no longer eats meat", "Caroline eats meat", question=v1).chosen == "contradiction"


def test_confidence_follows_the_evidence(rules):
    # A stated change ("moved") is stronger evidence of an update than two bare present-tense facts.
    cued = relation(rules, "Caroline lives in Berlin", "Caroline lives in Paris", "I moved, I live in Berlin now.")
    bare = relation(rules, "Caroline lives in Berlin", "Caroline lives in Paris", "")
    assert cued.chosen == bare.chosen == "update" and cued.confidence > bare.confidence


def test_the_recheck_phrasing_reads_the_same_pair(rules):
    recheck = relation(
        rules,
        "Caroline no longer eats meat",
        "Caroline eats meat",
        "I quit meat.",
        question=RELATION_TO_CANDIDATE_RECHECK,
    )
    assert recheck.question == "relation_to_candidate_recheck" and recheck.chosen == "negates"


def test_past_events_and_completed_changes_get_their_temporal_status(rules):
    assert temporal(rules, "Caroline went to a concert last week").chosen == "past"
    assert temporal(rules, "Caroline sold her car", "I sold my car.").chosen == "current"  # v2: a done change
    assert temporal(rules, "Caroline will start a pottery class next month").chosen == "planned"


def test_a_memory_that_holds_the_answer_is_relevant_and_an_off_topic_one_is_not(rules):
    asks = [
        Ask("a", RELEVANT_TO_QUERY, refs={"memory": {"text": "Caroline moved from Sweden four years ago"}}),
        Ask("b", RELEVANT_TO_QUERY, refs={"memory": {"text": "Melanie bought new running shoes"}}),
        Ask("q", QUERY_RELATION),
    ]
    answers = rules.ask({"query": "Where did Caroline move from?"}, asks)
    assert answers["a"].chosen == "yes" and answers["b"].chosen == "no"
    assert answers["a"].p("yes") > answers["b"].p("yes") + 0.5
    assert answers["q"].chosen == "lives_in"


def test_a_plan_that_happened_is_fulfilled(rules):
    plan = {"existing_fact": {"text": "Caroline plans to visit Rome next summer"}}
    done = rules.ask(
        write_state("Caroline visited Rome", "I finally visited Rome!"), [Ask("p", PLAN_FULFILLED, refs=plan)]
    )["p"]
    again = rules.ask(write_state("Caroline still hopes to visit Rome someday"), [Ask("p", PLAN_FULFILLED, refs=plan)])[
        "p"
    ]
    assert done.chosen == "yes" and again.chosen == "no"


def test_every_question_gets_a_valid_distribution(rules):
    refs = {
        "relation_to_candidate": {"existing_fact": {"text": "Caroline lives in Paris"}},
        "relation_to_candidate_recheck": {"existing_fact": {"text": "Caroline lives in Paris"}},
        "plan_fulfilled": {"existing_fact": {"text": "Caroline plans to move to Berlin"}},
        "relevant_to_query": {"memory": {"text": "Caroline lives in Paris", "valid_from": "2023-05-01"}},
        "same_fact": {"fact_a": "Caroline lives in Paris", "fact_b": "Caroline is based in Paris"},
    }
    state = {
        **write_state("Caroline moved to Berlin and is allergic to peanuts", "I moved to Berlin."),
        "query": "Where does Caroline live?",
    }
    asks = [Ask(q.id, q, refs=refs.get(q.id, {})) for q in ALL_QUESTIONS]
    answers = rules.ask(state, asks)
    assert set(answers) == {q.id for q in ALL_QUESTIONS}
    for question in ALL_QUESTIONS:
        decision = answers[question.id]
        assert not decision.fallback, decision.error
        assert set(decision.probs) == set(question.options)
        assert all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in decision.probs.values())
        assert math.isclose(sum(decision.probs.values()), 1.0, abs_tol=1e-9)
        assert decision.confidence == max(decision.probs.values()) < 1.0  # never a certainty from rules
    peaks = {round(answers[q.id].confidence, 3) for q in ALL_QUESTIONS}
    assert len(peaks) > 4  # confidence varies with the evidence instead of a fixed peak


def test_a_missing_ref_degrades_only_its_own_ask(rules):
    answers = rules.ask(
        write_state("Caroline lives in Paris"), [Ask("rel", RELATION_TO_CANDIDATE), Ask("kind", BY_ID["fact_kind"])]
    )
    assert answers["rel"].fallback and answers["rel"].chosen == "new" and "existing_fact" in answers["rel"].error
    assert not answers["kind"].fallback and answers["kind"].chosen == "bio"


def test_the_same_request_gets_the_same_answers(rules):
    state = write_state("Caroline switched to a Pixel 8", "Switched phones, I'm on a Pixel 8 now.")
    asks = [Ask(q.id, q, refs={"existing_fact": {"text": "Caroline uses an iPhone 12"}}) for q in ALL_QUESTIONS[:8]]
    assert rules.ask(state, asks) == rules.ask(state, asks)


def test_a_memory_asked_about_alone_is_not_relevant_just_for_being_the_closest(rules):
    lone = [Ask("m", RELEVANT_TO_QUERY, refs={"memory": {"text": "Priya bakes sourdough on Sundays"}})]
    assert rules.ask({"query": "Which airline did Tomas fly to Lima?"}, lone)["m"].chosen == "no"
