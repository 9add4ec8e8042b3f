"""The write path, per message, in the order of the article's §3.2:

    F_t^new = X(m_t, m_{t-10..t-1}, Top_10 s_cos(m_t, .))                 extract
    C(f)    = Top_10 s_cos(f, .) ∪ Top_10 G(f)                              candidates
    one request per fact: six fact questions + Q_rel per candidate
    u* = argmax_{u in C(f)} max_{o in R \\ {new}} P_D(o | f, u, Q_rel)       u*, with r* and pi*
    act (pi* >= theta_act) | escalate (r* in S, pi* < theta_esc) | tentative  zones
    g_T, g_C, g_A                                                           gates
    e(f, u)                                                                 evidence
    logit b_u += e(f, u);  logit b_f -= sum_u min(e(f, u), 0)               belief
    close below theta_close, reopen above theta_open                       settle
    plan_fulfilled closes plans                                             plans

The arms outside the article sit in their own modules behind `Flags`: the direct "E2" policy (`engram._direct`),
the union merge and the mem0 rewrite (`engram._merge`), the LLM decider (`engram._llm_decider`) and the degraded
path of a failed request (`engram._degraded`); escalation is `engram._escalation`.

Requests per fact, in order (each one round trip, run one after another so latencies add):
  1. the six fact questions, Q_rel for each cosine candidate, plan_fulfilled for each plan among them;
  2. only when G(f) adds candidates (it needs rel(f), answered by request 1): Q_rel (+ plan_fulfilled) for them;
  3. only when some evidence against a fact needs the second phrasing: r'(f, u) for those candidates.
Facts of one message are written one after another, and each reads the beliefs the previous one left, so no
update is lost (the original wrote them concurrently and could lose them; `Flags.sequential_belief=False`
replays that).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engram import _belief as belief
from engram import config
from engram._degraded import write_degraded
from engram._direct import write_direct
from engram._escalation import REWRITE, Escalator, escalate, should_escalate
from engram._exceptions import DecisionError
from engram._flags import Flags
from engram._llm_decider import RelationDecider, ask_relation_decider
from engram._merge import merge_duplicate, rewrite
from engram._protocols import DecisionBackend, Embedder, Extractor
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
from engram._write_state import (
    ACTION_OF_RELATION,
    ESCALATION_BACKEND,
    LLM_DECIDER_BACKEND,
    Candidates,
    MessageRun,
    NewFact,
    all_decisions,
    insert,
    is_plan,
    ref,
)
from engram.questions import (
    EDGE_TYPES,
    FALLBACK_EDGE,
    PLAN_FULFILLED,
    cardinality,
    fact_questions,
    plan_key,
    recheck_key,
    relation_key,
    relation_questions,
)

Evidence = tuple[str, float, int, str]  # (u, e(f, u), pieces of evidence against u, relation)


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
        self.extractor = extractor
        self.decider = decider
        self.embedder = embedder
        self.escalator = escalator
        self.flags = flags
        self.relation_decider = relation_decider
        self.fact_questions = fact_questions(flags.temporal_version)
        self.relation_question, self.recheck_question = relation_questions(flags.relation_version)

    # ==== the article's path ====================================================================================

    def ingest(self, message: Message) -> WriteReport:
        run = MessageRun(message)
        drafts, extract_usage = self._extract(message)
        self.store.add_message(message)
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

    def _write_fact(self, run: MessageRun, draft: ExtractedFact, index: int, vector: np.ndarray) -> None:
        fact = self._new_fact(run, draft, index, vector)
        exclude = set(run.fact_ids)  # facts of one message are not each other's candidates (as the original)

        # C(f): Top_10 s_cos(f, .) now, Top_10 G(f) once rel(f) is known. One request: six fact questions + Q_rel.
        cosine = [i for i, _ in self.store.top(fact.scores, config.CANDIDATE_K, candidates_only=True, exclude=exclude)]
        fact_asks = [Ask(q.id, q) for q in self.fact_questions]
        first = self._request(run, fact.state, fact_asks + self._candidate_asks(fact.cands, cosine))
        if first is None:
            write_degraded(self.store, run, fact, fact_asks, self.decider.name, self.decider.model)
            return
        self._collect(run, fact.cands, first)
        fact.fact_decisions = [first[a.key] for a in fact_asks]
        relation_name = self._relation_of(first["edge_type"], draft)
        if self.flags.graph_candidates:
            self._ask_graph_candidates(run, fact, relation_name, exclude)

        llm_failed = False
        if self.relation_decider is not None:  # the LLM-decider arm judges relations in its own call
            llm_failed = not ask_relation_decider(self.store, run, fact, self.relation_decider, self.flags)

        # u*, r*, pi*
        target, r_star, pi_star = self._u_star(fact.cands)

        # zones: escalate, r* <- L(f, u*), if r* in S and pi* < theta_esc; act if pi* >= theta_act; else tentative
        escalated, escalation_failed = False, False
        if should_escalate(target, r_star, pi_star, self.flags, self.escalator):
            assert target is not None and self.escalator is not None
            escalated, escalation_failed = escalate(self.store, run, fact, target, self.escalator, self.flags)
            if escalated:
                r_star, pi_star = fact.cands.relation[target].chosen, 1.0
        acted = escalated or pi_star >= config.THETA_ACT
        tentative = not acted or escalation_failed or llm_failed or self._worth_makes_tentative(first)

        # Outcomes outside the article that store no new fact.
        if r_star == REWRITE and target is not None:
            rewrite(self.store, self.embedder, run, fact, target)
            return
        if r_star == "duplicate" and acted and not tentative and target is not None:
            if self.flags.merge_policy == "union":
                merge_duplicate(self.store, self.embedder, run, fact, target, pi_star)
                return

        temporal = first["temporal_status"]
        stored = self._fact_record(run, fact, first, relation_name, target, r_star, pi_star, tentative)
        if self.flags.policy == "direct":
            write_direct(self.store, run, fact, stored, target, r_star, acted, escalated, temporal, self.flags)
        else:
            self._write_belief(run, fact, stored, target, r_star, pi_star, acted, temporal)
        # plans
        self._close_fulfilled_plans(run, stored, fact.cands, temporal)

    # ---- candidates ------------------------------------------------------------------------------------------

    def _ask_graph_candidates(self, run: MessageRun, fact: NewFact, relation_name: str, exclude: set[str]) -> None:
        """Top_10 G(f), in a second request (it needs rel(f)); a failed extra request only loses them."""
        graph = self._graph_candidates(fact, relation_name, exclude | set(fact.cands.ids))
        if graph:
            second = self._request(run, fact.state, self._candidate_asks(fact.cands, graph))
            if second is not None:
                self._collect(run, fact.cands, second)

    def _graph_candidates(self, fact: NewFact, relation: str, exclude: set[str]) -> list[str]:
        """G(f) = {u : subj(u) = subj(f) and rel(u) = rel(f)} ∪ {u : ent(u) ∩ ent(f) ≠ ∅}, rare entities only."""
        hits: set[str] = set()
        if relation != FALLBACK_EDGE:  # "related_to" says nothing about which value replaces which
            hits.update(i for i in self.store.siblings(fact.subject, relation) if self.store.is_candidate(i))
        pool = max(0, self.store.candidate_count() - len(exclude))
        common_bar = max(config.RARE_ENTITY_MIN_COMMON, config.RARE_ENTITY_COMMON_SHARE * pool)
        for entity in named_entities(fact.draft.text) - {fact.subject}:
            holders = self.store.facts_with_entity(entity)
            if len(holders) < common_bar:
                hits.update(i for i in holders if self.store.is_candidate(i))
        hits -= exclude
        return self.store.top_among(fact.scores, hits, config.GRAPH_CANDIDATE_K)  # Top_10 G(f), by cosine

    # ---- u* --------------------------------------------------------------------------------------------------

    @staticmethod
    def _u_star(cands: Candidates) -> tuple[str | None, str, float]:
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

    # ---- zones -----------------------------------------------------------------------------------------------

    def _worth_makes_tentative(self, first: dict[str, Decision]) -> bool:
        """Only with `Flags.worth_in_zones` (the original): the article's zones depend on pi* alone."""
        if not self.flags.worth_in_zones:
            return False
        worth = first["worth_remembering"]
        return worth.fallback or worth.p("yes") < config.THETA_ACT

    # ---- belief, through the gates and the evidence ----------------------------------------------------------

    def _write_belief(
        self,
        run: MessageRun,
        fact: NewFact,
        stored: Fact,
        target: str | None,
        r_star: str,
        pi_star: float,
        acted: bool,
        temporal: Decision,
    ) -> None:
        cands = fact.cands
        insert(self.store, run, stored, fact.vector, all_decisions(fact))
        linked = False
        if r_star == "duplicate" and acted and not stored.tentative and target is not None:
            # Duplicates become reversible same_as links, never merged text.
            self.store.link_same_as(target, stored.id, pi_star, run.message.id)
            self.store.log("same_as", stored.id, run.message.id, other=target, p=pi_star)
            linked = True

        mirrored = 0.0
        for cand_id, e, pieces, relation in self._evidence(run, fact, stored, temporal):
            before = (
                self.store.get(cand_id).belief
                if self.flags.sequential_belief
                else run.belief_snapshot.get(cand_id, self.store.get(cand_id).belief)
            )
            run.belief_snapshot.setdefault(cand_id, self.store.get(cand_id).belief)
            after = belief.shift(before, e)  # logit b_u <- logit b_u + e(f, u)
            self.store.set_belief(cand_id, after, against_pieces=pieces)
            self.store.log(
                "belief",
                cand_id,
                run.message.id,
                before=before,
                after=after,
                evidence=e,
                relation=relation,
                by=stored.id,
            )
            self._settle(run, cand_id, stored)
            mirrored += min(e, 0.0)
        if mirrored:
            before = self.store.get(stored.id).belief
            after = belief.shift(before, -mirrored)  # logit b_f <- logit b_f - sum_u min(e(f, u), 0)
            self.store.set_belief(stored.id, after)
            self.store.log(
                "belief",
                stored.id,
                run.message.id,
                before=before,
                after=after,
                evidence=-mirrored,
                relation="mirror",
                by=stored.id,
            )

        action = "same_as" if linked else ACTION_OF_RELATION.get(r_star, "inserted")
        if r_star == "contradiction" and self.store.get(stored.id).disputed:
            action = "disputed"
        escalated = (
            target is not None and target in cands.relation and cands.relation[target].backend == ESCALATION_BACKEND
        )
        run.outcomes.append(
            FactOutcome(
                stored.text, stored.id, action, r_star, pi_star, target, escalated=escalated, tentative=stored.tentative
            )
        )

    def _evidence(self, run: MessageRun, fact: NewFact, stored: Fact, temporal: Decision) -> list[Evidence]:
        """e(f, u) for every candidate u, in candidate order:
        + logit pi(f, u) for r in {duplicate, refinement}; - logit pi(f, u) - logit pi'(f, u) for r in S when
        g_T g_C g_A = 1; 0 otherwise."""
        cands = fact.cands
        g_t = belief.temporal_gate(temporal, self.flags)  # g_T(f) = 1[P(current | f) + P(past | f) >= theta_act]
        support: dict[str, float] = {}
        against: dict[str, tuple[float, str, bool, bool]] = {}  # u -> (pi, relation, g_A applies, ask r')
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
            if not g_t:
                self.store.log("blocked_temporal", cand_id, run.message.id, relation=relation, by=stored.id)
                continue
            old = self.store.get(cand_id)
            sibling = old.subject == stored.subject and old.predicate == stored.predicate
            if not belief.cardinality_gate(relation, old.predicate, sibling, self.flags):  # g_C(f, u)
                self.store.log("blocked_cardinality", cand_id, run.message.id, relation=relation, by=stored.id)
                if relation == "contradiction":
                    self.store.mark_disputed(cand_id)
                    self.store.mark_disputed(stored.id)
                continue
            gated, asked = self._needs_second_phrasing(decision, old)
            against[cand_id] = (pi, relation, gated, asked)

        rechecks = self._recheck(run, fact, [u for u, (_, _, _, asked) in against.items() if asked])
        out: list[Evidence] = []
        for cand_id in cands.ids:
            if cand_id in support:
                out.append((cand_id, support[cand_id], 0, cands.relation[cand_id].chosen))
            elif cand_id in against:
                pi, relation, gated, asked = against[cand_id]
                second = rechecks.get(cand_id) if asked else None
                if gated and not belief.agreement_gate(second):  # g_A(f, u)
                    self.store.log(
                        "blocked_agreement",
                        cand_id,
                        run.message.id,
                        relation=relation,
                        by=stored.id,
                        recheck=None if second is None else second.chosen,
                    )
                    continue
                pi_second = belief.second_phrasing_p(second, self.flags)
                pieces = 1 if pi_second is None else 2
                out.append((cand_id, belief.against_evidence(pi, pi_second), pieces, relation))
        return out

    def _needs_second_phrasing(self, decision: Decision, old: Fact) -> tuple[bool, bool]:
        """(does g_A apply, is r'(f, u) asked). g_A applies to the first evidence against u; the original also
        applied it to every update on a multi-valued relation. An LLM decider's verdict is never rechecked; an
        escalated verdict is, unless `Flags.escalation_agreement` is off (the original counted it at once)."""
        if decision.backend == LLM_DECIDER_BACKEND or (
            decision.backend == ESCALATION_BACKEND and not self.flags.escalation_agreement
        ):
            return False, False
        multi_update = (
            self.flags.recheck_multi_valued_updates
            and decision.chosen == "update"
            and cardinality(old.predicate) == "many"
        )
        gated = self.flags.agreement_gate and (old.against_count == 0 or multi_update)
        return gated, gated or self.flags.recheck_every_against

    def _recheck(self, run: MessageRun, fact: NewFact, ids: Sequence[str]) -> dict[str, Decision]:
        """The second phrasing r'(f, u), one request for all candidates that need it."""
        index = fact.cands.index
        asks = [
            Ask(recheck_key(index[u]), self.recheck_question, {"existing_fact": ref(self.store.get(u))}, u) for u in ids
        ]
        answers = self._request(run, fact.state, asks) if asks else {}
        if not answers:
            return {}
        return {u: answers[recheck_key(index[u])] for u in ids}

    # ---- settle ----------------------------------------------------------------------------------------------

    def _settle(self, run: MessageRun, cand_id: str, by: Fact) -> None:
        """Close below theta_close; reopen a belief-closed fact above theta_open (the gap is the hysteresis)."""
        old = self.store.get(cand_id)
        settled = belief.settle(old.is_open, old.closed_reason, old.belief)
        if settled.transition == "close":
            when = max(by.valid_from, old.valid_from)
            if self.store.close(cand_id, when, "belief", by.id):
                self.store.log("close", cand_id, run.message.id, reason="belief", by=by.id, belief=old.belief)
                run.closes.append(cand_id)
        elif settled.transition == "reopen":
            if self.store.reopen(cand_id):
                self.store.log("reopen", cand_id, run.message.id, by=by.id, belief=old.belief)
                run.reopens.append(cand_id)

    # ---- plans -----------------------------------------------------------------------------------------------

    def _close_fulfilled_plans(self, run: MessageRun, stored: Fact, cands: Candidates, temporal: Decision) -> None:
        """A yes at >= theta_act on plan_fulfilled closes the plan (closed_reason "fulfilled"), only when g_T(f)
        holds: a plan or a hypothetical fulfils nothing (`Flags.plan_temporal_gate`; the original had no gate)."""
        if not cands.plan:
            return
        g_t = belief.temporal_gate(temporal, self.flags)
        for plan_id, decision in cands.plan.items():
            if decision.fallback or decision.p("yes") < config.THETA_ACT:
                continue
            if self.flags.plan_temporal_gate and not g_t:
                self.store.log("blocked_temporal", plan_id, run.message.id, relation="plan_fulfilled", by=stored.id)
                continue
            when = max(stored.valid_from, self.store.get(plan_id).valid_from)
            if self.store.close(plan_id, when, "fulfilled", stored.id):
                self.store.log("close", plan_id, run.message.id, reason="fulfilled", by=stored.id, p=decision.p("yes"))
                run.closes.append(plan_id)

    # ==== helpers ===============================================================================================

    def _new_fact(self, run: MessageRun, draft: ExtractedFact, index: int, vector: np.ndarray) -> NewFact:
        subject, obj = normalize_entity(draft.subject), normalize_entity(draft.object)
        return NewFact(
            draft=draft,
            fact_id=f"{run.message.id}#{index}",
            subject=subject,
            object=obj,
            vector=vector,
            scores=self.store.scores(vector),
            state={
                "new_fact": {"text": draft.text, "subject": subject, "object": obj},
                "source_message": run.message.text,
            },
        )

    @staticmethod
    def _relation_of(edge: Decision, draft: ExtractedFact) -> str:
        """rel(f): the edge_type answer, or the extractor's hint when that answer degraded."""
        if not edge.fallback:
            return edge.chosen
        return draft.predicate_hint if draft.predicate_hint in EDGE_TYPES else FALLBACK_EDGE

    def _fact_record(
        self,
        run: MessageRun,
        fact: NewFact,
        first: dict[str, Decision],
        relation_name: str,
        target: str | None,
        r_star: str,
        pi_star: float,
        tentative: bool,
    ) -> Fact:
        message, draft = run.message, fact.draft
        worth = first["worth_remembering"]
        p_worth = 1.0 if worth.fallback else worth.p("yes")
        kind, durability, sensitivity = (first[k] for k in ("fact_kind", "durability", "sensitivity"))
        return Fact(
            id=fact.fact_id,
            text=draft.text,
            subject=fact.subject,
            predicate=relation_name,
            object=fact.object,
            kind=kind.chosen if not kind.fallback else draft.kind_hint,
            durability=durability.chosen if not durability.fallback else draft.durability_hint,
            sensitivity=sensitivity.chosen,
            temporal_status=first["temporal_status"].chosen,
            valid_from=draft.valid_from or message.when,
            valid_until=None,
            # the direct policy has no belief; ranking treats every fact as held
            belief=belief.initial_belief(pi_star, tentative) if self.flags.policy == "belief" else config.BELIEF_MAX,
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

    def _request(self, run: MessageRun, state: dict[str, Any], asks: Sequence[Ask]) -> dict[str, Decision] | None:
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

    def _candidate_asks(self, cands: Candidates, new_ids: Sequence[str]) -> list[Ask]:
        """Q_rel for each new candidate (unless the LLM decider judges relations), plan_fulfilled for open plans."""
        asks = []
        for fact_id in new_ids:
            i = cands.add(fact_id)
            old = self.store.get(fact_id)
            if self.relation_decider is None:
                asks.append(Ask(relation_key(i), self.relation_question, {"existing_fact": ref(old)}, fact_id))
            if self.flags.plan_question and old.is_open and is_plan(old):
                asks.append(Ask(plan_key(i), PLAN_FULFILLED, {"existing_fact": ref(old)}, fact_id))
        return asks

    def _collect(self, run: MessageRun, cands: Candidates, decisions: dict[str, Decision]) -> None:
        for fact_id in cands.ids:
            i = cands.index[fact_id]
            if relation_key(i) in decisions:
                cands.relation[fact_id] = decisions[relation_key(i)]
            if plan_key(i) in decisions:
                cands.plan[fact_id] = decisions[plan_key(i)]
                self.store.log("plan_ask", fact_id, run.message.id, p_yes=decisions[plan_key(i)].p("yes"))
