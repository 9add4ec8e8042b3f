"""The records engram passes around: questions, decisions, messages, facts, retrieved lines, usage.

Every record is a frozen dataclass so a decision or a fact read from the store cannot be changed by accident;
the store returns new records after each change. Times are conversation times (the message's `when`), never
wall-clock.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypeVar

QuestionKind = Literal["choice", "yes_no"]
YES, NO = "yes", "no"

_Record = TypeVar("_Record")


def assemble(cls: type[_Record], /, **fields: Any) -> _Record:
    """`cls(**fields)` for a frozen record built on a hot path, every field given: its fields set at once. A frozen
    dataclass's __init__ sets them one object.__setattr__ at a time, several times slower, and a read builds 30
    asks and lines, a search up to 30 facts. Only for records with no __post_init__ (none here has one; a test
    checks that and that the result equals `cls(**fields)`)."""
    record = object.__new__(cls)
    record.__dict__.update(fields)
    return record


@dataclass(frozen=True)
class Question:
    """A typed question: a fixed option list, a rubric per option, and the instruction sent with it.

    `revision` is bumped by hand when the meaning changes (e.g. temporal_status v1 -> v2); `version` also carries a
    digest of the wording, so editing a rubric without bumping the revision still yields a new version (and so a
    new cache key on the gateway side).
    """

    id: str
    kind: QuestionKind
    instructions: str
    criteria: Mapping[str, str]  # option -> rubric, in the order the options are offered
    default: str  # the safe answer used when the backend's answer is missing or malformed
    revision: int = 1

    @property
    def options(self) -> tuple[str, ...]:
        if self.kind == "yes_no":
            return (YES, NO)
        return tuple(self.criteria)

    @property
    def version(self) -> str:
        wording = json.dumps([self.id, self.kind, self.instructions, dict(self.criteria)], sort_keys=False)
        digest = hashlib.sha256(wording.encode("utf-8")).hexdigest()[:8]
        return f"v{self.revision}.{digest}"

    def wire_criteria(self) -> dict[str, str]:
        """Jev's dialect: a yes/no question ("noul") has `true`/`false` rubrics instead of named options."""
        if self.kind == "yes_no":
            return {"true": self.criteria[YES], "false": self.criteria[NO]}
        return dict(self.criteria)


@dataclass(frozen=True)
class Ask:
    """One question bound to one slot of one request: the key is unique within the request."""

    key: str
    question: Question
    refs: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None  # id of the stored fact this ask is about, if any

    def payload(self) -> dict[str, Any]:
        """The Jev wire payload: refs ride inside `instructions` as an object when present."""
        instructions: str | dict[str, Any]
        if self.refs:
            instructions = {**self.refs, "question": self.question.instructions}
        else:
            instructions = self.question.instructions
        wire_type = "noul" if self.question.kind == "yes_no" else "choice"
        return {"type": wire_type, "instructions": instructions, "criteria": self.question.wire_criteria()}


@dataclass(frozen=True)
class Decision:
    """A backend's answer to one ask: the full distribution P_D(o | s, Q), its argmax d and confidence pi."""

    question: str
    options: tuple[str, ...]
    probs: Mapping[str, float]
    chosen: str  # d = argmax_o P_D(o | s, Q)
    confidence: float  # pi = max_o P_D(o | s, Q)
    backend: str
    model: str
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    target: str | None = None
    fallback: bool = False  # True: a degraded answer holding the question's safe default
    error: str | None = None
    text: str | None = None  # the merged text an LLM proposed with a "rewrite" (mem0 UPDATE) answer
    # How the distribution was read, for a backend that reads it off a model's tokens (the logprob decider: the
    # endpoint, every top token with its log-probability and the option it named). None for every other backend,
    # and then absent from `to_json`, so the stored records of those backends stay as they were.
    scored: Mapping[str, Any] | None = None

    def p(self, option: str) -> float:
        return float(self.probs.get(option, 0.0))

    @classmethod
    def from_probs(
        cls,
        question: Question,
        probs: Mapping[str, float],
        *,
        backend: str,
        model: str,
        target: str | None = None,
        latency_ms: float = 0.0,
        cost_usd: float = 0.0,
        chosen: str | None = None,
        error: str | None = None,
    ) -> Decision:
        """Build a decision from a distribution; d and pi follow the article's §2 unless the backend named d."""
        options = question.options  # built once: the property makes a new tuple on every read
        clean = {o: float(probs.get(o, 0.0)) for o in options}
        # d = argmax_o P_D(o | s, Q); ties go to the earlier option so the choice is deterministic (max keeps the
        # first of equal values).
        argmax = max(options, key=clean.__getitem__)
        # pi = max_o P_D(o | s, Q)
        confidence = clean[argmax]
        return cls(
            question=question.id,
            options=options,
            probs=clean,
            chosen=chosen if chosen is not None else argmax,
            confidence=confidence,
            backend=backend,
            model=model,
            latency_ms=latency_ms,
            cost_usd=cost_usd,
            target=target,
            error=error,
        )

    @classmethod
    def degraded(
        cls,
        question: Question,
        *,
        backend: str,
        model: str,
        target: str | None,
        error: str,
        latency_ms: float = 0.0,
        cost_usd: float = 0.0,
    ) -> Decision:
        """The safe default for a question whose answer was missing or malformed; it carries no probabilities."""
        return cls(
            question=question.id,
            options=question.options,
            probs={},
            chosen=question.default,
            confidence=0.0,
            backend=backend,
            model=model,
            latency_ms=latency_ms,
            cost_usd=cost_usd,
            target=target,
            fallback=True,
            error=error,
        )

    def retarget(self, target: str | None) -> Decision:
        return replace(self, target=target)

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "question": self.question,
            "options": list(self.options),
            "probs": dict(self.probs),
            "chosen": self.chosen,
            "confidence": self.confidence,
            "backend": self.backend,
            "model": self.model,
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "target": self.target,
            "fallback": self.fallback,
            "error": self.error,
            "text": self.text,
        }
        if self.scored is not None:
            record["scored"] = self.scored
        return record

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decision:
        return cls(
            question=data["question"],
            options=tuple(data["options"]),
            probs=dict(data["probs"]),
            chosen=data["chosen"],
            confidence=float(data["confidence"]),
            backend=data["backend"],
            model=data["model"],
            latency_ms=float(data.get("latency_ms", 0.0)),
            cost_usd=float(data.get("cost_usd", 0.0)),
            target=data.get("target"),
            fallback=bool(data.get("fallback", False)),
            error=data.get("error"),
            text=data.get("text"),
            scored=data.get("scored"),
        )


