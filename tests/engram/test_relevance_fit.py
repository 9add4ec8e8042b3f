"""The rules stand-in's relevance answer: fitted on its tuning conversations only, and it reads like relevance.

The weights in engram/deciders/_rules.py must be what `scripts/fit_relevance.py` fits on the committed table, and the
table must come from the stand-in's tuning conversations, never from the article's held-out ones. The scenarios use
names and phrasings of their own: a memory that holds the answer is judged relevant, one about someone else or
something else is not.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from bench.data.slices import HELDOUT_CONVERSATIONS
from engram._types import Ask
from engram.deciders import RulesDecider
from engram.deciders import _rules as rules_module
from engram.questions import RELEVANT_TO_QUERY

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fit_relevance.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("fit_relevance", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table(script):
    return script.read_table(script.TABLE)


def test_the_decider_carries_the_weights_the_script_fits_on_the_committed_table(script):
    bias, weights = script.fit(script.TABLE)
    assert bias == rules_module.RELEVANCE_BIAS
    assert set(weights) == set(rules_module.RELEVANCE_FEATURES)
    for name, weight in weights.items():
        assert weight == pytest.approx(rules_module.RELEVANCE_WEIGHTS[name], abs=5e-4), name


def test_the_table_comes_from_the_tuning_conversations_and_none_of_the_articles_heldout_ones(script, table):
    names, rows = table
    assert names == rules_module.RELEVANCE_FEATURES
    conversations = {row.question_id.split(":")[0] for row in rows}
    assert conversations == set(script.TUNING_CONVERSATIONS)
    assert not conversations & set(HELDOUT_CONVERSATIONS)
    assert all(row.evidence >= len(row.hits) for row in rows)


def test_on_its_tuning_data_the_relevance_answer_orders_shortlists_better_than_cosine(script, table):
    _, rows = table
    slopes = [rules_module.RELEVANCE_WEIGHTS[n] for n in rules_module.RELEVANCE_FEATURES]
    cosine_only = script.read_path_recall(rows, -math.inf, slopes)
    reranked = script.read_path_recall(rows, rules_module.RELEVANCE_BIAS, slopes)
    assert reranked > cosine_only + 0.01


def relevance(rules: RulesDecider, query: str, *memories: str) -> list[float]:
    asks = [Ask(f"m{i}", RELEVANT_TO_QUERY, refs={"memory": {"text": m}}) for i, m in enumerate(memories)]
    answers = rules.ask({"query": query}, asks)
    return [answers[f"m{i}"].p("yes") for i in range(len(memories))]


@pytest.mark.parametrize(
    ("query", "answer", "other_person", "off_topic"),
    [
        (
            "What instrument is Tomas learning?",
            "Tomas has been learning to play the cello since March",
            "Priya has been learning to play the violin",
            "Tomas bought a new rain jacket",
        ),
        (
            "Where did Lena move to last year?",
            "Lena moved to Lyon last year",
            "Jonas moved to Hamburg last year",
            "Lena adopted a grey kitten",
        ),
        (
            "Which sport does Amara coach on weekends?",
            "Amara coaches a youth basketball team on Saturdays",
            "Bilal coaches a youth football team on Saturdays",
            "Amara visited her grandmother in Accra",
        ),
    ],
)
def test_the_memory_that_answers_ranks_above_other_people_and_other_topics(
    minilm, query, answer, other_person, off_topic
):
    rules = RulesDecider(minilm)
    p_answer, p_other, p_off = relevance(rules, query, answer, other_person, off_topic)
    assert p_answer > p_other + 0.1 and p_answer > p_off + 0.1
    assert p_off < 0.2


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("Where did Lena move to last year?", "Lena moved to Lyon last year"),
        ("Where does Kofi work now?", "Kofi works at a bakery in Kumasi"),
        ("When did Odile start her pottery class?", "Odile started a pottery class on 3 May 2023"),
    ],
)
def test_a_memory_with_the_kind_of_answer_asked_for_is_judged_relevant(minilm, query, answer):
    # P(yes) is calibrated on "came from an evidence turn", so it passes theta_rel = 0.5 only on strong evidence:
    # the asked-about person, shared words, and the kind of thing the question wants (a place, a date).
    assert relevance(RulesDecider(minilm), query, answer)[0] > 0.5


def test_relevance_is_a_probability_that_grows_with_the_evidence_not_a_fixed_peak(minilm):
    rules = RulesDecider(minilm)
    strong, weak = relevance(
        rules,
        "When did Odile start her pottery class?",
        "Odile started a pottery class on 3 May 2023",
        "Odile likes tea",
    )
    assert 0.5 < strong < 0.99
    assert 0.0 < weak < 0.2
