"""A scripted decision backend for tests: each answer is written down by the test, so every gate can be tested in
isolation. Answers go through the same wire parsing as a real backend (`engram._answers`), so a test can also
script a malformed answer and watch only that question degrade.

    decider = ScriptedDecider()
    decider.on("relation_to_candidate", {"update": 0.92, "new": 0.08}, new="Berlin", existing="Paris")
    decider.on("temporal_status", {"planned": 0.9, "current": 0.1}, new="thinking of")
    decider.on("relevant_to_query", 0.9, memory="Paris")          # yes/no: P(yes)
    decider.on("edge_type", Raw({"probabilities": {"lives_in": 2}}))  # malformed on purpose

Rules are matched newest first; a rule matches when every given substring occurs (case-insensitively) in the
corresponding text: `new` in the state's new fact, `existing` in the ask's existing fact, `memory` in the ask's
memory, `query` in the state's query. Unmatched asks get `defaults` (peaked, unambiguous answers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engram._answers import decision_from_answer
from engram._exceptions import DecisionError, InvalidInput
from engram._types import Ask, Decision

DEFAULT_ANSWERS: Mapping[str, Any] = {
    "worth_remembering": 0.95,
    "fact_kind": {"bio": 0.9},
    "temporal_status": {"current": 0.95},
    "edge_type": {"related_to": 0.9},
    "durability": {"long_term": 0.9},
    "sensitivity": {"none": 0.95},
    "relation_to_candidate": {"new": 0.95},
    "relation_to_candidate_recheck": {"new": 0.95},
    "plan_fulfilled": 0.05,
    "relevant_to_query": 0.1,
    "query_relation": {"none": 0.95},
    "same_fact": 0.05,
}


@dataclass(frozen=True)
class Raw:
    """A wire answer passed through untouched (to script malformed answers)."""

    answer: Any


@dataclass
class _Rule:
    question: str
    answer: Any
    match: dict[str, str]


def _text_of(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("text", ""))
    return "" if value is None else str(value)


@dataclass
class ScriptedDecider:
    name: str = "scripted"
    model: str = "scripted-v1"
    latency_ms: float = 0.0
    cost_per_ask_usd: float = 0.0
    rules: list[_Rule] = field(default_factory=list)
    requests: list[tuple[dict, list[Ask]]] = field(default_factory=list)  # every request, for assertions
    fail_next: int = 0  # make the next n requests fail as a whole

    def on(self, question: str, answer: Any, **match: str) -> ScriptedDecider:
        unknown = set(match) - {"new", "existing", "memory", "query"}
        if unknown:
            raise InvalidInput(f"ScriptedDecider.on: unknown match keys {sorted(unknown)}")
        self.rules.append(_Rule(question, answer, {k: v.lower() for k, v in match.items()}))
        return self

    def ask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        self.requests.append((state, list(asks)))
        if self.fail_next:
            self.fail_next -= 1
            raise DecisionError("scripted failure of the whole request")
        return {
            ask.key: decision_from_answer(
                ask,
                self._wire(ask, self._answer(state, ask)),
                backend=self.name,
                model=self.model,
                latency_ms=self.latency_ms,
                cost_usd=self.cost_per_ask_usd,
            )
            for ask in asks
        }

    def asked(self, question: str) -> list[Ask]:
        """Every ask of a question id across all requests so far."""
        return [a for _, asks in self.requests for a in asks if a.question.id == question]

    def _answer(self, state: dict, ask: Ask) -> Any:
        texts = {
            "new": _text_of(state.get("new_fact")),
            "existing": _text_of(ask.refs.get("existing_fact")),
            "memory": _text_of(ask.refs.get("memory")),
            "query": _text_of(state.get("query")),
        }
        for rule in reversed(self.rules):
            if rule.question == ask.question.id and all(v in texts[k].lower() for k, v in rule.match.items()):
                return rule.answer
        return DEFAULT_ANSWERS[ask.question.id]

    @staticmethod
    def _wire(ask: Ask, answer: Any) -> Any:
        """Scripted shorthand -> Jev's wire dialect: a float is P(yes); a dict is a partial distribution whose
        missing options share what is left equally."""
        if isinstance(answer, Raw):
            return answer.answer
        if ask.question.kind == "yes_no":
            return {"noul": float(answer)}
        options = ask.question.options
        given = {o: float(p) for o, p in answer.items() if o in options}
        rest = [o for o in options if o not in given]
        left = max(0.0, 1.0 - sum(given.values()))
        probs = {o: given.get(o, left / len(rest) if rest else 0.0) for o in options}
        choice = max(options, key=lambda o: (probs[o], -options.index(o)))
        return {"probabilities": probs, "choice": choice, "confidence": probs[choice]}
