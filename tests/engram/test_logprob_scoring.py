"""A typed question asked of a plain language model: the prompt it reads, and the distribution read off its tokens."""

from __future__ import annotations

import json
import math

import pytest

from engram import Ask, Decision, InvalidInput, Question
from engram.deciders import logprob_decision, logprob_prompt
from engram.deciders._logprob import label_of, option_labels, score_options
from engram.questions import ALL_QUESTIONS, FACT_KIND, RELATION_TO_CANDIDATE, SAME_FACT, WORTH_REMEMBERING

WRITE_STATE = {
    "new_fact": {"text": "Caroline moved to Lisbon", "subject": "Caroline", "object": "Lisbon"},
    "source_message": "We finally moved to Lisbon last week!",
}


def lp(p: float) -> float:
    return math.log(p)


def test_every_catalogued_question_gets_one_letter_per_option_in_offered_order():
    for question in ALL_QUESTIONS:
        labels = option_labels(question)
        assert list(labels) == list(question.options)
        assert len(set(labels.values())) == len(labels)
        assert all(len(label) == 1 for label in labels.values())
    assert option_labels(WORTH_REMEMBERING) == {"yes": "A", "no": "B"}


def test_a_question_with_more_options_than_letters_is_refused():
    crowded = Question(
        id="crowded", kind="choice", instructions="?", criteria={f"o{i}": "r" for i in range(27)}, default="o0"
    )
    with pytest.raises(InvalidInput, match="at most 26 options"):
        option_labels(crowded)


def test_the_prompt_shows_the_inputs_the_question_and_every_option_with_its_rubric():
    ask = Ask(
        "relation_to_candidate__0", RELATION_TO_CANDIDATE, refs={"existing_fact": {"text": "Caroline lives in Boston"}}
    )
    text = logprob_prompt(WRITE_STATE, ask)
    assert 'new_fact: {"text": "Caroline moved to Lisbon"' in text
    assert 'existing_fact: {"text": "Caroline lives in Boston"}' in text
    assert f"Question: {RELATION_TO_CANDIDATE.instructions}" in text
    for option, label in option_labels(RELATION_TO_CANDIDATE).items():
        assert f"{label}. {option}: {RELATION_TO_CANDIDATE.criteria[option]}" in text
    assert text.rstrip().endswith("(A-F) and nothing else.")


def test_a_yes_no_question_lists_yes_and_no_with_their_rubrics():
    text = logprob_prompt({"fact_a": "Ana likes tea", "fact_b": "Ana enjoys tea"}, Ask("same_fact", SAME_FACT))
    assert f"A. yes: {SAME_FACT.criteria['yes']}" in text and f"B. no: {SAME_FACT.criteria['no']}" in text


@pytest.mark.parametrize("token", ["A", " A", "A.", "(A", "A)", "**A", "\u2581A", "\nA"])
def test_a_letter_counts_however_the_tokenizer_dresses_it(token):
    assert label_of(token) == "A"


@pytest.mark.parametrize("token", ["a", "An", "Answer", "AB", " ", "1", ""])
def test_words_lower_case_letters_and_blanks_name_no_option(token):
    assert label_of(token) is None


def test_probabilities_are_renormalised_over_the_options_and_same_letter_tokens_add_up():
    tokens = [("A", lp(0.5)), (" B", lp(0.2)), ("B", lp(0.1)), ("The", lp(0.15)), ("Z", lp(0.05))]
    scored = score_options(WORTH_REMEMBERING, tokens)
    assert scored.probs == pytest.approx({"yes": 0.5 / 0.8, "no": 0.3 / 0.8})
    assert scored.option_mass == pytest.approx(0.8)
    assert [option for _, _, option in scored.tokens] == ["yes", "no", "no", None, None]


def test_an_option_missing_from_the_top_tokens_gets_no_probability():
    scored = score_options(FACT_KIND, [("C", lp(0.6)), ("A", lp(0.2))])
    assert scored.probs["event"] == pytest.approx(0.75) and scored.probs["preference"] == pytest.approx(0.25)
    assert scored.probs["task"] == 0.0 and sum(scored.probs.values()) == pytest.approx(1.0)


def test_the_decision_takes_the_most_probable_option_and_records_every_token_it_read():
    ask = Ask("fact_kind", FACT_KIND, target="f7")
    decision = logprob_decision(
        ask, [(" B", lp(0.7)), ("A", lp(0.2)), ("I", lp(0.1))], model="smollm2", latency_ms=31.0
    )
    assert (decision.chosen, decision.backend, decision.model, decision.target) == ("bio", "logprob", "smollm2", "f7")
    assert decision.confidence == pytest.approx(0.7 / 0.9)
    assert decision.scored == {
        "tokens": [[" B", lp(0.7), "bio"], ["A", lp(0.2), "preference"], ["I", lp(0.1), None]],
        "option_mass": pytest.approx(0.9),
    }
    assert not decision.fallback and decision.latency_ms == 31.0


def test_a_reply_naming_no_option_falls_back_to_the_safe_default_and_says_what_it_saw():
    ask = Ask("worth_remembering", WORTH_REMEMBERING)
    decision = logprob_decision(ask, [("Sure", lp(0.9)), ("I", lp(0.1))], model="m")
    assert decision.fallback and decision.chosen == WORTH_REMEMBERING.default and decision.probs == {}
    assert "no option letter (A, B) among the 2 top tokens" in (decision.error or "")
    assert decision.scored is not None and [t[0] for t in decision.scored["tokens"]] == ["Sure", "I"]


def test_the_scored_tokens_survive_the_store_round_trip_and_other_backends_records_are_unchanged():
    ask = Ask("same_fact", SAME_FACT)
    decision = logprob_decision(ask, [("A", lp(0.9)), ("B", lp(0.05))], model="m")
    assert Decision.from_json(json.loads(json.dumps(decision.to_json()))) == decision
    plain = Decision.from_probs(SAME_FACT, {"yes": 0.2, "no": 0.8}, backend="jev", model="jev-1.13.0")
    assert "scored" not in plain.to_json()
