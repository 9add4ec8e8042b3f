"""The twelve typed questions and the wire answers a backend returns for them."""

from __future__ import annotations

import math
from dataclasses import replace

from engram import Ask, decision_from_answer
from engram.questions import (
    ALL_QUESTIONS,
    EDGE_TYPES,
    QUERY_RELATION,
    RELATION_TO_CANDIDATE,
    RELEVANT_TO_QUERY,
    SUPERSEDING,
    cardinality,
    relation_questions,
    temporal_question,
)


def test_the_twelve_questions_have_the_issue_ids_and_kinds():
    kinds = {q.id: q.kind for q in ALL_QUESTIONS}
    assert kinds == {
        "worth_remembering": "yes_no",
        "fact_kind": "choice",
        "temporal_status": "choice",
        "edge_type": "choice",
        "durability": "choice",
        "sensitivity": "choice",
        "relation_to_candidate": "choice",
        "relation_to_candidate_recheck": "choice",
        "plan_fulfilled": "yes_no",
        "relevant_to_query": "yes_no",
        "query_relation": "choice",
        "same_fact": "yes_no",
    }
    assert len(EDGE_TYPES) == 25 and cardinality("lives_in") == "one" and cardinality("hobby") == "many"
    assert cardinality("not-a-relation") == "many"
    assert QUERY_RELATION.options[-1] == "none" and "related_to" not in QUERY_RELATION.options
    assert len(QUERY_RELATION.options) == 25


def test_both_relation_phrasings_share_options_and_v2_adds_negates():
    first, second = relation_questions(2)
    assert first.options == second.options and first.instructions != second.instructions
    assert "negates" in first.options and "negates" not in relation_questions(1)[0].options
    assert SUPERSEDING <= set(first.options)


def test_a_change_of_wording_changes_the_version():
    edited = replace(RELEVANT_TO_QUERY, criteria={"yes": "Helps.", "no": "Does not help."})
    assert edited.version != RELEVANT_TO_QUERY.version and edited.version.startswith("v1.")
    assert temporal_question(1).version != temporal_question(2).version
    assert temporal_question(2).version.startswith("v2.")


def test_the_wire_payload_carries_refs_inside_the_instructions():
    ask = Ask("relevant_to_query__0", RELEVANT_TO_QUERY, {"memory": {"text": "Ana likes jazz"}}, "f1")
    payload = ask.payload()
    assert payload["type"] == "noul" and set(payload["criteria"]) == {"true", "false"}
    assert payload["instructions"]["memory"] == {"text": "Ana likes jazz"}
    assert Ask("q", QUERY_RELATION).payload()["instructions"] == QUERY_RELATION.instructions


def answer(ask, wire):
    return decision_from_answer(ask, wire, backend="jev", model="jev-1.13.0", latency_ms=210.0, cost_usd=1e-6)


def test_a_valid_choice_answer_keeps_the_full_distribution():
    ask = Ask("relation_to_candidate__0", RELATION_TO_CANDIDATE, target="f1")
    probs = {"new": 0.05, "duplicate": 0.05, "refinement": 0.05, "update": 0.8, "contradiction": 0.03, "negates": 0.02}
    decision = answer(ask, {"probabilities": probs, "choice": "update", "confidence": 0.8})
    assert not decision.fallback and decision.chosen == "update" and decision.confidence == 0.8
    assert math.isclose(sum(decision.probs.values()), 1.0) and decision.target == "f1"
    assert decision.latency_ms == 210.0


def test_malformed_answers_degrade_to_the_safe_default_with_a_reason():
    ask = Ask("relation_to_candidate__0", RELATION_TO_CANDIDATE, target="f1")
    ok = {"new": 0.1, "duplicate": 0.1, "refinement": 0.1, "update": 0.5, "contradiction": 0.1, "negates": 0.1}
    cases = {
        "not an object": "update",
        "missing option": {"probabilities": {"update": 1.0}, "choice": "update"},
        "sum": {"probabilities": {**ok, "update": 0.9}, "choice": "update"},
        "choice not max": {"probabilities": ok, "choice": "new"},
        "unknown choice": {"probabilities": ok, "choice": "rewrite"},
        "nan": {"probabilities": {**ok, "new": float("nan")}, "choice": "update"},
    }
    for label, wire in cases.items():
        decision = answer(ask, wire)
        assert decision.fallback and decision.chosen == "new" and decision.probs == {}, label
        assert decision.error and decision.error.startswith("relation_to_candidate__0"), label
    yes_no = Ask("relevant_to_query__3", RELEVANT_TO_QUERY)
    assert answer(yes_no, {"noul": 0.7}).chosen == "yes"
    broken = answer(yes_no, {"noul": "high"})
    assert broken.fallback and broken.chosen == "no"
