"""The store M_t = (F_t, V_t, I_t): facts as edges between entity nodes, and an exact vector index over fact texts.

Persistence is one SQLite file (stdlib). The working copy of facts and vectors lives in memory: the vectors are a
float32 numpy matrix searched by exact brute force (a dot product of L2-normalised rows is the cosine), with ties
broken by fact text and then id so two runs rank identically.

Nothing is deleted. Closing sets valid_until, reopening clears it, a rewrite keeps the old text in the event log,
and duplicates are reversible same_as links. Every change is an event row, which is the fact's history for
`Engram.explain` and the source of `Engram.stats`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from engram._exceptions import InvalidInput
from engram._types import Decision, Fact, Message

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, text TEXT NOT NULL, speaker TEXT NOT NULL,
    said_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (id TEXT PRIMARY KEY, label TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, text TEXT NOT NULL,
    subject TEXT NOT NULL REFERENCES entities(id), predicate TEXT NOT NULL,
    object TEXT NOT NULL REFERENCES entities(id), kind TEXT NOT NULL, durability TEXT NOT NULL,
    sensitivity TEXT NOT NULL, temporal_status TEXT NOT NULL, valid_from TEXT NOT NULL, valid_until TEXT,
    belief REAL NOT NULL, tentative INTEGER NOT NULL, confidence REAL NOT NULL, closed_reason TEXT,
    closed_by TEXT, source_message_id TEXT NOT NULL, source_text TEXT, said_at TEXT NOT NULL, refines TEXT,
    disputed INTEGER NOT NULL DEFAULT 0, against_count INTEGER NOT NULL DEFAULT 0, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS facts_subject ON facts(subject, predicate);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, fact_id TEXT NOT NULL, message_id TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS decisions_fact ON decisions(fact_id);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, fact_id TEXT, kind TEXT NOT NULL, message_id TEXT, detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_fact ON events(fact_id);
CREATE TABLE IF NOT EXISTS same_as (
    a TEXT NOT NULL, b TEXT NOT NULL, p REAL NOT NULL, message_id TEXT NOT NULL, PRIMARY KEY (a, b));
"""

# One BLAS thread per search: a matrix-vector product is memory-bound, and on a shared 2-core machine a
# multi-threaded BLAS was measured 6x slower (27 ms vs 4 ms at 10k facts) from oversubscription.
_BLAS = ThreadpoolController()

_FIRST_PERSON = {"i", "me", "my", "myself", "mine", "user", "the user"}
_ENTITY_PATTERN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_ENTITY_STOP = {
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "the",
    "a",
    "an",
    "my",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "his",
    "her",
    "their",
    "our",
    "this",
    "that",
    "user",
    "yes",
    "no",
    "oh",
    "hey",
    "hi",
    "wow",
    "thanks",
    "also",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
}


def normalize_entity(name: str) -> str:
    """Node id of an entity: lowercase, single spaces, no edge punctuation, first person -> "user", no article."""
    text = " ".join(name.lower().split()).strip(" .,'\"")
    if text in _FIRST_PERSON:
        return "user"
    for article in ("the ", "a ", "an "):
        if text.startswith(article):
            return text[len(article) :]
    return text


def named_entities(text: str) -> frozenset[str]:
    """Capitalised word runs, lowercased, minus pronouns, articles, months and weekdays: ent(f) of §3.2."""
    found = set()
    for match in _ENTITY_PATTERN.findall(text):
        words = [w for w in match.lower().split() if w not in _ENTITY_STOP]
        if words:
            found.add(" ".join(words))
    return frozenset(found)


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _dt_required(text: str) -> datetime:
    return datetime.fromisoformat(text)


_FACT_COLUMNS = (
    "seq",
    "id",
    "text",
    "subject",
    "predicate",
    "object",
    "kind",
    "durability",
    "sensitivity",
    "temporal_status",
    "valid_from",
    "valid_until",
    "belief",
    "tentative",
    "confidence",
    "closed_reason",
    "closed_by",
    "source_message_id",
    "source_text",
    "said_at",
    "refines",
    "disputed",
    "against_count",
)


