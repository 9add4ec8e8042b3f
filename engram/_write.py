"""The write path, per message, as the article's §3.2.

    F_t^new = X(m_t, m_{t-10..t-1}, Top_10 s_cos(m_t, .))            extraction
    C(f)    = Top_10 s_cos(f, .) ∪ Top_10 G(f)                         candidates
    one decision request per fact: six fact questions + Q_rel per candidate
    u*, r*, pi*                                                         the most likely superseded/supported fact
    act (pi* >= theta_act) | escalate (r* in S, pi* < theta_esc) | tentative
    e(f, u) under g_T, g_C, g_A; logit b_u += e; logit b_f -= sum_u min(e, 0); close / reopen with hysteresis

Requests per fact, in order (each one round trip, run one after another so latencies add):
  1. the six fact questions, Q_rel for each cosine candidate, plan_fulfilled for each plan among them;
  2. only when G(f) adds candidates (it needs rel(f), answered by request 1): Q_rel (+ plan_fulfilled) for them;
  3. only when some evidence against a fact needs g_A: the second phrasing for those candidates.
Facts of one message are written one after another, and each reads the beliefs the previous one left, so no
update is lost (the original wrote them concurrently and could lose them; `Flags.sequential_belief=False`
replays that).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from engram import _belief as belief
from engram import config
from engram._exceptions import DecisionError, LLMError
from engram._flags import Flags
from engram._protocols import LLM, DecisionBackend, Embedder, Extractor
from engram._store import Store, named_entities, normalize_entity
from engram._types import (
    Ask,
    Decision,
    ExtractedFact,
    ExtractionContext,
    Fact,
    FactOutcome,
    Message,
    Usage,
    WriteReport,
)
from engram.questions import (
    EDGE_TYPES,
    FALLBACK_EDGE,
    PLAN_FULFILLED,
    PLAN_RELATIONS,
    SUPERSEDING,
    cardinality,
    fact_questions,
    plan_key,
    recheck_key,
    relation_key,
    relation_questions,
)

ESCALATION_BACKEND = "llm_escalation"
LLM_BACKENDS = frozenset({ESCALATION_BACKEND, "llm_decider"})  # certain verdicts, never rechecked or escalated
ACTION_OF_RELATION = {
    "new": "inserted",
    "duplicate": "inserted",
    "refinement": "refined",
    "update": "updated",
    "contradiction": "contradicted",
    "negates": "negated",
}


# ---- escalation -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Escalation:
    """An LLM's verdict on (new fact, u*): contradiction | rewrite | new | duplicate, with the merged text for a
    rewrite and the usage of the call."""

    relation: str
    text: str | None
    usage: Usage


class Escalator(Protocol):
    model: str

    def judge(self, existing: str, new: str) -> Escalation: ...


@dataclass
class Mem0UpdateEscalator:
    """Escalation with mem0's update-memory prompt on an LLM (the article's L(f, u*)); the prompt call and its
    event mapping live in `engram.deciders._llm`, shared with the LLM-decider arm."""

    llm: LLM
    model: str = config.LLM_MODEL

    def judge(self, existing: str, new: str) -> Escalation:
        from engram.deciders._llm import mem0_update_decision  # the stand-ins module; imported only when used

        outcome = mem0_update_decision(self.llm, self.model, [existing], new)
        completion = getattr(outcome, "completion", None)
        usage = (
            completion.usage("escalate", "llm")
            if completion is not None
            else Usage(role="escalate", backend="llm", model=self.model)
        )
        return Escalation(relation=outcome.relation, text=getattr(outcome, "text", None), usage=usage)


class RelationDecider(Protocol):
    """The LLM-decider arm's shape (`engram.deciders._llm.LLMRelationDecider`): one call per extracted fact that
    judges the new fact against all its candidates at once, instead of one typed relation question per candidate.
    Its verdict has `.decision` (a certain Decision about at most one candidate, `.target`) and `.text` (the merged
    text of a rewrite); `.verdict.completion`, when present, carries the call's usage."""

    name: str
    model: str

    def decide(self, new: str, candidates: Sequence[tuple[str, str]]) -> Any: ...


