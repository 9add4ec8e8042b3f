"""`Engram`: the one public entry point. Other components (the harness, scripts) use only this API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram._embed import MiniLMEmbedder
from engram._escalation import Escalator, Mem0UpdateEscalator
from engram._exceptions import InvalidInput, MissingInput
from engram._extract import RulesExtractor
from engram._flags import Flags
from engram._hygiene import HygieneReport, run_hygiene
from engram._llm_decider import RelationDecider
from engram._protocols import LLM, DecisionBackend, Embedder, Extractor
from engram._read import ReadPath, Retrieval
from engram._store import Store
from engram._types import Fact, Line, Message, WriteReport
from engram._write import WritePath
from engram.deciders._llm import RulesUpdateLLM
from engram.deciders._rules import RulesDecider

OFFLINE_LABEL = "offline stand-ins (rules extractor, rules decider; not the article's models)"


def _conversation_time(when: datetime) -> datetime:
    """One clock for the store: naive UTC, so stated dates and message times always compare."""
    if when.tzinfo is not None:
        return when.astimezone(UTC).replace(tzinfo=None)
    return when


class Engram:
    """Agent memory whose every write decision is a typed question.

    >>> memory = Engram.offline("run/engram.db")                      # doctest: +SKIP
    >>> memory.add("I live in Paris.", speaker="Ana", when=datetime(2023, 5, 8))   # doctest: +SKIP
    >>> [line.text for line in memory.search("Where does Ana live?", k=3)]         # doctest: +SKIP
    """

    def __init__(
        self,
        store_path: str | Path,
        *,
        extractor: Extractor,
        decider: DecisionBackend,
        embedder: Embedder,
        escalator: Escalator | LLM | None = None,
        flags: Flags = Flags(),
        relation_decider: RelationDecider | None = None,
    ) -> None:
        self.flags = flags
        self.relation_decider = relation_decider
        self.extractor = extractor
        self.decider = decider
        self.embedder = embedder
        if escalator is not None and not hasattr(escalator, "judge"):
            escalator = Mem0UpdateEscalator(escalator)  # a bare LLM: escalate with mem0's update prompt
        self.escalator: Escalator | None = escalator  # type: ignore[assignment]
        self._store = Store(store_path, embedder.dim)
        self._paths()

    def _paths(self) -> None:
        self._write = WritePath(
            self._store, self.extractor, self.decider, self.embedder, self.escalator, self.flags, self.relation_decider
        )
        self._read = ReadPath(self._store, self.decider, self.embedder, self.flags)

    @classmethod
    def offline(
        cls,
        path: str | Path,
        *,
        flags: Flags = Flags(),
        embedder: Embedder | None = None,
        escalate: bool = True,
        extractor: Extractor | None = None,
        decider: DecisionBackend | None = None,
    ) -> Engram:
        """The offline stack: rules extractor and rules decider (stand-ins) over the real MiniLM embedder. The
        escalate zone of §3.2 runs too, as in the harness's offline arms: a superseding answer with pi* < theta_esc
        goes to mem0's update prompt answered by the rules stand-in chat model (`RulesUpdateLLM`, the harness's
        offline escalator), named by the stand-in's own version. `escalate=False` leaves such facts tentative.
        `extractor`, `decider`: others in place of `RulesExtractor()` and `RulesDecider()` (e.g. the previous
        revisions `RulesExtractor(version=3)`, `RulesDecider(embedder, version=8)`); the escalator asks the decider."""
        embedder = embedder or MiniLMEmbedder()
        decider = decider or RulesDecider(embedder)
        escalator = None
        if escalate:
            escalator = Mem0UpdateEscalator(RulesUpdateLLM(decider), model=decider.model)
        return cls(
            path,
            extractor=extractor or RulesExtractor(),
            decider=decider,
            embedder=embedder,
            escalator=escalator,
            flags=flags,
        )

    # ---- write -----------------------------------------------------------------------------------------------

    def add(self, text: str, *, speaker: str, when: datetime, message_id: str | None = None) -> WriteReport:
        """Store what one message says. `when` is conversation time; validity is judged against it."""
        message_id = message_id or f"m{self._store.message_count() + 1}"
        return self._add(Message(id=message_id, text=text, speaker=speaker, when=when), None)

    def add_many(self, messages: Sequence[Message]) -> list[WriteReport]:
        """`add` for messages known ahead (a conversation replayed, say), in order, one transaction each, with the
        results of adding them one by one. For an extractor that reads the similar facts: each message's search
        for them, Top_10 s_cos(m_t, .), is scored in the same product over the stored vectors as the previous
        message's first fact, so a write reads the vectors about once instead of twice. An extractor that never
        reads them gains nothing (each message is then embedded once for nothing)."""
        upcoming: list[Message | None] = [*messages[1:], None]
        return [self._add(message, following) for message, following in zip(messages, upcoming)]

    def _add(self, message: Message, upcoming: Message | None) -> WriteReport:
        if self._store.has_message(message.id):
            raise InvalidInput(f"message_id {message.id!r}: already stored; expected a new id")
        message = Message(
            id=message.id, text=message.text, speaker=message.speaker, when=_conversation_time(message.when)
        )
        try:
            with self._store.transaction():
                return self._write.ingest(message, upcoming)
        except BaseException:
            # The file rolled back; rebuild the in-memory copy from it so the two agree again.
            self._store.close_db()
            self._store = Store(self._store.path, self.embedder.dim)
            self._paths()
            raise

    # ---- read ------------------------------------------------------------------------------------------------

    def retrieve(self, query: str) -> Retrieval:
        """The whole read path with its decisions and usage (the harness records the read cost from it)."""
        return self._read.retrieve(query)

    def retrieve_many(self, queries: Sequence[str]) -> list[Retrieval]:
        """`retrieve` for questions asked together (say, at a checkpoint): one embedding call and one pass over
        the stored vectors for all of them, with the same rankings `retrieve` gives one by one."""
        return self._read.retrieve_many(queries)

    def search_many(self, queries: Sequence[str], k: int | None = None) -> list[list[Line]]:
        """`search` for questions asked together: the first k lines for each query, in query order."""
        return [r.lines if k is None else r.lines[:k] for r in self.retrieve_many(queries)]

    def search(self, query: str, k: int | None = None) -> list[Line]:
        """The first k rendered lines of K+(q) (all of them when k is None)."""
        lines = self.retrieve(query).lines
        return lines if k is None else lines[:k]

    def facts(self, valid_only: bool = True) -> list[Fact]:
        """Stored facts in insertion order; by default only those still valid (not closed)."""
        return [f for f in self._store.all_facts() if f.is_open or not valid_only]

    def same_as(self, fact_id: str) -> list[Fact]:
        """The fact and every fact joined to it by same_as links, in insertion order (a rendered line stands for
        all of them)."""
        if fact_id not in self._store:
            raise MissingInput(f"fact_id {fact_id!r}: no such fact in {self._store.path}")
        return [self._store.get(i) for i in self._store.same_as_cluster(fact_id)]

    def explain(self, fact_id: str) -> dict[str, Any]:
        """A fact, the decisions that shaped it, and its history (insert, belief changes, closes, reopens)."""
        if fact_id not in self._store:
            raise MissingInput(f"fact_id {fact_id!r}: no such fact in {self._store.path}")
        fact = self._store.get(fact_id)
        return {
            "fact": fact,
            "decisions": self._store.decisions(fact_id),
            "history": self._store.events(fact_id),
            "belief_history": [e for e in self._store.events(fact_id) if e["event"] in ("insert", "belief")],
            "same_as": [i for i in self._store.same_as_cluster(fact_id) if i != fact_id],
            "superseded": self._store.superseded_by(fact_id),
        }

    def stats(self) -> dict[str, Any]:
        """Counts the harness puts in result files."""
        facts = self._store.all_facts()
        events = self._store.event_counts()
        return {
            "stored": len(facts),
            "active": sum(f.is_open for f in facts),
            "tentative": sum(f.tentative for f in facts),
            "closes": self._store.close_counts(),
            "reopens": events.get("reopen", 0),
            "escalations": events.get("escalation", 0) + events.get("escalation_failed", 0),
            "escalations_failed": events.get("escalation_failed", 0),
            "same_as_links": self._store.same_as_count(),
            "plan_fulfilled_asks": events.get("plan_ask", 0),
            "ignored_weak": events.get("ignored_weak", 0),
            "blocked": {
                "temporal": events.get("blocked_temporal", 0),
                "cardinality": events.get("blocked_cardinality", 0),
                "agreement": events.get("blocked_agreement", 0),
            },
            "rewrites": events.get("rewrite", 0) + events.get("merge", 0),
            "failed_requests": events.get("request_failed", 0),
            "flags": self.flags.describe(),
        }

    def hygiene(self) -> HygieneReport:
        """Link duplicates among facts sharing subject and relation (same_fact question); deletes nothing."""
        with self._store.transaction():
            return run_hygiene(self._store, self.decider)

    def close(self) -> None:
        self._store.close_db()