def _fact_row(fact: Fact) -> tuple[Any, ...]:
    return (
        fact.seq,
        fact.id,
        fact.text,
        fact.subject,
        fact.predicate,
        fact.object,
        fact.kind,
        fact.durability,
        fact.sensitivity,
        fact.temporal_status,
        _iso(fact.valid_from),
        _iso(fact.valid_until),
        fact.belief,
        int(fact.tentative),
        fact.confidence,
        fact.closed_reason,
        fact.closed_by,
        fact.source_message_id,
        fact.source_text,
        _iso(fact.said_at),
        fact.refines,
        int(fact.disputed),
        fact.against_count,
    )


def _fact_from_row(row: Sequence[Any]) -> Fact:
    values = dict(zip(_FACT_COLUMNS, row))
    return Fact(
        id=values["id"],
        text=values["text"],
        subject=values["subject"],
        predicate=values["predicate"],
        object=values["object"],
        kind=values["kind"],
        durability=values["durability"],
        sensitivity=values["sensitivity"],
        temporal_status=values["temporal_status"],
        valid_from=_dt_required(values["valid_from"]),
        valid_until=_dt(values["valid_until"]),
        belief=values["belief"],
        tentative=bool(values["tentative"]),
        confidence=values["confidence"],
        closed_reason=values["closed_reason"],
        closed_by=values["closed_by"],
        source_message_id=values["source_message_id"],
        source_text=values["source_text"],
        said_at=_dt_required(values["said_at"]),
        refines=values["refines"],
        disputed=bool(values["disputed"]),
        against_count=values["against_count"],
        seq=values["seq"],
    )


