"""Belief in log-odds and the three gates on closing, as the article's §3.2 writes them.

Put this file next to §3.2: each function is one line of the equations, and the equation is in the comment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from engram import config
from engram._flags import Flags
from engram._types import Decision
from engram.questions import SUPERSEDING, SUPPORTING, cardinality


def clamp(b: float) -> float:
    """b_u in [0.02, 0.98]."""
    return min(config.BELIEF_MAX, max(config.BELIEF_MIN, b))


def logit(p: float) -> float:
    """logit p of the clamped probability, so a certain answer (p = 1, e.g. an escalation) stays finite."""
    q = clamp(p)
    return math.log(q / (1.0 - q))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def shift(b: float, delta: float) -> float:
    """logit b <- logit b + delta, then clamp."""
    return clamp(sigmoid(logit(b) + delta))


def initial_belief(relation_confidence: float, tentative: bool) -> float:
    """A tentative fact starts undecided; an acted-on fact starts at the confidence of its relation (clamped), or at
    `config.INITIAL_ACTED_BELIEF` when that is set.

    With the default, a fact acted on with no candidates (pi* = 1) starts at b_max = 0.98: one confirmed superseding
    answer then closes it only if pi and pi' are both at least `single_update_close_bound()` (about 0.924), not the
    0.85 of the zones; a pair at, say, 0.92 leaves it at about 0.27, open, until a second answer."""
    if tentative:
        return config.INITIAL_TENTATIVE_BELIEF
    start = config.INITIAL_ACTED_BELIEF
    return clamp(relation_confidence if start is None else start)


def single_update_close_bound(start: float) -> float:
    """The smallest pi = pi' with which one confirmed superseding answer closes a fact whose belief is `start`:
    logit start - 2 logit pi < logit theta_close, i.e. pi > sigmoid((logit start - logit theta_close) / 2)."""
    return sigmoid((logit(start) - logit(config.THETA_CLOSE)) / 2.0)


def temporal_gate(temporal: Decision, flags: Flags) -> bool:
    """g_T(f) = 1[P_D(current | f) + P_D(past | f) >= theta_act]; a degraded answer never opens the gate."""
    if temporal.fallback:
        return False
    if flags.temporal_gate == "not_planned_mass":
        return temporal.p("current") + temporal.p("past") >= config.THETA_ACT
    if flags.temporal_gate == "not_planned":
        return temporal.chosen in ("current", "past") and temporal.confidence >= config.THETA_ACT
    return temporal.chosen == "current" and temporal.confidence >= config.THETA_ACT


def cardinality_gate(relation: str, stored_predicate: str, sibling: bool, flags: Flags) -> bool:
    """g_C(f, u) = 1 iff  r = negates,
    or  r = update and (card(rel(u)) = one or sib(f, u)),
    or  r = contradiction and card(rel(u)) = one and sib(f, u)."""
    if not flags.cardinality_gate:
        return True
    single = cardinality(stored_predicate) == "one"
    if relation == "negates":
        return True
    if relation == "update":
        return single or (flags.update_multi_sibling and sibling)
    if relation == "contradiction":
        return single and sibling
    return False


def agreement_gate(recheck: Decision | None) -> bool:
    """g_A(f, u) = 1[r'(f, u) in S and pi'(f, u) >= theta_act]."""
    return (
        recheck is not None
        and not recheck.fallback
        and recheck.chosen in SUPERSEDING
        and recheck.confidence >= config.THETA_ACT
    )


def second_phrasing_p(recheck: Decision | None, flags: Flags) -> float | None:
    """pi'(f, u) when the second phrasing counts: it was asked, chose a superseding relation, and counts as evidence
    (for the first evidence against u, g_A has already required pi' >= theta_act). None: only pi counts."""
    if recheck is None or recheck.fallback or recheck.chosen not in SUPERSEDING:
        return None
    if not counts_as_evidence(recheck, flags):
        return None
    return recheck.confidence


def counts_as_evidence(decision: Decision, flags: Flags) -> bool:
    """v3 (article): an answer counts only when pi > 0.5 (its chosen option is the argmax). v2: every answer."""
    if flags.belief_evidence == "all":
        return True
    chosen_p = decision.p(decision.chosen)
    return chosen_p > 0.5 and chosen_p >= max(decision.probs.values(), default=0.0)


def answer_p(decision: Decision) -> float:
    """pi of the chosen option; an escalation's answer is certain (p = 1, clamped to 0.98 inside logit)."""
    return decision.p(decision.chosen) if decision.probs else 1.0


def support_evidence(pi: float) -> float:
    """e(f, u) = + logit pi(f, u)   for r in {duplicate, refinement}."""
    return logit(pi)


def against_evidence(pi: float, pi_recheck: float | None) -> float:
    """e(f, u) = - logit pi(f, u) - logit pi'(f, u)   for r in S with g_T g_C g_A = 1.
    Without a second phrasing that counts (not asked, or it did not choose a superseding relation), only pi."""
    e = -logit(pi)
    if pi_recheck is not None:
        e -= logit(pi_recheck)
    return e


def is_support(relation: str) -> bool:
    return relation in SUPPORTING


def is_against(relation: str) -> bool:
    return relation in SUPERSEDING


Transition = Literal["close", "reopen"] | None


@dataclass(frozen=True)
class Settled:
    belief: float
    transition: Transition


def settle(is_open: bool, closed_reason: str | None, belief: float) -> Settled:
    """Close below theta_close; reopen a belief-closed fact above theta_open. The gap is the hysteresis."""
    if is_open and belief < config.THETA_CLOSE:
        return Settled(belief, "close")
    if not is_open and closed_reason == "belief" and belief > config.THETA_OPEN:
        return Settled(belief, "reopen")
    return Settled(belief, None)
