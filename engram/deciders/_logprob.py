"""Typed decisions read from a language model's log-probabilities: the pure half of the `logprob` backend.

Any model served behind an OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp's server, ollama) can answer
engram's typed questions this way: the question goes out as one prompt that lists every option under a one-letter
label with its rubric, the model is asked for one token, and the probability of each option is the probability the
model gave its label at that position, renormalised over the options. A sampled answer would give one option at
p = 1; the log-probabilities give the whole distribution P_D(o | s, Q) that engram's gates read.

This module builds the prompt and turns the top tokens of the reply's first position into a `Decision`; sending the
request and reading the tokens out of the wire format (through the harness's gateway, with its cache) is the
caller's.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engram._exceptions import InvalidInput
from engram._types import Ask, Decision, Question

LOGPROB_BACKEND = "logprob"
# One capital letter per option: a single token in every common tokenizer, unlike option names ("refinement") or
# numbers past 9, so the first generated position holds the whole choice.
LABELS: tuple[str, ...] = tuple(string.ascii_uppercase)
# Characters a model may put around the letter it answers ("A.", "(B)", "**C**"); the letter is what counts.
_LABEL_DECORATION = " \t\r\n.:)(]*[-\u2581\u0120"


@dataclass(frozen=True)
class ScoredOptions:
    """The options' distribution read from one position's top tokens, and the evidence it was read from."""

    probs: Mapping[str, float]  # option -> probability renormalised over the options; empty when none was seen
    tokens: tuple[tuple[str, float, str | None], ...]  # every top token read: (token, logprob, option it named)
    option_mass: float  # the share of the model's probability that fell on an option label, before renormalising

    def evidence(self) -> dict[str, Any]:
        """What a decision records about how it was scored (JSON values only)."""
        return {
            "tokens": [[token, logprob, option] for token, logprob, option in self.tokens],
            "option_mass": self.option_mass,
        }


def option_labels(question: Question) -> dict[str, str]:
    """option -> its letter, in the order the options are offered."""
    options = question.options
    if len(options) > len(LABELS):
        raise InvalidInput(
            f"question {question.id}: expected at most {len(LABELS)} options for one-letter labels, found {len(options)}"
        )
    return dict(zip(options, LABELS))


def logprob_prompt(state: Mapping[str, Any], ask: Ask) -> str:
    """The one prompt that asks `ask` about `state`: the inputs, the question, and each option with its rubric."""
    question = ask.question
    labels = option_labels(question)
    inputs = {**state, **ask.refs}
    lines = ["Read the information below, then answer the question by choosing exactly one option.", ""]
    lines += [f"{name}: {json.dumps(value, ensure_ascii=False)}" for name, value in inputs.items()]
    lines += ["", f"Question: {question.instructions}", "", "Options:"]
    lines += [f"{labels[option]}. {option}: {rubric}" for option, rubric in _rubrics(question).items()]
    first, last = LABELS[0], labels[question.options[-1]]
    lines += ["", f"Reply with the letter of the best option ({first}-{last}) and nothing else."]
    return "\n".join(lines)


def _rubrics(question: Question) -> dict[str, str]:
    return {option: question.criteria[option] for option in question.options}


def label_of(token: str) -> str | None:
    """The option letter a token stands for ("A", " A", "A.", "(A"), or None. Case matters: a lower-case "a" is far
    more often the article than an answer."""
    core = token.strip(_LABEL_DECORATION)
    return core if core in LABELS else None


def score_options(question: Question, tokens: Sequence[tuple[str, float]]) -> ScoredOptions:
    """Each option's probability: the summed probability of the tokens naming its letter, renormalised over the
    options. A label the endpoint did not list among its top tokens gets no mass."""
    option_at = {label: option for option, label in option_labels(question).items()}
    mass = dict.fromkeys(question.options, 0.0)
    read: list[tuple[str, float, str | None]] = []
    for token, logprob in tokens:
        label = label_of(token)
        option = option_at.get(label) if label is not None else None
        if option is not None and math.isfinite(logprob):
            mass[option] += math.exp(logprob)
        read.append((token, logprob, option))
    total = sum(mass.values())
    probs = {option: m / total for option, m in mass.items()} if total > 0 else {}
    return ScoredOptions(probs=probs, tokens=tuple(read), option_mass=total)


def logprob_decision(
    ask: Ask,
    tokens: Sequence[tuple[str, float]],
    *,
    model: str,
    latency_ms: float = 0.0,
    cost_usd: float = 0.0,
) -> Decision:
    """The decision for `ask` from one reply's top tokens. No option among them: the question's safe default,
    marked as a fallback, still recording what was read."""
    scored = score_options(ask.question, tokens)
    common: dict[str, Any] = {
        "backend": LOGPROB_BACKEND,
        "model": model,
        "target": ask.target,
        "latency_ms": latency_ms,
        "cost_usd": cost_usd,
    }
    if not scored.probs:
        labels = option_labels(ask.question)
        error = (
            f"logprob: no option letter ({', '.join(labels.values())}) among the {len(tokens)} top tokens "
            f"the model returned"
        )
        decision = Decision.degraded(ask.question, error=error, **common)
    else:
        decision = Decision.from_probs(ask.question, scored.probs, **common)
    return replace(decision, scored=scored.evidence())
