"""Turning a backend's raw per-question answer (Jev's wire dialect) into a Decision, or a degraded one.

Shared by every backend that speaks the dialect (the Jev client, the scripted test backend), so that one malformed
answer degrades only its own question and the rest of the request is used.

Wire answers:
  yes/no ("noul"): {"noul": P(yes)}                       -> probs {yes: p, no: 1 - p}, chosen yes iff p >= 0.5
  choice:          {"probabilities": {opt: p}, "choice": opt, "confidence": c}
A choice answer is valid iff its choice is an option, its probability keys are exactly the options, every number
is finite in [0, 1], the probabilities sum to 1 within 0.02, and the choice is within rounding (0.0101) of the max.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engram._exceptions import MalformedAnswer
from engram._types import YES, Ask, Decision, Question

SUM_TOLERANCE = 0.02
ROUNDING_TOLERANCE = 0.0101  # Jev rounds to two decimals after picking its choice


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedAnswer(f"{where}: expected a finite number in [0, 1], found {value!r}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise MalformedAnswer(f"{where}: expected a finite number in [0, 1], found {value!r}")
    return number


def validate_answer(question: Question, answer: Any, *, where: str = "answer") -> tuple[dict[str, float], str]:
    """(probabilities, chosen option) of one raw wire answer, or `MalformedAnswer` naming the rule it breaks.
    `where` prefixes the message (the ask key, say)."""
    if not isinstance(answer, Mapping):
        raise MalformedAnswer(f"{where}: expected an answer object, found {answer!r}")
    if question.kind == "yes_no":
        p_yes = _probability(answer.get("noul"), f"{where}.noul")
        return {YES: p_yes, "no": 1.0 - p_yes}, (YES if p_yes >= 0.5 else "no")
    options = question.options
    raw = answer.get("probabilities")
    if not isinstance(raw, Mapping) or set(raw) != set(options):
        found = sorted(raw) if isinstance(raw, Mapping) else raw
        raise MalformedAnswer(
            f"{where}.probabilities: expected probabilities for exactly {list(options)}, found {found!r}"
        )
    probs = {o: _probability(raw[o], f"{where}.probabilities.{o}") for o in options}
    total = math.fsum(probs.values())
    if abs(total - 1.0) >= SUM_TOLERANCE:
        raise MalformedAnswer(f"{where}.probabilities: expected a sum of 1, found {total:.4f}")
    choice = answer.get("choice")
    if choice not in probs:
        raise MalformedAnswer(f"{where}.choice: {choice!r} is not one of {list(options)}")
    if probs[choice] < max(probs.values()) - ROUNDING_TOLERANCE:
        raise MalformedAnswer(f"{where}.choice: {choice!r} at {probs[choice]} is not the most probable option")
    return probs, str(choice)


def decision_from_answer(
    ask: Ask, answer: Any, *, backend: str, model: str, latency_ms: float = 0.0, cost_usd: float = 0.0
) -> Decision:
    """A Decision for one ask; a missing or malformed answer becomes the question's safe default (fallback)."""
    try:
        probs, chosen = validate_answer(ask.question, answer, where=ask.key)
    except MalformedAnswer as exc:
        return Decision.degraded(
            ask.question,
            backend=backend,
            model=model,
            target=ask.target,
            error=str(exc),
            latency_ms=latency_ms,
            cost_usd=cost_usd,
        )
    return Decision.from_probs(
        ask.question,
        probs,
        backend=backend,
        model=model,
        target=ask.target,
        latency_ms=latency_ms,
        cost_usd=cost_usd,
        chosen=chosen,
    )
