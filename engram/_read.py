"""The read path, as the article's §3.3.

    A(q) = Top_30 s_cos(q, .)                                   closed facts included (rendered as no longer true)
    K(q) = [u in A(q) : rho(u, q) > theta_rel] sorted by rho(u, q) b_u,   rho(u, q) = P_D(yes | u, q, Q_rlv)
    K+(q) = K(q) + floor (the 10 closest) + relation pull (valid facts of a named relation) + superseded history

One decision request scores all thirty shortlisted facts and asks which relation the query names. If that request
fails, the 10 closest facts are returned unscored (degraded). With reranking off (the "reranking off" arm) no
decision is asked: the 30 shortlisted facts in cosine order, plus their history. A same_as cluster shows once, at
the position of its first member. The caller cuts the first k lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engram import config
from engram._exceptions import DecisionError
from engram._flags import Flags
from engram._protocols import DecisionBackend, Embedder
from engram._store import Store
from engram._types import Ask, Decision, Line, LineSource, Usage, assemble
from engram.questions import NONE_RELATION, QUERY_RELATION, QUERY_RELATION_KEY, RELEVANT_TO_QUERY, relevance_key


@dataclass
class Retrieval:
    query: str
    lines: list[Line] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    degraded: bool = False
    query_relation: str | None = None

    @property
    def cost_usd(self) -> float:
        return math.fsum(u.cost_usd for u in self.usage)

    @property
    def latency_ms(self) -> float:
        return math.fsum(u.latency_ms for u in self.usage)


_RELEVANCE_KEYS = tuple(relevance_key(i) for i in range(config.SHORTLIST_K))


def _relevance_keys(n: int) -> Sequence[str]:
    """The keys of the first n relevance asks (made once: a read asks about up to 30 facts)."""
    return _RELEVANCE_KEYS[:n] if n <= len(_RELEVANCE_KEYS) else [relevance_key(i) for i in range(n)]


class ReadPath:
    def __init__(self, store: Store, decider: DecisionBackend, embedder: Embedder, flags: Flags) -> None:
        self.store = store
        self.decider = decider
        self.embedder = embedder
        self.flags = flags

    def retrieve(self, query: str) -> Retrieval:
        if not len(self.store):
            return Retrieval(query)
        vector = self.embedder.embed([query])[0]
        return self._retrieve_scored(query, self.store.scores(vector), None)

    def retrieve_many(self, queries: Sequence[str]) -> list[Retrieval]:
        """The read path for questions asked together: one embedding call and one matrix product for all of them,
        then each query's own path. Every ranking is the one `retrieve` gives (the rows that decide it are made
        exact, see `Store.make_exact`)."""
        if not len(self.store) or not queries:
            return [Retrieval(q) for q in queries]
        vectors = self.embedder.embed(list(queries))
        scores = self.store.scores_many(vectors)
        return [self._retrieve_scored(q, scores[j], vectors[j]) for j, q in enumerate(queries)]

    def _retrieve_scored(self, query: str, scores: np.ndarray, batch_vector: np.ndarray | None) -> Retrieval:
        """K+(q) from s_cos(q, .); `batch_vector` is the query's vector when the scores came from a batch."""
        result = Retrieval(query)
        if batch_vector is not None:
            self.store.make_exact(scores, batch_vector, config.SHORTLIST_K)
        ranked = self.store.top_rows(scores, config.SHORTLIST_K)  # A(q) = Top_30 s_cos(q, .), by row
        shortlist = list(zip(self.store.fact_ids_at([row for row, _ in ranked]), [score for _, score in ranked]))
        # the rows of the picked shortlist facts, so their columns are read without a lookup of each id
        rows: dict[str, int] = {}
        picked: list[tuple[str, LineSource, float]] = []
        if not self.flags.retrieval_rerank:
            picked = [(i, "cosine", s) for i, s in shortlist]
            rows = {fact_id: row for (fact_id, _), (row, _) in zip(shortlist, ranked)}
        else:
            picked = self._reranked(query, shortlist, ranked, rows, scores, batch_vector, result)
        if self.flags.retrieval_history:
            picked = self._with_history(picked)
        result.lines = self._render(picked, rows)
        return result

    def _reranked(
        self,
        query: str,
        shortlist: list[tuple[str, float]],
        ranked: list[tuple[int, float]],
        rows: dict[str, int],
        scores: np.ndarray,
        batch_vector: np.ndarray | None,
        result: Retrieval,
    ) -> list[tuple[str, LineSource, float]]:
        keys = _relevance_keys(len(shortlist))
        refs = self.store.memory_refs_at(row for row, _ in ranked)
        asks = [
            assemble(Ask, key=key, question=RELEVANT_TO_QUERY, refs={"memory": ref}, target=fact_id)
            for key, (fact_id, _), ref in zip(keys, shortlist, refs)
        ]
        asks.append(Ask(QUERY_RELATION_KEY, QUERY_RELATION))
        try:
            answers = self.decider.ask({"query": query}, asks)
        except DecisionError:
            result.degraded = True
            result.usage.append(Usage(role="decide", backend=self.decider.name, model=self.decider.model))
            return [(i, "cosine", s) for i, s in shortlist[: config.FLOOR_K]]
        # one walk over the answers, in ask order: the decisions as asked (those answered), and K(q)
        decisions: list[Decision] = []
        kept: list[tuple[str, LineSource, float]] = []
        texts: dict[str, str] = {}
        for key, (fact_id, _), (row, _) in zip(keys, shortlist, ranked):
            decision = answers.get(key)
            if decision is None:
                continue
            decisions.append(decision)
            if decision.fallback:
                continue
            rho = decision.p("yes")
            if rho > config.THETA_REL:  # rho(u, q) > theta_rel, strictly
                kept.append((fact_id, "rerank", rho * self.store.belief_at(row)))
                texts[fact_id] = self.store.text_at(row)
                rows[fact_id] = row
        relation = answers.get(QUERY_RELATION_KEY)
        if relation is not None:
            decisions.append(relation)
        result.decisions = decisions
        result.usage.append(
            Usage(
                role="decide",
                backend=self.decider.name,
                model=self.decider.model,
                cost_usd=math.fsum([d.cost_usd for d in decisions]),
                latency_ms=max([d.latency_ms for d in decisions], default=0.0),
            )
        )
        # sorted by rho(u, q) b_u, ties by text so the order is repeatable
        kept.sort(key=lambda item: (-item[2], texts[item[0]], item[0]))

        present = {fact_id for fact_id, _, _ in kept}
        floor = self.flags.retrieval_floor
        for (fact_id, score), (row, _) in zip(shortlist[:floor], ranked[:floor]):  # the floor: the closest stay
            if fact_id not in present:
                kept.append((fact_id, "cosine", score))
                present.add(fact_id)
                rows[fact_id] = row

        if (
            relation is not None
            and not relation.fallback
            and relation.chosen != NONE_RELATION
            and relation.confidence >= config.RELATION_PULL_CONFIDENCE
        ):
            result.query_relation = relation.chosen
            pulled = self.store.top_open_with_predicate(
                scores, relation.chosen, config.RELATION_PULL_K, present, exact_for=batch_vector
            )
            for fact_id in pulled:  # the valid facts of the named relation, closest first
                kept.append((fact_id, "relation", self.store.score_of(scores, fact_id)))
                present.add(fact_id)
        return kept

    def _with_history(self, picked: list[tuple[str, LineSource, float]]) -> list[tuple[str, LineSource, float]]:
        """Each kept fact brings the facts it superseded (transitively, up to HISTORY_DEPTH generations): placed
        right after it ("beside", the article), or after every other line ("after", the original)."""
        if self.flags.history_placement == "after":
            present = {fact_id for fact_id, _, _ in picked}
            return list(picked) + [item for fact_id, _, _ in picked for item in self._chain(fact_id, present)]
        out: list[tuple[str, LineSource, float]] = []
        present = set()
        for item in picked:
            if item[0] in present:
                continue
            out.append(item)
            present.add(item[0])
            out += self._chain(item[0], present)
        return out

    def _chain(self, fact_id: str, present: set[str]) -> list[tuple[str, LineSource, float]]:
        """The facts `fact_id` superseded, generation by generation, that are not already present (adds them)."""
        chain: list[tuple[str, LineSource, float]] = []
        if not self.store.superseded_any(fact_id):
            return chain
        frontier = [fact_id]
        for _ in range(config.HISTORY_DEPTH):
            older = [o for f in frontier for o in self.store.superseded_by(f) if o not in present]
            for other in older:
                chain.append((other, "history", 0.0))
                present.add(other)
            frontier = older
            if not frontier:
                break
        return chain

    def _render(self, picked: list[tuple[str, LineSource, float]], rows: dict[str, int]) -> list[Line]:
        """`rows`: the rows of the facts whose rows are known (the shortlist); the others are looked up."""
        lines, shown = [], set()
        for fact_id, source, score in picked:
            if fact_id in shown:
                continue
            shown.update(self.store.same_as_cluster(fact_id))  # a same_as cluster shows once
            row = rows[fact_id] if fact_id in rows else self.store.row_of(fact_id)
            lines.append(assemble(Line, text=self.store.render_at(row), fact_id=fact_id, source=source, score=score))
        return lines