# ---- per-message bookkeeping ----------------------------------------------------------------------------------


@dataclass
class _Run:
    message: Message
    fact_ids: list[str] = field(default_factory=list)
    outcomes: list[FactOutcome] = field(default_factory=list)
    closes: list[str] = field(default_factory=list)
    reopens: list[str] = field(default_factory=list)
    escalations: int = 0
    decision_usage: list[Usage] = field(default_factory=list)
    belief_snapshot: dict[str, float] = field(default_factory=dict)


@dataclass
class _Candidates:
    """The candidate facts of one new fact and the answers about them, by candidate id."""

    ids: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)  # candidate id -> i of relation_to_candidate__i
    relation: dict[str, Decision] = field(default_factory=dict)
    plan: dict[str, Decision] = field(default_factory=dict)
    llm_new: Decision | None = None  # the LLM decider's "new" about no candidate in particular

    def add(self, fact_id: str) -> int:
        self.index[fact_id] = len(self.ids)
        self.ids.append(fact_id)
        return self.index[fact_id]


def union_text(kept: str, other: str) -> str:
    """The E1/E2 text merge: keep whichever word set contains the other, else join both."""
    words = lambda s: set(re.findall(r"[a-z0-9']+", s.lower()))  # noqa: E731
    if words(other) <= words(kept):
        return kept
    if words(kept) <= words(other):
        return other
    return f"{kept}; {other}"