@dataclass(frozen=True)
class Message:
    """One conversation turn. `when` is conversation time; validity is judged against it."""

    id: str
    text: str
    speaker: str
    when: datetime


@dataclass(frozen=True)
class ExtractedFact:
    """A draft fact from extraction, before any decision. mem0-style drafts have object "unspecified"."""

    text: str
    subject: str
    object: str = "unspecified"
    predicate_hint: str = "related_to"
    kind_hint: str = "bio"
    durability_hint: str = "long_term"
    valid_from: datetime | None = None  # a date the message states, if the extractor resolved one
    source_text: str | None = None  # verbatim quote; the whole message when the extractor gives none


@dataclass(frozen=True)
class ExtractionContext:
    """What extraction sees besides the message: the last messages, the closest stored facts, a pinned date."""

    previous: Sequence[Message]  # the last `config.EXTRACT_PREVIOUS_MESSAGES`, oldest first
    similar_facts: Sequence[str]  # texts of the `config.EXTRACT_SIMILAR_FACTS` most similar stored facts
    current_date: str  # pinned "YYYY-MM-DD" so prompts (and their cache keys) do not change daily


@dataclass(frozen=True)
class Usage:
    """The cost and recorded latency of one model call (or one decision request), by role."""

    role: str  # extract | decide | escalate | answer | judge | count_tokens
    backend: str
    model: str
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False


@dataclass(frozen=True)
class Completion:
    """One chat-model reply as the gateway reports it (recorded latency and nominal cost on replay)."""

    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False

    def usage(self, role: str, backend: str) -> Usage:
        return Usage(
            role=role,
            backend=backend,
            model=self.model,
            cost_usd=self.cost_usd,
            latency_ms=self.latency_ms,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached=self.cached,
        )


@dataclass(frozen=True)
class Extraction:
    """An extractor's output for one message, with the usage of the calls it made (none for offline rules)."""

    facts: Sequence[ExtractedFact]
    usage: Sequence[Usage] = ()


@dataclass(frozen=True)
class Fact:
    """A stored fact: an edge subject -[predicate]-> object with its provenance, validity window and belief."""

    id: str
    text: str
    subject: str
    predicate: str
    object: str
    kind: str
    durability: str
    sensitivity: str
    temporal_status: str
    valid_from: datetime
    valid_until: datetime | None
    belief: float
    tentative: bool
    confidence: float
    closed_reason: str | None
    closed_by: str | None
    source_message_id: str
    source_text: str | None
    said_at: datetime  # when the source message was said (conversation time)
    refines: str | None = None
    disputed: bool = False
    against_count: int = 0
    seq: int = 0  # insertion order; deterministic, unlike wall-clock creation times

    @property
    def is_open(self) -> bool:
        return self.valid_until is None

    def valid_at(self, when: datetime) -> bool:
        """Validity against conversation time: [valid_from, valid_until)."""
        return self.valid_until is None or when < self.valid_until


LineSource = Literal["rerank", "cosine", "relation", "history"]


@dataclass(frozen=True)
class Line:
    """One retrieved fact, rendered; `score` is the reranker's rho*b, or cosine when reranking is off."""

    text: str
    fact_id: str
    source: LineSource
    score: float


@dataclass(frozen=True)
class FactOutcome:
    """What the write path did with one extracted fact."""

    draft: str
    fact_id: str | None
    action: str  # inserted | same_as | refined | updated | contradicted | negated | disputed | rewritten | dropped
    relation: str
    confidence: float
    target: str | None
    escalated: bool = False
    tentative: bool = False


@dataclass(frozen=True)
class WriteReport:
    """Everything one `Engram.add` did, with usage split by role and critical-path latencies from recorded figures."""

    message_id: str
    facts_extracted: int
    facts_stored: int
    outcomes: Sequence[FactOutcome]
    closes: Sequence[str]  # ids of facts closed by this message (belief or fulfilled)
    reopens: Sequence[str]
    escalations: int
    extract_usage: Sequence[Usage]
    decision_usage: Sequence[Usage]
    extract_ms: float
    decide_ms: float

    @property
    def actions(self) -> list[str]:
        return [o.action for o in self.outcomes]

    @property
    def extract_cost_usd(self) -> float:
        return math.fsum(u.cost_usd for u in self.extract_usage)

    @property
    def decision_cost_usd(self) -> float:
        return math.fsum(u.cost_usd for u in self.decision_usage)