class Store:
    """SQLite-backed facts with an in-memory exact vector index. Not thread-safe: engram writes sequentially."""

    def __init__(self, path: str | Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a commit survives a crash of the process (not of the machine) and costs no fsync.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._check_dim()
        self._facts: dict[str, Fact] = {}
        self._ids: list[str] = []  # row of the vector matrix -> fact id
        self._row: dict[str, int] = {}
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._candidate_mask = np.zeros(0, dtype=bool)  # open, or closed by belief (so it can reopen)
        self._by_subject_predicate: dict[tuple[str, str], list[str]] = defaultdict(list)
        self._by_predicate: dict[str, list[str]] = defaultdict(list)
        self._by_entity: dict[str, set[str]] = defaultdict(set)
        self._entities_of: dict[str, frozenset[str]] = {}
        self._closed_by: dict[str, list[str]] = defaultdict(list)
        self._same_as: dict[str, set[str]] = defaultdict(set)
        self._in_transaction = False
        self._load()

    # ---- lifecycle -------------------------------------------------------------------------------------------

    def _check_dim(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('dim', ?)", (str(self.dim),))
        elif int(row[0]) != self.dim:
            raise InvalidInput(f"{self.path}: store holds {row[0]}-dim vectors, the embedder makes {self.dim}")

    def _load(self) -> None:
        rows = self._db.execute(f"SELECT {', '.join(_FACT_COLUMNS)}, embedding FROM facts ORDER BY seq").fetchall()
        vectors = [np.frombuffer(r[-1], dtype=np.float32) for r in rows]
        facts = [_fact_from_row(r[:-1]) for r in rows]
        self._index(facts, np.vstack(vectors) if vectors else np.zeros((0, self.dim), dtype=np.float32))
        for a, b in self._db.execute("SELECT a, b FROM same_as"):
            self._same_as[a].add(b)
            self._same_as[b].add(a)

    def _index(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        start = len(self._ids)
        needed = start + len(facts)
        if needed > self._matrix.shape[0]:
            capacity = max(needed, 2 * self._matrix.shape[0], 64)
            grown = np.zeros((capacity, self.dim), dtype=np.float32)
            grown[:start] = self._matrix[:start]
            self._matrix = grown
            mask = np.zeros(capacity, dtype=bool)
            mask[:start] = self._candidate_mask[:start]
            self._candidate_mask = mask
        self._matrix[start:needed] = vectors
        for offset, fact in enumerate(facts):
            self._facts[fact.id] = fact
            self._row[fact.id] = start + offset
            self._ids.append(fact.id)
            self._candidate_mask[start + offset] = self._is_candidate(fact)
            self._by_subject_predicate[(fact.subject, fact.predicate)].append(fact.id)
            self._by_predicate[fact.predicate].append(fact.id)
            entities = named_entities(fact.text)
            self._entities_of[fact.id] = entities
            for entity in entities:
                self._by_entity[entity].add(fact.id)
            if fact.closed_by:
                self._closed_by[fact.closed_by].append(fact.id)

    @staticmethod
    def _is_candidate(fact: Fact) -> bool:
        return fact.valid_until is None or fact.closed_reason == "belief"

    def close_db(self) -> None:
        self._db.close()

    def transaction(self) -> _Transaction:
        """All writes of one message commit together, so a crash never leaves a half-written message."""
        return _Transaction(self)

    # ---- messages --------------------------------------------------------------------------------------------

    def add_message(self, message: Message) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO messages (id, text, speaker, said_at) VALUES (?, ?, ?, ?)",
            (message.id, message.text, message.speaker, _iso(message.when)),
        )

    def has_message(self, message_id: str) -> bool:
        return self._db.execute("SELECT 1 FROM messages WHERE id = ?", (message_id,)).fetchone() is not None

    def recent_messages(self, n: int) -> list[Message]:
        rows = self._db.execute(
            "SELECT id, text, speaker, said_at FROM messages ORDER BY seq DESC LIMIT ?", (n,)
        ).fetchall()
        return [Message(id=r[0], text=r[1], speaker=r[2], when=_dt_required(r[3])) for r in reversed(rows)]

    def message_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]

    # ---- facts -----------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, fact_id: str) -> bool:
        return fact_id in self._facts

    def get(self, fact_id: str) -> Fact:
        return self._facts[fact_id]

    def next_seq(self) -> int:
        return len(self._ids) + 1

    def all_facts(self) -> list[Fact]:
        return [self._facts[i] for i in self._ids]

    def add_facts(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Insert facts with their vectors (rows L2-normalised); entities become nodes."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(facts), self.dim)
        entity_rows = {(f.subject,) for f in facts} | {(f.object,) for f in facts}
        self._db.executemany(
            "INSERT OR IGNORE INTO entities (id, label) VALUES (?, ?)", [(e[0], e[0]) for e in sorted(entity_rows)]
        )
        placeholders = ", ".join("?" for _ in range(len(_FACT_COLUMNS) + 1))
        self._db.executemany(
            f"INSERT INTO facts ({', '.join(_FACT_COLUMNS)}, embedding) VALUES ({placeholders})",
            [(*_fact_row(f), v.tobytes()) for f, v in zip(facts, vectors)],
        )
        self._index(facts, vectors)

    def _replace(self, fact: Fact, **changes: Any) -> Fact:
        updated = replace(fact, **changes)
        assignments = ", ".join(f"{name} = ?" for name in changes)
        values = [
            _iso(v) if isinstance(v, datetime) else (int(v) if isinstance(v, bool) else v) for v in changes.values()
        ]
        self._db.execute(f"UPDATE facts SET {assignments} WHERE id = ?", (*values, fact.id))
        self._facts[fact.id] = updated
        self._candidate_mask[self._row[fact.id]] = self._is_candidate(updated)
        return updated

    def set_belief(self, fact_id: str, belief: float, *, against_pieces: int = 0) -> Fact:
        fact = self._facts[fact_id]
        return self._replace(fact, belief=belief, against_count=fact.against_count + against_pieces)

    def mark_disputed(self, fact_id: str) -> Fact:
        return self._replace(self._facts[fact_id], disputed=True)

    def close(self, fact_id: str, when: datetime, reason: str, by: str | None) -> bool:
        """Set valid_until (conversation time); only an open fact closes. Returns whether it closed."""
        fact = self._facts[fact_id]
        if fact.valid_until is not None:
            return False
        self._replace(fact, valid_until=when, closed_reason=reason, closed_by=by)
        if by:
            self._closed_by[by].append(fact_id)
        return True

    def reopen(self, fact_id: str) -> bool:
        fact = self._facts[fact_id]
        if fact.valid_until is None:
            return False
        if fact.closed_by and fact_id in self._closed_by.get(fact.closed_by, []):
            self._closed_by[fact.closed_by].remove(fact_id)
        self._replace(fact, valid_until=None, closed_reason=None, closed_by=None)
        return True

    def rewrite(self, fact_id: str, text: str, vector: np.ndarray) -> Fact:
        """Replace a fact's text (a mem0 UPDATE); the caller logs the old text as an event, so nothing is lost."""
        fact = self._replace(self._facts[fact_id], text=text)
        row = self._row[fact_id]
        self._matrix[row] = np.asarray(vector, dtype=np.float32).reshape(self.dim)
        self._db.execute("UPDATE facts SET embedding = ? WHERE id = ?", (self._matrix[row].tobytes(), fact_id))
        for entity in self._entities_of[fact_id]:
            self._by_entity[entity].discard(fact_id)
        self._entities_of[fact_id] = named_entities(text)
        for entity in self._entities_of[fact_id]:
            self._by_entity[entity].add(fact_id)
        return fact

    def superseded_by(self, fact_id: str) -> list[str]:
        """Facts this fact closed (belief, superseded or fulfilled), in closing order."""
        return list(self._closed_by.get(fact_id, []))

    # ---- vector search ---------------------------------------------------------------------------------------

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """s_cos(v, u) for every stored fact u, by row."""
        n = len(self._ids)
        with _BLAS.limit(limits=1, user_api="blas"):
            return self._matrix[:n] @ np.asarray(vector, dtype=np.float32).reshape(self.dim)

    def top(
        self, scores: np.ndarray, k: int, *, candidates_only: bool = False, exclude: Iterable[str] = ()
    ) -> list[tuple[str, float]]:
        """The k best rows of `scores`, exact, ties broken by fact text then id."""
        n = len(self._ids)
        if n == 0 or k <= 0:
            return []
        masked = scores.astype(np.float32, copy=True)
        if candidates_only:
            masked[~self._candidate_mask[:n]] = -np.inf
        for fact_id in exclude:
            row = self._row.get(fact_id)
            if row is not None:
                masked[row] = -np.inf
        if k < n:
            part = np.argpartition(-masked, k - 1)[:k]
            kth = masked[part].min()
            rows = np.nonzero(masked >= kth)[0]  # every row tied with the k-th stays in the running
        else:
            rows = np.arange(n)
        finite = [int(r) for r in rows if np.isfinite(masked[r])]
        finite.sort(key=lambda r: (-float(masked[r]), self._facts[self._ids[r]].text, self._ids[r]))
        return [(self._ids[r], float(masked[r])) for r in finite[:k]]

    def top_among(self, scores: np.ndarray, fact_ids: Iterable[str], k: int) -> list[str]:
        """The k best of the given facts by score, ties by text then id (numpy selection: G(f) can be large)."""
        rows = np.fromiter((self._row[i] for i in fact_ids), dtype=np.int64)
        if rows.size == 0 or k <= 0:
            return []
        values = scores[rows]
        if rows.size > k:
            kth = np.partition(values, rows.size - k)[rows.size - k]
            keep = values >= kth  # every row tied with the k-th stays in the running
            rows, values = rows[keep], values[keep]
        order = sorted(
            range(rows.size),
            key=lambda j: (-float(values[j]), self._facts[self._ids[rows[j]]].text, self._ids[rows[j]]),
        )
        return [self._ids[rows[j]] for j in order[:k]]

    def score_of(self, scores: np.ndarray, fact_id: str) -> float:
        return float(scores[self._row[fact_id]])

    # ---- graph -----------------------------------------------------------------------------------------------

    def siblings(self, subject: str, predicate: str) -> list[str]:
        return list(self._by_subject_predicate.get((subject, predicate), []))

    def with_predicate(self, predicate: str) -> list[str]:
        return list(self._by_predicate.get(predicate, []))

    def entities_of(self, fact_id: str) -> frozenset[str]:
        return self._entities_of.get(fact_id, frozenset())

    def facts_with_entity(self, entity: str) -> set[str]:
        return self._by_entity.get(entity, set())

    def is_candidate(self, fact_id: str) -> bool:
        return bool(self._candidate_mask[self._row[fact_id]])

    def candidate_count(self) -> int:
        return int(self._candidate_mask[: len(self._ids)].sum())

    # ---- same_as ---------------------------------------------------------------------------------------------

    def link_same_as(self, a: str, b: str, p: float, message_id: str) -> None:
        first, second = sorted((a, b))
        self._db.execute("INSERT OR REPLACE INTO same_as VALUES (?, ?, ?, ?)", (first, second, p, message_id))
        self._same_as[a].add(b)
        self._same_as[b].add(a)

    def unlink_same_as(self, a: str, b: str) -> None:
        first, second = sorted((a, b))
        self._db.execute("DELETE FROM same_as WHERE a = ? AND b = ?", (first, second))
        self._same_as[a].discard(b)
        self._same_as[b].discard(a)

    def directly_linked(self, a: str, b: str) -> bool:
        return b in self._same_as.get(a, ())

    def same_as_cluster(self, fact_id: str) -> list[str]:
        seen, frontier = {fact_id}, [fact_id]
        while frontier:
            for other in self._same_as.get(frontier.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    frontier.append(other)
        return sorted(seen, key=lambda i: self._facts[i].seq)

    def same_as_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM same_as").fetchone()[0]

    # ---- audit trail -----------------------------------------------------------------------------------------

    def add_decisions(self, fact_id: str, message_id: str, decisions: Iterable[Decision]) -> None:
        self._db.executemany(
            "INSERT INTO decisions (fact_id, message_id, body) VALUES (?, ?, ?)",
            [(fact_id, message_id, json.dumps(d.to_json(), sort_keys=True)) for d in decisions],
        )

    def decisions(self, fact_id: str) -> list[Decision]:
        rows = self._db.execute("SELECT body FROM decisions WHERE fact_id = ? ORDER BY seq", (fact_id,))
        return [Decision.from_json(json.loads(r[0])) for r in rows]

    def log(self, kind: str, fact_id: str | None, message_id: str | None, **detail: Any) -> None:
        self._db.execute(
            "INSERT INTO events (fact_id, kind, message_id, detail) VALUES (?, ?, ?, ?)",
            (fact_id, kind, message_id, json.dumps(detail, sort_keys=True, default=str)),
        )

    def events(self, fact_id: str) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT kind, message_id, detail FROM events WHERE fact_id = ? ORDER BY seq", (fact_id,)
        )
        return [{"event": kind, "message_id": mid, **json.loads(detail)} for kind, mid, detail in rows]

    def event_counts(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())

    def close_counts(self) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT json_extract(detail, '$.reason'), COUNT(*) FROM events WHERE kind = 'close' GROUP BY 1"
        )
        return {reason: count for reason, count in rows}


class _Transaction:
    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> Store:
        if self.store._in_transaction:
            raise RuntimeError("store transactions do not nest")
        self.store._db.execute("BEGIN")
        self.store._in_transaction = True
        return self.store

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.store._in_transaction = False
        if exc_type is None:
            self.store._db.execute("COMMIT")
        else:
            # The in-memory copy may now be ahead of the file; the caller must reopen the store.
            self.store._db.execute("ROLLBACK")