class WritePath:
    def __init__(
        self,
        store: Store,
        extractor: Extractor,
        decider: DecisionBackend,
        embedder: Embedder,
        escalator: Escalator | None,
        flags: Flags,
        relation_decider: RelationDecider | None = None,
    ) -> None:
        self.store = store
        self.relation_decider = relation_decider
        self.extractor = extractor
        self.decider = decider
        self.embedder = embedder
        self.escalator = escalator
        self.flags = flags
        self.fact_questions = fact_questions(flags.temporal_version)
        self.relation_question, self.recheck_question = relation_questions(flags.relation_version)

    # ---- message ---------------------------------------------------------------------------------------------

    def ingest(self, message: Message) -> WriteReport:
        run = _Run(message)
        drafts, extract_usage = self._extract(message)
        self.store.add_message(message)
        run.belief_snapshot = {}
        vectors = self.embedder.embed([d.text for d in drafts]) if drafts else np.zeros((0, self.embedder.dim))
        for index, (draft, vector) in enumerate(zip(drafts, vectors)):
            self._write_fact(run, draft, index, vector)
        return WriteReport(
            message_id=message.id,
            facts_extracted=len(drafts),
            facts_stored=len(run.fact_ids),
            outcomes=run.outcomes,
            closes=run.closes,
            reopens=run.reopens,
            escalations=run.escalations,
            extract_usage=extract_usage,
            decision_usage=run.decision_usage,
            # Recorded latencies on the critical path: extraction, then each request of each fact in turn.
            extract_ms=math.fsum(u.latency_ms for u in extract_usage),
            decide_ms=math.fsum(u.latency_ms for u in run.decision_usage),
        )

    def _extract(self, message: Message) -> tuple[list[ExtractedFact], list[Usage]]:
        """F_t^new = X(m_t, m_{t-10}, ..., m_{t-1}, Top_10 s_cos(m_t, .))"""
        similar: list[str] = []
        if len(self.store):
            scores = self.store.scores(self.embedder.embed([message.text])[0])
            top = self.store.top(scores, config.EXTRACT_SIMILAR_FACTS, candidates_only=True)
            similar = [self.store.get(i).text for i, _ in top]
        context = ExtractionContext(
            previous=self.store.recent_messages(config.EXTRACT_PREVIOUS_MESSAGES),
            similar_facts=similar,
            current_date=config.PINNED_CURRENT_DATE,
        )
        extraction = self.extractor.extract(message, context)
        drafts, seen = [], set()
        for draft in extraction.facts:
            key = draft.text.strip().lower()
            if key and key not in seen:  # empty and repeated texts carry no new fact
                seen.add(key)
                drafts.append(draft)
        return drafts, list(extraction.usage)

    # ---- requests --------------------------------------------------------------------------------------------

    def _request(self, run: _Run, state: dict[str, Any], asks: Sequence[Ask]) -> dict[str, Decision] | None:
        """One round trip; None when the whole request failed. A missing answer becomes a degraded decision."""
        if not asks:
            return {}
        try:
            answers = self.decider.ask(state, asks)
        except DecisionError as exc:
            run.decision_usage.append(Usage(role="decide", backend=self.decider.name, model=self.decider.model))
            self.store.log("request_failed", None, run.message.id, error=str(exc), asks=len(asks))
            return None
        decisions: dict[str, Decision] = {}
        for ask in asks:
            decision = answers.get(ask.key)
            if decision is None:
                decision = Decision.degraded(
                    ask.question,
                    backend=self.decider.name,
                    model=self.decider.model,
                    target=ask.target,
                    error=f"{ask.key}: no answer in the response",
                )
            decisions[ask.key] = decision
        run.decision_usage.append(
            Usage(
                role="decide",
                backend=self.decider.name,
                model=self.decider.model,
                cost_usd=math.fsum(d.cost_usd for d in decisions.values()),
                latency_ms=max(d.latency_ms for d in decisions.values()),  # one round trip: every answer shares it
            )
        )
        return decisions

    def _relation_asks(self, cands: _Candidates, new_ids: Sequence[str]) -> list[Ask]:
        asks = []
        for fact_id in new_ids:
            i = cands.add(fact_id)
            stored = self.store.get(fact_id)
            if self.relation_decider is None:  # the LLM decider judges relations in its own call
                asks.append(Ask(relation_key(i), self.relation_question, {"existing_fact": self._ref(stored)}, fact_id))
            if self.flags.plan_question and stored.is_open and self._is_plan(stored):
                asks.append(Ask(plan_key(i), PLAN_FULFILLED, {"existing_fact": self._ref(stored)}, fact_id))
        return asks

    @staticmethod
    def _ref(fact: Fact) -> dict[str, Any]:
        return {
            "text": fact.text,
            "subject": fact.subject,
            "object": fact.object,
            "valid_from": fact.valid_from.date().isoformat(),
        }

    @staticmethod
    def _is_plan(fact: Fact) -> bool:
        return fact.predicate in PLAN_RELATIONS or fact.temporal_status == "planned"

    def _collect(self, run: _Run, cands: _Candidates, decisions: dict[str, Decision]) -> None:
        for fact_id in cands.ids:
            i = cands.index[fact_id]
            if relation_key(i) in decisions:
                cands.relation[fact_id] = decisions[relation_key(i)]
            if plan_key(i) in decisions:
                cands.plan[fact_id] = decisions[plan_key(i)]
                self.store.log("plan_ask", fact_id, run.message.id, p_yes=decisions[plan_key(i)].p("yes"))

    # ---- candidates ------------------------------------------------------------------------------------------

    def _graph_candidates(
        self, subject: str, relation: str, text: str, scores: np.ndarray, exclude: set[str]
    ) -> list[str]:
        """G(f) = {u : subj(u) = subj(f) and rel(u) = rel(f)} ∪ {u : ent(u) ∩ ent(f) ≠ ∅}, rare entities only."""
        hits: set[str] = set()
        if relation != FALLBACK_EDGE:  # "related_to" says nothing about which value replaces which
            hits.update(i for i in self.store.siblings(subject, relation) if self.store.is_candidate(i))
        pool = max(0, self.store.candidate_count() - len(exclude))
        common_bar = max(config.RARE_ENTITY_MIN_COMMON, config.RARE_ENTITY_COMMON_SHARE * pool)
        for entity in named_entities(text) - {subject}:
            holders = self.store.facts_with_entity(entity)
            if len(holders) < common_bar:
                hits.update(i for i in holders if self.store.is_candidate(i))
        hits -= exclude
        return self.store.top_among(scores, hits, config.GRAPH_CANDIDATE_K)  # Top_10 G(f), by cosine

    # ---- one fact --------------------------------------------------------------------------------------------

    def _write_fact(self, run: _Run, draft: ExtractedFact, index: int, vector: np.ndarray) -> None:
        message = run.message
        fact_id = f"{message.id}#{index}"
        subject, obj = normalize_entity(draft.subject), normalize_entity(draft.object)
        state = {"new_fact": {"text": draft.text, "subject": subject, "object": obj}, "source_message": message.text}
        scores = self.store.scores(vector)
        exclude = set(run.fact_ids)  # facts of one message are not each other's candidates (as the original)
        cands = _Candidates()
        cosine = [i for i, _ in self.store.top(scores, config.CANDIDATE_K, candidates_only=True, exclude=exclude)]
        fact_asks = [Ask(q.id, q) for q in self.fact_questions]
        first = self._request(run, state, fact_asks + self._relation_asks(cands, cosine))
        if first is None:
            self._write_degraded(run, draft, fact_id, subject, obj, vector, fact_asks)
            return
        self._collect(run, cands, first)
        fact_decisions = [first[a.key] for a in fact_asks]
        edge = first["edge_type"]
        relation_name = (
            edge.chosen
            if not edge.fallback
            else (draft.predicate_hint if draft.predicate_hint in EDGE_TYPES else FALLBACK_EDGE)
        )

        if self.flags.graph_candidates:
            graph = self._graph_candidates(subject, relation_name, draft.text, scores, exclude | set(cands.ids))
            if graph:
                second = self._request(run, state, self._relation_asks(cands, graph))
                if second is not None:  # a failed extra request only loses the extra candidates
                    self._collect(run, cands, second)

        escalated, escalation_failed = False, False
        if self.relation_decider is not None:
            escalation_failed = not self._llm_relation(run, cands, draft.text)
        target, r_star, pi_star = self._pick(cands)
        # escalate, r* <- L(f, u*), if r* in S and pi* < theta_esc
        if (
            target is not None
            and r_star in SUPERSEDING
            and pi_star < config.THETA_ESC
            and self.flags.escalate
            and self.escalator is not None
        ):
            escalated, escalation_failed = self._escalate(run, cands, target, draft.text)
            if escalated:
                r_star, pi_star = cands.relation[target].chosen, 1.0
        acted = escalated or pi_star >= config.THETA_ACT  # act if pi* >= theta_act

        worth = first["worth_remembering"]
        p_worth = 1.0 if worth.fallback else worth.p("yes")
        tentative = (not acted) or escalation_failed or worth.fallback or p_worth < config.THETA_ACT

        if r_star == "rewrite" and target is not None:
            self._rewrite(run, cands, target, draft, fact_decisions)
            return
        if (
            r_star == "duplicate"
            and acted
            and not tentative
            and target is not None
            and self.flags.merge_policy == "union"
        ):
            self._merge(run, cands, target, draft, fact_decisions, pi_star)
            return

        temporal = first["temporal_status"]
        kind, durability, sensitivity = (first[k] for k in ("fact_kind", "durability", "sensitivity"))
        valid_from = draft.valid_from or message.when
        fact = Fact(
            id=fact_id,
            text=draft.text,
            subject=subject,
            predicate=relation_name,
            object=obj,
            kind=kind.chosen if not kind.fallback else draft.kind_hint,
            durability=durability.chosen if not durability.fallback else draft.durability_hint,
            sensitivity=sensitivity.chosen,
            temporal_status=temporal.chosen,
            valid_from=valid_from,
            valid_until=None,
            belief=(
                belief.initial_belief(pi_star, tentative) if self.flags.policy == "belief" else config.BELIEF_MAX
            ),  # the E2 policy has no belief; ranking treats every fact as held
            tentative=tentative,
            confidence=round(min(p_worth, pi_star), 4),
            closed_reason=None,
            closed_by=None,
            source_message_id=message.id,
            source_text=draft.source_text or message.text,
            said_at=message.when,
            refines=target if r_star == "refinement" else None,
            seq=self.store.next_seq(),
        )
        if self.flags.policy == "direct":
            self._write_direct(run, fact, vector, cands, target, r_star, acted, escalated, temporal, fact_decisions)
        else:
            self._write_belief(
                run, fact, vector, cands, target, r_star, pi_star, acted, temporal, state, fact_decisions
            )
        self._apply_fulfilled(run, fact, cands)

    def _llm_relation(self, run: _Run, cands: _Candidates, new_text: str) -> bool:
        """The LLM-decider arm: one call with every candidate; False when the call failed (fact kept tentative)."""
        assert self.relation_decider is not None
        verdict = self.relation_decider.decide(new_text, [(i, self.store.get(i).text) for i in cands.ids])
        decision: Decision = verdict.decision
        completion = getattr(getattr(verdict, "verdict", None), "completion", None)
        if completion is not None or decision.fallback:
            run.decision_usage.append(
                Usage(
                    role="decide",
                    backend=self.relation_decider.name,
                    model=self.relation_decider.model,
                    cost_usd=decision.cost_usd,
                    latency_ms=decision.latency_ms,
                    input_tokens=getattr(completion, "input_tokens", 0),
                    output_tokens=getattr(completion, "output_tokens", 0),
                    cached=bool(getattr(completion, "cached", False)),
                )
            )
        if decision.fallback:
            self.store.log("llm_decider_failed", None, run.message.id, error=decision.error)
            return False
        if decision.target is not None:
            cands.relation[decision.target] = replace(decision, text=getattr(verdict, "text", None))
        else:
            cands.llm_new = decision
        return True

    def _pick(self, cands: _Candidates) -> tuple[str | None, str, float]:
        """u* = argmax_{u in C(f)} max_{o in R \\ {new}} P_D(o | f, u, Q_rel); r*, pi* = its r(f, u*) and pi.
        Ties go to the earlier candidate (cosine order, then graph order)."""
        best, best_score = None, -1.0
        for fact_id in cands.ids:
            decision = cands.relation.get(fact_id)
            if decision is None or decision.fallback:
                continue
            non_new = max((decision.p(o) for o in decision.options if o != "new"), default=0.0)
            if non_new > best_score:
                best, best_score = fact_id, non_new
        if best is None:
            if not cands.ids:
                return None, "new", 1.0  # nothing stored to compare with: a new fact, certainly
            if cands.llm_new is not None:
                return None, "new", cands.llm_new.confidence
            return None, "new", 0.0  # candidates, but no usable answer about any: keep the fact tentative
        decision = cands.relation[best]
        return best, decision.chosen, decision.confidence

    def _escalate(self, run: _Run, cands: _Candidates, target: str, new_text: str) -> tuple[bool, bool]:
        """Returns (escalated, failed). The LLM's answer replaces the typed answer for u*, at p = 1."""
        assert self.escalator is not None
        run.escalations += 1
        try:
            verdict = self.escalator.judge(self.store.get(target).text, new_text)
        except LLMError as exc:
            self.store.log("escalation_failed", target, run.message.id, error=str(exc))
            cands.relation.pop(target, None)  # both facts stay as they are
            return False, True
        run.decision_usage.append(verdict.usage)
        previous = cands.relation[target]
        cands.relation[target] = Decision(
            question=previous.question,
            options=(*previous.options, "rewrite"),
            probs={verdict.relation: 1.0},
            chosen=verdict.relation,
            confidence=1.0,
            backend=ESCALATION_BACKEND,
            model=self.escalator.model,
            latency_ms=verdict.usage.latency_ms,
            cost_usd=verdict.usage.cost_usd,
            target=target,
            text=verdict.text,
        )
        self.store.log(
            "escalation",
            target,
            run.message.id,
            typed=previous.chosen,
            typed_p=previous.confidence,
            llm=verdict.relation,
        )
        return True, False

    # ---- outcomes that store no new fact ---------------------------------------------------------------------

    def _rewrite(
        self, run: _Run, cands: _Candidates, target: str, draft: ExtractedFact, fact_decisions: list[Decision]
    ) -> None:
        """mem0's UPDATE: the stored fact takes the LLM's merged text; the old text stays in its history."""
        decision = cands.relation[target]
        old = self.store.get(target).text
        new_text = decision.text or union_text(old, draft.text)
        self.store.rewrite(target, new_text, self.embedder.embed([new_text])[0])
        self.store.log("rewrite", target, run.message.id, old_text=old, new_text=new_text)
        self.store.add_decisions(target, run.message.id, [*fact_decisions, decision])
        run.outcomes.append(
            FactOutcome(
                draft.text,
                target,
                "rewritten",
                "rewrite",
                1.0,
                target,
                escalated=decision.backend == ESCALATION_BACKEND,
            )
        )

    def _merge(
        self,
        run: _Run,
        cands: _Candidates,
        target: str,
        draft: ExtractedFact,
        fact_decisions: list[Decision],
        pi_star: float,
    ) -> None:
        """E1/E2 "union" policy: a confident duplicate folds its words into the stored text (old text logged)."""
        old = self.store.get(target).text
        merged = union_text(old, draft.text)
        if merged != old:
            self.store.rewrite(target, merged, self.embedder.embed([merged])[0])
        self.store.log("merge", target, run.message.id, old_text=old, new_text=merged)
        self.store.add_decisions(target, run.message.id, [*fact_decisions, cands.relation[target]])
        run.outcomes.append(FactOutcome(draft.text, target, "merged", "duplicate", pi_star, target))

    def _write_degraded(
        self,
        run: _Run,
        draft: ExtractedFact,
        fact_id: str,
        subject: str,
        obj: str,
        vector: np.ndarray,
        fact_asks: list[Ask],
    ) -> None:
        """The decision request failed: keep the fact, tentative, with the extractor's hints; touch nothing else."""
        message = run.message
        decisions = [
            Decision.degraded(
                a.question,
                backend=self.decider.name,
                model=self.decider.model,
                target=None,
                error="decision request failed",
            )
            for a in fact_asks
        ]
        fact = Fact(
            id=fact_id,
            text=draft.text,
            subject=subject,
            predicate=draft.predicate_hint if draft.predicate_hint in EDGE_TYPES else FALLBACK_EDGE,
            object=obj,
            kind=draft.kind_hint,
            durability=draft.durability_hint,
            sensitivity="none",
            temporal_status="current",
            valid_from=draft.valid_from or message.when,
            valid_until=None,
            belief=config.INITIAL_TENTATIVE_BELIEF,
            tentative=True,
            confidence=0.0,
            closed_reason=None,
            closed_by=None,
            source_message_id=message.id,
            source_text=draft.source_text or message.text,
            said_at=message.when,
            seq=self.store.next_seq(),
        )
        self._insert(run, fact, vector, decisions)
        run.outcomes.append(FactOutcome(draft.text, fact_id, "fallback", "new", 0.0, None, tentative=True))

    def _insert(self, run: _Run, fact: Fact, vector: np.ndarray, decisions: Sequence[Decision]) -> None:
        self.store.add_facts([fact], np.asarray(vector, dtype=np.float32)[None, :])
        self.store.add_decisions(fact.id, run.message.id, decisions)
        self.store.log("insert", fact.id, run.message.id, belief=fact.belief, tentative=fact.tentative)
        run.fact_ids.append(fact.id)

    # ---- the article's policy --------------------------------------------------------------------------------

    def _write_belief(
        self,
        run: _Run,
        fact: Fact,
        vector: np.ndarray,
        cands: _Candidates,
        target: str | None,
        r_star: str,
        pi_star: float,
        acted: bool,
        temporal: Decision,
        state: dict[str, Any],
        fact_decisions: list[Decision],
    ) -> None:
        self._insert(run, fact, vector, [*fact_decisions, *cands.relation.values(), *cands.plan.values()])
        linked = False
        if r_star == "duplicate" and acted and not fact.tentative and target is not None:
            # Duplicates become reversible same_as links, never merged text.
            self.store.link_same_as(target, fact.id, pi_star, run.message.id)
            self.store.log("same_as", fact.id, run.message.id, other=target, p=pi_star)
            linked = True

        evidence = self._evidence(run, fact, cands, temporal, state)
        mirrored = 0.0
        for cand_id, e, pieces, relation in evidence:
            before = (
                run.belief_snapshot.get(cand_id, self.store.get(cand_id).belief)
                if not self.flags.sequential_belief
                else self.store.get(cand_id).belief
            )
            run.belief_snapshot.setdefault(cand_id, self.store.get(cand_id).belief)
            after = belief.shift(before, e)  # logit b_u <- logit b_u + e(f, u)
            self.store.set_belief(cand_id, after, against_pieces=pieces)
            self.store.log(
                "belief", cand_id, run.message.id, before=before, after=after, evidence=e, relation=relation, by=fact.id
            )
            self._settle(run, cand_id, fact)
            mirrored += min(e, 0.0)
        if mirrored:
            # logit b_f <- logit b_f - sum_u min(e(f, u), 0): the new fact gains what the old ones lose.
            before = self.store.get(fact.id).belief
            after = belief.shift(before, -mirrored)
            self.store.set_belief(fact.id, after)
            self.store.log(
                "belief",
                fact.id,
                run.message.id,
                before=before,
                after=after,
                evidence=-mirrored,
                relation="mirror",
                by=fact.id,
            )

        action = "same_as" if linked else ACTION_OF_RELATION.get(r_star, "inserted")
        if r_star == "contradiction" and self.store.get(fact.id).disputed:
            action = "disputed"
        run.outcomes.append(
            FactOutcome(
                fact.text,
                fact.id,
                action,
                r_star,
                pi_star,
                target,
                escalated=target is not None
                and target in cands.relation
                and cands.relation[target].backend == ESCALATION_BACKEND,
                tentative=fact.tentative,
            )
        )

    def _evidence(
        self, run: _Run, fact: Fact, cands: _Candidates, temporal: Decision, state: dict[str, Any]
    ) -> list[tuple[str, float, int, str]]:
        """e(f, u) for every candidate u, as (u, e, pieces against, relation), in candidate order."""
        g_t = belief.temporal_gate(temporal, self.flags)
        support: dict[str, float] = {}
        against: dict[str, tuple[float, str, bool]] = {}  # u -> (pi, relation, needs the second phrasing)
        for cand_id in cands.ids:
            decision = cands.relation.get(cand_id)
            if decision is None or decision.fallback:
                continue
            relation = decision.chosen
            if not (belief.is_support(relation) or belief.is_against(relation)):
                continue  # "new" (and anything else) is no evidence: e = 0
            if not belief.counts_as_evidence(decision, self.flags):
                self.store.log("ignored_weak", cand_id, run.message.id, relation=relation, p=decision.confidence)
                continue
            pi = belief.answer_p(decision)
            if belief.is_support(relation):
                support[cand_id] = belief.support_evidence(pi)  # e = + logit pi
                continue
            stored = self.store.get(cand_id)
            if not g_t:
                self.store.log("blocked_temporal", cand_id, run.message.id, relation=relation, by=fact.id)
                continue
            sibling = stored.subject == fact.subject and stored.predicate == fact.predicate
            if not belief.cardinality_gate(relation, stored.predicate, sibling, self.flags):
                self.store.log("blocked_cardinality", cand_id, run.message.id, relation=relation, by=fact.id)
                if relation == "contradiction":
                    self.store.mark_disputed(cand_id)
                    self.store.mark_disputed(fact.id)
                continue
            escalated = decision.backend in LLM_BACKENDS  # an LLM verdict is not asked twice
            first_against = stored.against_count == 0
            multi_update = (
                self.flags.recheck_multi_valued_updates
                and relation == "update"
                and cardinality(stored.predicate) == "many"
            )
            needs = self.flags.agreement_gate and not escalated and (first_against or multi_update)
            against[cand_id] = (pi, relation, needs)

        rechecks = self._recheck(run, cands, [u for u, (_, _, needs) in against.items() if needs], state)
        out: list[tuple[str, float, int, str]] = []
        for cand_id in cands.ids:
            if cand_id in support:
                out.append((cand_id, support[cand_id], 0, cands.relation[cand_id].chosen))
            elif cand_id in against:
                pi, relation, needs = against[cand_id]
                if not needs:
                    out.append((cand_id, belief.against_evidence(pi, None), 1, relation))
                    continue
                second = rechecks.get(cand_id)
                if not belief.agreement_gate(second):  # g_A
                    self.store.log(
                        "blocked_agreement",
                        cand_id,
                        run.message.id,
                        relation=relation,
                        by=fact.id,
                        recheck=None if second is None else second.chosen,
                    )
                    continue
                assert second is not None
                out.append((cand_id, belief.against_evidence(pi, second.confidence), 2, relation))
        return out

    def _recheck(self, run: _Run, cands: _Candidates, ids: Sequence[str], state: dict[str, Any]) -> dict[str, Decision]:
        """The second phrasing r'(f, u), one request for all candidates that need it."""
        asks = [
            Ask(recheck_key(cands.index[u]), self.recheck_question, {"existing_fact": self._ref(self.store.get(u))}, u)
            for u in ids
        ]
        answers = self._request(run, state, asks) if asks else {}
        if not answers:
            return {}
        decisions = {u: answers[recheck_key(cands.index[u])] for u in ids}
        return decisions

    def _settle(self, run: _Run, cand_id: str, fact: Fact) -> None:
        stored = self.store.get(cand_id)
        settled = belief.settle(stored.is_open, stored.closed_reason, stored.belief)
        if settled.transition == "close":
            when = max(fact.valid_from, stored.valid_from)
            if self.store.close(cand_id, when, "belief", fact.id):
                self.store.log("close", cand_id, run.message.id, reason="belief", by=fact.id, belief=stored.belief)
                run.closes.append(cand_id)
        elif settled.transition == "reopen":
            if self.store.reopen(cand_id):
                self.store.log("reopen", cand_id, run.message.id, by=fact.id, belief=stored.belief)
                run.reopens.append(cand_id)

    # ---- the E2 policy ---------------------------------------------------------------------------------------

    def _write_direct(
        self,
        run: _Run,
        fact: Fact,
        vector: np.ndarray,
        cands: _Candidates,
        target: str | None,
        r_star: str,
        acted: bool,
        escalated: bool,
        temporal: Decision,
        fact_decisions: list[Decision],
    ) -> None:
        """E2: a confident, current superseding answer closes u* at once (reason "superseded")."""
        close = (
            target is not None
            and r_star in SUPERSEDING
            and acted
            and not fact.tentative
            and belief.temporal_gate(temporal, self.flags)
        )
        if close and target is not None:
            stored = self.store.get(target)
            sibling = stored.subject == fact.subject and stored.predicate == fact.predicate
            if not belief.cardinality_gate(r_star, stored.predicate, sibling, self.flags):
                self.store.log("blocked_cardinality", target, run.message.id, relation=r_star, by=fact.id)
                close = False
        if r_star in SUPERSEDING and not close:
            fact = replace(fact, tentative=True)
        self._insert(run, fact, vector, [*fact_decisions, *cands.relation.values(), *cands.plan.values()])
        if close and target is not None:
            when = max(fact.valid_from, self.store.get(target).valid_from)
            if self.store.close(target, when, "superseded", fact.id):
                self.store.log("close", target, run.message.id, reason="superseded", by=fact.id)
                run.closes.append(target)
        linked = False
        if r_star == "duplicate" and acted and not fact.tentative and target is not None:
            self.store.link_same_as(
                target, fact.id, 1.0 if escalated else cands.relation[target].confidence, run.message.id
            )
            self.store.log("same_as", fact.id, run.message.id, other=target)
            linked = True
        action = "same_as" if linked else ACTION_OF_RELATION.get(r_star, "inserted")
        pi = cands.relation[target].confidence if target is not None and target in cands.relation else 1.0
        run.outcomes.append(
            FactOutcome(fact.text, fact.id, action, r_star, pi, target, escalated=escalated, tentative=fact.tentative)
        )

    # ---- plans -----------------------------------------------------------------------------------------------

    def _apply_fulfilled(self, run: _Run, fact: Fact, cands: _Candidates) -> None:
        """A yes at >= theta_act on plan_fulfilled closes the plan with closed_reason "fulfilled"."""
        for plan_id, decision in cands.plan.items():
            if decision.fallback or decision.p("yes") < config.THETA_ACT:
                continue
            stored = self.store.get(plan_id)
            when = max(fact.valid_from, stored.valid_from)
            if self.store.close(plan_id, when, "fulfilled", fact.id):
                self.store.log("close", plan_id, run.message.id, reason="fulfilled", by=fact.id, p=decision.p("yes"))
                run.closes.append(plan_id)
