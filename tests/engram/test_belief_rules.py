"""The equations of §3.2 one at a time: evidence in log-odds, the three gates, and hysteresis."""

from __future__ import annotations

import math

import pytest

from engram import Decision, Flags, config
from engram import _belief as belief
from engram.questions import temporal_question


def temporal(**probs: float) -> Decision:
    return Decision.from_probs(temporal_question(2), probs, backend="scripted", model="t")


def test_evidence_is_log_odds_and_the_new_fact_gains_what_the_old_one_loses():
    e_support = belief.support_evidence(0.9)
    assert math.isclose(e_support, math.log(0.9 / 0.1))
    e_against = belief.against_evidence(0.92, 0.9)
    assert math.isclose(e_against, -math.log(0.92 / 0.08) - math.log(0.9 / 0.1))
    b_u = belief.shift(0.97, e_against)
    assert math.isclose(belief.logit(b_u), belief.logit(0.97) + e_against)
    assert b_u < config.THETA_CLOSE
    assert belief.shift(0.5, -min(e_against, 0.0)) > 0.5


def test_belief_stays_inside_the_clamp():
    assert belief.shift(0.98, 50.0) == config.BELIEF_MAX and belief.shift(0.02, -50.0) == config.BELIEF_MIN
    assert math.isfinite(belief.logit(1.0)) and belief.logit(1.0) == belief.logit(config.BELIEF_MAX)


@pytest.mark.parametrize(
    "probs, expected",
    [
        ({"current": 0.5, "past": 0.36}, True),  # split between current and past still counts as done
        ({"current": 0.84, "planned": 0.16}, False),
        ({"planned": 0.9, "current": 0.1}, False),
        ({"hypothetical": 0.5, "current": 0.5}, False),
    ],
)
def test_the_temporal_gate_sums_current_and_past(probs, expected):
    assert belief.temporal_gate(temporal(**probs), Flags()) is expected


def test_the_temporal_gate_v1_needs_current_itself():
    assert not belief.temporal_gate(temporal(current=0.5, past=0.4), Flags(temporal_gate="current"))
    assert belief.temporal_gate(temporal(current=0.9), Flags(temporal_gate="current"))


@pytest.mark.parametrize(
    "relation, predicate, sibling, expected",
    [
        ("negates", "hobby", False, True),
        ("update", "lives_in", False, True),
        ("update", "hobby", True, True),
        ("update", "hobby", False, False),
        ("contradiction", "lives_in", True, True),
        ("contradiction", "lives_in", False, False),
        ("contradiction", "prefers", True, False),
    ],
)
def test_the_cardinality_gate_as_written(relation, predicate, sibling, expected):
    assert belief.cardinality_gate(relation, predicate, sibling, Flags()) is expected


def test_the_agreement_gate_needs_a_confident_superseding_second_phrasing():
    from engram.questions import RELATION_TO_CANDIDATE_RECHECK as q

    def recheck(**p):
        return Decision.from_probs(q, p, backend="scripted", model="t")

    assert belief.agreement_gate(recheck(update=0.9, new=0.1))
    assert not belief.agreement_gate(recheck(update=0.8, new=0.2))
    assert not belief.agreement_gate(recheck(duplicate=0.95))
    assert not belief.agreement_gate(None)


def test_v3_counts_an_answer_only_above_one_half():
    from engram.questions import RELATION_TO_CANDIDATE as q

    weak = Decision.from_probs(q, {"duplicate": 0.45, "new": 0.35, "refinement": 0.2}, backend="s", model="m")
    strong = Decision.from_probs(q, {"duplicate": 0.55, "new": 0.45}, backend="s", model="m")
    assert not belief.counts_as_evidence(weak, Flags()) and belief.counts_as_evidence(strong, Flags())
    assert belief.counts_as_evidence(weak, Flags(belief_evidence="all"))
    assert belief.support_evidence(0.45) < 0  # why v2 lowered belief on weak support


def test_hysteresis_between_close_and_reopen():
    assert belief.settle(True, None, 0.24).transition == "close"
    assert belief.settle(True, None, 0.5).transition is None
    assert belief.settle(False, "belief", 0.5).transition is None  # between the two thresholds: stays closed
    assert belief.settle(False, "belief", 0.61).transition == "reopen"
    assert belief.settle(False, "fulfilled", 0.9).transition is None  # only belief closes reopen
