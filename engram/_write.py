"""The write path, per message, in the order of the article's §3.2; each step below is one method, in this order:

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

The arms outside the article sit in their own modules behind `Flags`, and this file only hands over to them: the
direct "E2" policy (`engram._direct`), the union merge (`engram._merge`), mem0's rewrite (`engram._rewrite`), the
LLM decider (`engram._llm_decider`) and the degraded path of a failed request (`engram._degraded`); escalation, the
article's second zone, is `engram._escalation`.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from engram import _belief as belief
from engram import config
from engram._degraded import write_degraded
from engram._direct import write_direct
from engram._escalation import Escalator, escalate, should_escalate
from engram._exceptions import DecisionError
from engram._flags import Flags
from engram._llm_decider import RelationDecider, ask_relation_decider
from engram._merge import merge_duplicate
from engram._protocols import DecisionBackend, Embedder, Extractor
from engram._rewrite import rewrite
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
    REWRITE,
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


@dataclass(frozen=True)
class Zone:
    """u*, r*, pi* and the zone they fall in (after escalation, when it ran)."""

    target: str | None  # u*
    relation: str  # r*
    p: float  # pi*
    acted: bool
    escalated: bool
    tentative: bool


@dataclass(frozen=True)
class Gated:
    """A candidate whose answer is evidence and passed g_T and g_C: support, or against u pending g_A."""

    fact_id: str
    relation: str
    p: float  # pi(f, u)
    support: bool
    agreement: bool = False  # g_A applies
    recheck: bool = False  # r'(f, u) is asked


class SimilarFacts(Sequence[str]):
    """The extraction context's similar facts, found on first use during `extract`: the search is a pass over
    every stored vector (and an embedding of the message), which an extractor that never reads them (the rules
    stand-in) should not pay for."""

    def __init__(self, find: Callable[[], list[str]]) -> None:
        self._find = find
        self._texts: list[str] | None = None

    def _found(self) -> list[str]:
        if self._texts is None:
            self._texts = self._find()
        return self._texts

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._found()[index]

    def __len__(self) -> int:
        return len(self._found())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._found())


Evidence = tuple[str, float, int, str]  # (u, e(f, u), pieces of evidence against u, relation)


@dataclass(frozen=True)
class ScoredAhead:
    """s_cos(m_{t+1}, .) computed in message t's first fact pass, for m_{t+1}'s similar facts: the message's
    vector, its batched scores over the rows stored then (made exact where the pick reads them, `Store.make_exact`),
    and the store's rewrite count then (`Store.rescore`)."""

    message_id: str
    vector: np.ndarray
    scores: np.ndarray
    rewrites: int


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
        self._ahead: ScoredAhead | None = None

    # ==== the article's path, in order ==========================================================================

    def ingest(self, message: Message, upcoming: Message | None = None) -> WriteReport:
        """Write one message; `upcoming`, the next one when the caller knows it, is scored ahead (`_fact_scores`)."""
        run = MessageRun(message, upcoming)
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

    def _write_fact(self, run: MessageRun, draft: ExtractedFact, index: int, vector: np.ndarray) -> None:
        fact = self._new_fact(run, draft, index, vector)
        first = self._candidates(run, fact)
        if first is None:  # the request failed as a whole: nothing is known about the fact
            write_degraded(self.store, run, fact, self._fact_asks(), self.decider.name, self.decider.model)
            return
        target, r_star, pi_star = u_star(fact.cands)
        zone = self._zone(run, fact, first, target, r_star, pi_star)
        if self._changed_in_place(run, fact, zone):
            return
        temporal = first["temporal_status"]
        stored = self._fact_record(run, fact, first, zone)
        if self.flags.policy == "direct":
            write_direct(
                self.store,
                run,
                fact,
                stored,
                zone.target,
                zone.relation,
                zone.acted,
                zone.escalated,
                temporal,
                self.flags,
            )
        else:
            self._write_belief(run, fact, stored, zone, temporal)
        self._close_fulfilled_plans(run, stored, fact.cands, temporal)

    # ---- extract ---------------------------------------------------------------------------------------------

    def _extract(self, message: Message) -> tuple[list[ExtractedFact], list[Usage]]:
        """F_t^new = X(m_t, m_{t-10}, ..., m_{t-1}, Top_10 s_cos(m_t, .)); empty and repeated texts are dropped."""
        context = ExtractionContext(
            previous=self.store.recent_messages(config.EXTRACT_PREVIOUS_MESSAGES),
            similar_facts=SimilarFacts(self._similar_facts(message)),
            current_date=config.PINNED_CURRENT_DATE,
        )
        extraction = self.extractor.extract(message, context)
        drafts, seen = [], set()
        for draft in extraction.facts:
            key = draft.text.strip().lower()
            if key and key not in seen:
                seen.add(key)
                drafts.append(draft)
        return drafts, list(extraction.usage)

    def _similar_facts(self, message: Message) -> Callable[[], list[str]]:
        """Top_10 s_cos(m_t, .) among facts that can still change, as the store is now, found when first read:
        the rows and the candidate mask are kept, so a later read sees the store as extraction did. When the
        previous message's fact pass scored this message ahead, only the rows stored or rewritten since are
        scored now (`Store.rescore`), and the rows that could be among the 10 best are made exact: the same pick."""
        candidates = self.store.candidate_mask()
        ahead = self._ahead if self._ahead is not None and self._ahead.message_id == message.id else None
        self._ahead = None

        def find() -> list[str]:
            if not candidates.size:
                return []
            if ahead is not None:
                scores = self.store.rescore(ahead.scores, ahead.vector, ahead.rewrites)[: candidates.size]
                top = self.store.top(
                    scores, config.EXTRACT_SIMILAR_FACTS, candidates=candidates, exact_for=ahead.vector
                )
            else:
                scores = self.store.scores(self.embedder.embed([message.text])[0])[: candidates.size]
                top = self.store.top(scores, config.EXTRACT_SIMILAR_FACTS, candidates=candidates)
            return [self.store.get(i).text for i, _ in top]

        return find

    # ---- candidates ------------------------------------------------------------------------------------------

    def _candidates(self, run: MessageRun, fact: NewFact) -> dict[str, Decision] | None:
        """C(f) = Top_10 s_cos(f, .) ∪ Top_10 G(f), with the answers about each; returns request 1's answers, or
        None when that request failed. Facts of one message are not each other's candidates (as the original)."""
        exclude = set(run.fact_ids)
        picked = self.store.top(
            fact.scores, config.CANDIDATE_K, candidates_only=True, exclude=exclude, exact_for=fact.exact_for
        )
        cosine = [i for i, _ in picked]
        fact_asks = self._fact_asks()
        first = self._request(run, fact.state, fact_asks + self._candidate_asks(fact.cands, cosine))
        if first is None:
            return None
        self._collect(run, fact.cands, first)
        fact.fact_decisions = [first[a.key] for a in fact_asks]
        fact.relation = relation_of(first["edge_type"], fact.draft)
        if self.flags.graph_candidates:
            self._ask_graph_candidates(run, fact, exclude)
        if self.relation_decider is not None:  # the LLM-decider arm judges relations in its own call
            fact.decider_failed = not ask_relation_decider(self.store, run, fact, self.relation_decider, self.flags)
        return first

    def _ask_graph_candidates(self, run: MessageRun, fact: NewFact, exclude: set[str]) -> None:
        """Top_10 G(f), in a second request (it needs rel(f)); a failed extra request only loses them."""
        graph = self._graph_candidates(fact, exclude | set(fact.cands.ids))
        if graph:
            second = self._request(run, fact.state, self._candidate_asks(fact.cands, graph))
            if second is not None:
                self._collect(run, fact.cands, second)

    def _graph_candidates(self, fact: NewFact, exclude: set[str]) -> list[str]:
        """G(f) = {u : subj(u) = subj(f) and rel(u) = rel(f)} ∪ {u : ent(u) ∩ ent(f) ≠ ∅}, rare entities only;
        Top_10 of it by cosine, among facts that can still change (open, or closed by belief)."""
        groups: list[np.ndarray] = []
        if fact.relation != FALLBACK_EDGE:  # "related_to" says nothing about which value replaces which
            groups.append(self.store.sibling_rows(fact.subject, fact.relation))
        pool = max(0, self.store.candidate_count() - len(exclude))
        common_bar = max(config.RARE_ENTITY_MIN_COMMON, config.RARE_ENTITY_COMMON_SHARE * pool)
        for entity in named_entities(fact.draft.text) - {fact.subject}:
            holders = self.store.entity_rows(entity)
            if len(holders) < common_bar:
                groups.append(holders)
        return self.store.top_candidates_in(
            fact.scores, groups, config.GRAPH_CANDIDATE_K, exclude, exact_for=fact.exact_for
        )

    # ---- zones -----------------------------------------------------------------------------------------------

    def _zone(
        self, run: MessageRun, fact: NewFact, first: dict[str, Decision], target: str | None, r_star: str, pi: float
    ) -> Zone:
        """act if pi* >= theta_act; escalate, r* <- L(f, u*), if r* in S and pi* < theta_esc; else tentative.
        An escalated verdict is acted on at pi* = 1; a failed escalation or LLM-decider call leaves it tentative."""
        escalated, escalation_failed = False, False
        if should_escalate(target, r_star, pi, self.flags, self.escalator):
            assert target is not None and self.escalator is not None
            escalated, escalation_failed = escalate(self.store, run, fact, target, self.escalator, self.flags)
            if escalated:
                r_star, pi = fact.cands.relation[target].chosen, 1.0
        acted = escalated or pi >= config.THETA_ACT
        tentative = not acted or escalation_failed or fact.decider_failed or self._worth_makes_tentative(first)
        return Zone(target, r_star, pi, acted, escalated, tentative)

    def _worth_makes_tentative(self, first: dict[str, Decision]) -> bool:
        """Only with `Flags.worth_in_zones` (the original): the article's zones depend on pi* alone."""
        if not self.flags.worth_in_zones:
            return False
        worth = first["worth_remembering"]
        return worth.fallback or worth.p("yes") < config.THETA_ACT

    def _changed_in_place(self, run: MessageRun, fact: NewFact, zone: Zone) -> bool:
        """The arms outside the article that store no new fact but change a stored one: mem0's UPDATE kept as a
        rewrite (`Flags.mem0_update = "rewrite"`) and the union merge of a confident duplicate."""
        if zone.target is None:
            return False
        if zone.relation == REWRITE:
            rewrite(self.store, self.embedder, run, fact, zone.target)
            return True
        confident_duplicate = zone.relation == "duplicate" and zone.acted and not zone.tentative
        if confident_duplicate and self.flags.merge_policy == "union":
            merge_duplicate(self.store, self.embedder, run, fact, zone.target, zone.p)
            return True
        return False

    # ---- gates, evidence, belief, settle -----------------------------------------------------------------------

    def _write_belief(self, run: MessageRun, fact: NewFact, stored: Fact, zone: Zone, temporal: Decision) -> None:
        """Insert f; a confident duplicate becomes a reversible same_as link (never merged text); then each piece
        of evidence moves a candidate's belief, which settles, and f mirrors the evidence against others."""
        insert(self.store, run, stored, fact.vector, all_decisions(fact))
        linked = False
        if zone.relation == "duplicate" and zone.acted and not stored.tentative and zone.target is not None:
            self.store.link_same_as(zone.target, stored.id, zone.p, run.message.id)
            self.store.log("same_as", stored.id, run.message.id, other=zone.target, p=zone.p)
            linked = True
        evidence = self._evidence(run, fact, stored, self._gates(run, fact, stored, temporal))
        mirrored = self._belief(run, stored, evidence)
        self._mirror(run, stored, mirrored)
        self._record_outcome(run, fact, stored, zone, linked)

    def _gates(self, run: MessageRun, fact: NewFact, stored: Fact, temporal: Decision) -> list[Gated]:
        """The candidates whose answers are evidence, in candidate order. Support passes; evidence against u
        passes g_T(f) = 1[P(current | f) + P(past | f) >= theta_act] and g_C(f, u), and is marked for g_A."""
        g_t = belief.temporal_gate(temporal, self.flags)
        passed: list[Gated] = []
        for cand_id in fact.cands.ids:
            decision = fact.cands.relation.get(cand_id)
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
                passed.append(Gated(cand_id, relation, pi, support=True))
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
            agreement, recheck = self._needs_second_phrasing(decision, old)
            passed.append(Gated(cand_id, relation, pi, support=False, agreement=agreement, recheck=recheck))
        return passed

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

    def _evidence(self, run: MessageRun, fact: NewFact, stored: Fact, gated: Sequence[Gated]) -> list[Evidence]:
        """e(f, u) = + logit pi(f, u) for r in {duplicate, refinement}; - logit pi(f, u) - logit pi'(f, u) for r in
        S when g_T g_C g_A = 1 (g_A: the second phrasing r'(f, u), asked in one request, agrees)."""
        rechecks = self._recheck(run, fact, [g.fact_id for g in gated if g.recheck])
        out: list[Evidence] = []
        for g in gated:
            if g.support:
                out.append((g.fact_id, belief.support_evidence(g.p), 0, g.relation))
                continue
            second = rechecks.get(g.fact_id) if g.recheck else None
            if g.agreement and not belief.agreement_gate(second):  # g_A(f, u)
                self.store.log(
                    "blocked_agreement",
                    g.fact_id,
                    run.message.id,
                    relation=g.relation,
                    by=stored.id,
                    recheck=None if second is None else second.chosen,
                )
                continue
            pi_second = belief.second_phrasing_p(second, self.flags)
            pieces = 1 if pi_second is None else 2
            out.append((g.fact_id, belief.against_evidence(g.p, pi_second), pieces, g.relation))
        return out

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

    def _belief(self, run: MessageRun, stored: Fact, evidence: Sequence[Evidence]) -> float:
        """logit b_u <- logit b_u + e(f, u) for each piece, then settle u; returns sum_u min(e(f, u), 0)."""
        mirrored = 0.0
        for cand_id, e, pieces, relation in evidence:
            before = self._belief_before(run, cand_id)
            after = belief.shift(before, e)
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
        return mirrored

    def _belief_before(self, run: MessageRun, cand_id: str) -> float:
        """The belief a piece of evidence moves: the current one, or (`Flags.sequential_belief=False`, the
        original's concurrent writes) the one the message started from, so earlier facts' updates are lost."""
        current = self.store.get(cand_id).belief
        before = current if self.flags.sequential_belief else run.belief_snapshot.get(cand_id, current)
        run.belief_snapshot.setdefault(cand_id, current)
        return before

    def _mirror(self, run: MessageRun, stored: Fact, mirrored: float) -> None:
        """logit b_f <- logit b_f - sum_u min(e(f, u), 0): evidence against others is evidence for f."""
        if not mirrored:
            return
        before = self.store.get(stored.id).belief
        after = belief.shift(before, -mirrored)
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
        # whose fact it is: the extractor's subject, or always the speaker (config.FACT_SUBJECT)
        named = draft.subject if config.FACT_SUBJECT == "extracted" else run.message.speaker
        subject, obj = normalize_entity(named), normalize_entity(draft.object)
        scores, batched = self._fact_scores(run, index, vector)
        return NewFact(
            draft=draft,
            fact_id=f"{run.message.id}#{index}",
            subject=subject,
            object=obj,
            vector=vector,
            scores=scores,
            state={
                "new_fact": {"text": draft.text, "subject": subject, "object": obj},
                "source_message": run.message.text,
            },
            exact_for=vector if batched else None,
        )

    def _fact_scores(self, run: MessageRun, index: int, vector: np.ndarray) -> tuple[np.ndarray, bool]:
        """s_cos(f, .), and whether it is batched. When the next message is known, the first fact's pass also
        scores it, for its Top_10 s_cos(m_{t+1}, .): one matrix product reads the stored vectors once for both
        (`Store.scores_few`). Its scores may differ from the one-vector pass in the last bits, so each pick
        from them (the fact's cosine and graph candidates, the next message's similar facts) first makes exact
        every row that could be among its k best (`Store.make_exact` over the rows that pick reads): the same
        picks as from `Store.scores`."""
        if index or run.upcoming is None:
            return self.store.scores(vector), False
        upcoming = self.embedder.embed([run.upcoming.text])[0]
        rewrites = self.store.rewrite_count()
        fact_scores, upcoming_scores = self.store.scores_few(np.stack([vector, upcoming]))
        self._ahead = ScoredAhead(run.upcoming.id, upcoming, upcoming_scores, rewrites)
        return fact_scores, True

    def _record_outcome(self, run: MessageRun, fact: NewFact, stored: Fact, zone: Zone, linked: bool) -> None:
        action = "same_as" if linked else ACTION_OF_RELATION.get(zone.relation, "inserted")
        if zone.relation == "contradiction" and self.store.get(stored.id).disputed:
            action = "disputed"
        relation = fact.cands.relation
        escalated = (
            zone.target is not None and zone.target in relation and relation[zone.target].backend == ESCALATION_BACKEND
        )
        run.outcomes.append(
            FactOutcome(
                stored.text,
                stored.id,
                action,
                zone.relation,
                zone.p,
                zone.target,
                escalated=escalated,
                tentative=stored.tentative,
            )
        )

    def _fact_record(self, run: MessageRun, fact: NewFact, first: dict[str, Decision], zone: Zone) -> Fact:
        message, draft = run.message, fact.draft
        worth = first["worth_remembering"]
        p_worth = 1.0 if worth.fallback else worth.p("yes")
        kind, durability, sensitivity = (first[k] for k in ("fact_kind", "durability", "sensitivity"))
        return Fact(
            id=fact.fact_id,
            text=draft.text,
            subject=fact.subject,
            predicate=fact.relation,
            object=fact.object,
            kind=kind.chosen if not kind.fallback else draft.kind_hint,
            durability=durability.chosen if not durability.fallback else draft.durability_hint,
            sensitivity=sensitivity.chosen,
            temporal_status=first["temporal_status"].chosen,
            valid_from=draft.valid_from or message.when,
            valid_until=None,
            # the direct policy has no belief; ranking treats every fact as held
            belief=belief.initial_belief(zone.p, zone.tentative)
            if self.flags.policy == "belief"
            else config.BELIEF_MAX,
            tentative=zone.tentative,
            confidence=round(min(p_worth, zone.p), 4),
            closed_reason=None,
            closed_by=None,
            source_message_id=message.id,
            source_text=draft.source_text or message.text,
            said_at=message.when,
            refines=zone.target if zone.relation == "refinement" else None,
            seq=self.store.next_seq(),
        )

    def _fact_asks(self) -> list[Ask]:
        return [Ask(q.id, q) for q in self.fact_questions]

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
        self.store.prefetch(new_ids)
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


def u_star(cands: Candidates) -> tuple[str | None, str, float]:
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


def relation_of(edge: Decision, draft: ExtractedFact) -> str:
    """rel(f): the edge_type answer, or the extractor's hint when that answer degraded."""
    if not edge.fallback:
        return edge.chosen
    return draft.predicate_hint if draft.predicate_hint in EDGE_TYPES else FALLBACK_EDGE
