"""The store M_t = (F_t, V_t, I_t): facts as edges between entity nodes, and an exact vector index over fact texts.

Persistence is one SQLite file (stdlib) and, beside it, `<file>.vectors`: every fact's vector as raw float32 rows in
fact order, so opening reads them into memory in one call. SQLite says which rows exist (a fact's row is its seq
- 1): a message's new vectors are written to the file before its transaction commits, so a crash leaves at most
rows beyond the last committed fact, which the next write overwrites and the next open ignores. A rewritten vector
is also kept in SQLite (`vector_rewrites`, inside the transaction) and laid over the file's row on open.

In memory, the vectors are one float32 matrix grown by doubling, searched by exact brute force (a dot product of
L2-normalised rows is the cosine), with ties broken by fact text and then id so two runs rank identically. A Fact
object is built from its row the first time it is asked for, and the graph's lookups (facts by subject and
relation, by relation, by entity) are read from SQLite's indexes the first time each key is asked for.

Nothing is deleted. Closing sets valid_until, reopening clears it, a rewrite keeps the old text in the event log,
and duplicates are reversible same_as links. Every change is an event row, which is the fact's history for
`Engram.explain` and the source of `Engram.stats`.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from engram._exceptions import InvalidInput
from engram._render import render_parts
from engram._types import Decision, Fact, Message, assemble

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
    disputed INTEGER NOT NULL DEFAULT 0, against_count INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS facts_subject ON facts(subject, predicate);
CREATE INDEX IF NOT EXISTS facts_predicate ON facts(predicate);
CREATE INDEX IF NOT EXISTS facts_closed ON facts(seq) WHERE valid_until IS NOT NULL;
CREATE TABLE IF NOT EXISTS fact_entities (entity TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS fact_entities_entity ON fact_entities(entity);
CREATE TABLE IF NOT EXISTS vector_rewrites (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
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
_BLAS_LIBS = _BLAS.select(user_api="blas").lib_controllers


class _one_blas_thread:
    """`_BLAS.limit(limits=1, user_api="blas")` for the same libraries through their threadpoolctl controllers, in a
    few microseconds (threadpoolctl reads every library's full info on entry; a read at 10k facts is ~1.5 ms). A plain
    class rather than a contextlib generator, whose machinery alone cost ~10 us cold right after the pass."""

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        self._saved = [(lib, threads) for lib in _BLAS_LIBS if (threads := lib.get_num_threads()) != 1]
        for lib, _ in self._saved:
            lib.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        for lib, threads in self._saved:
            lib.set_num_threads(threads)


_GATHER_MIN_ROWS = 64
# Values per block when looking for the k best of many (`_near_top`).
_BLOCK = 256
# Rows per block of `scores_few` (768 KB of 384-dim vectors, in a core's L2 cache while every vector reads it):
# 13.5 ms for two vectors at 100k facts, against 13.9 at 256 rows, 14.6 at 128, 15.8 for two gemv calls per block
# and 12.3 for one vector's pass.
_FEW_ROWS = 512
# How `scores_few` reads the stored vectors is measured, not assumed: the blocked product above is ~1.1 passes with
# OpenBLAS's SkylakeX kernel, but its general kernel for a few columns is slower than two plain passes under others
# (Haswell: `add_many` measured slower than `add`, which makes two passes). So the first call on a store of at least
# BATCH_MIN_ROWS facts times both ways on this machine and keeps the faster; it measures again once the store has
# grown fourfold (caches change the answer). Either way the picks are exact (`make_exact`), so the choice changes
# timing only, never a result.
_FEW_REMEASURE_GROWTH = 4
_FEW_TIMING_REPEATS = 3
# Below this many facts a batch of queries is searched one query at a time: a pass is cheap there, and BLAS may
# sum a short matrix's rows in another order than a gathered block's.
BATCH_MIN_ROWS = 1024


def _fastest(work: Callable[[], object]) -> float:
    """The least wall time of a few runs of `work` (the least is the one least disturbed by the rest of the machine)."""
    times = []
    for _ in range(_FEW_TIMING_REPEATS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


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


# json.dumps(value, sort_keys=True[, default=str]) with the encoder built once: json.dumps builds a new encoder on
# every call with these arguments, which was a third of the time of the few dozen rows a message writes. The same
# encoder class and settings, so the text is the same.
_decision_json = json.JSONEncoder(sort_keys=True).encode
_event_json = json.JSONEncoder(sort_keys=True, default=str).encode


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def _day(when: datetime | None) -> str | None:
    return None if when is None else when.date().isoformat()


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


# What a stored fact's life changes (belief, closing and reopening, disputes, a rewrite); the rest never does.
_MUTABLE_COLUMNS = ("text", "valid_until", "belief", "closed_reason", "closed_by", "disputed", "against_count")
_UPDATE_MUTABLE = f"UPDATE facts SET {', '.join(f'{name} = ?' for name in _MUTABLE_COLUMNS)} WHERE seq = ?"


def _mutable_row(fact: Fact) -> tuple[Any, ...]:
    """`_UPDATE_MUTABLE`'s parameters: the `_MUTABLE_COLUMNS` as `_fact_row` writes them, then the seq (a message
    updates a dozen or more facts, and building the whole row of each was most of the UPDATE's Python time)."""
    return (
        fact.text,
        _iso(fact.valid_until),
        fact.belief,
        fact.closed_reason,
        fact.closed_by,
        int(fact.disputed),
        fact.against_count,
        fact.seq,
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
    """The Fact of a row in `_FACT_COLUMNS` order, its fields in Fact's order (`assemble`: a search builds up to 30
    facts it has not read before)."""
    (
        seq,
        fact_id,
        text,
        subject,
        predicate,
        obj,
        kind,
        durability,
        sensitivity,
        temporal_status,
        valid_from,
        valid_until,
        belief,
        tentative,
        confidence,
        closed_reason,
        closed_by,
        source_message_id,
        source_text,
        said_at,
        refines,
        disputed,
        against_count,
    ) = row
    return assemble(
        Fact,
        id=fact_id,
        text=text,
        subject=subject,
        predicate=predicate,
        object=obj,
        kind=kind,
        durability=durability,
        sensitivity=sensitivity,
        temporal_status=temporal_status,
        valid_from=_dt_required(valid_from),
        valid_until=_dt(valid_until),
        belief=belief,
        tentative=bool(tentative),
        confidence=confidence,
        closed_reason=closed_reason,
        closed_by=closed_by,
        source_message_id=source_message_id,
        source_text=source_text,
        said_at=_dt_required(said_at),
        refines=refines,
        disputed=bool(disputed),
        against_count=against_count,
        seq=seq,
    )


def _near_top(values: np.ndarray, k: int, margin: float = 0.0) -> np.ndarray:
    """Positions, ascending, that include every one whose value is at least the k-th largest minus `margin`: the
    k best are then picked among these few instead of partitioning all of `values` (at 100k facts that partition
    costs about a tenth of the pass). The k-th largest of the blocks' maxima (the last block may be short) is at
    most the k-th largest value (k distinct rows reach it), so nothing below it minus the margin can be among them.
    Every position when there are fewer than k blocks or a NaN (whose order the callers' partition decides).
    Few numpy calls, each on few values: right after the pass every call starts cold (a read at 10k facts spent
    ~40 us here)."""
    n = values.shape[0]
    if -(-n // _BLOCK) < k:
        return np.arange(n)
    # a NaN anywhere makes its block's max NaN; the maxima are few, so they are ordered in Python
    maxima = np.maximum.reduceat(values, _block_starts(n)).tolist()
    if any(m != m for m in maxima):
        return np.arange(n)
    maxima.sort()
    bound = maxima[len(maxima) - k]  # exactly the float32 maximum, as a Python float
    if margin == 0.0:
        return np.flatnonzero(values >= bound)
    # float32 rounding is monotone, so bound <= k-th also holds after subtracting the same margin in float32
    return np.flatnonzero(values >= np.float32(bound) - margin)


@lru_cache(maxsize=4)
def _block_starts(n: int) -> np.ndarray:
    return np.arange(0, n, _BLOCK)


class _Rows:
    """A growing list of row numbers kept in a numpy buffer (doubling), read as an array without a copy."""

    def __init__(self, rows: Sequence[int]) -> None:
        self._buffer = np.array(rows, dtype=np.int64).reshape(-1)
        self._count = self._buffer.size

    def append(self, row: int) -> None:
        if self._count == self._buffer.size:
            grown = np.zeros(max(16, 2 * self._buffer.size), dtype=np.int64)
            grown[: self._count] = self._buffer[: self._count]
            self._buffer = grown
        self._buffer[self._count] = row
        self._count += 1

    def remove(self, row: int) -> None:
        kept = self.array()[self.array() != row]
        self._buffer, self._count = kept.copy(), kept.size

    def array(self) -> np.ndarray:
        return self._buffer[: self._count]

    def __len__(self) -> int:
        return self._count


class Store:
    """SQLite-backed facts with an in-memory exact vector index. Not thread-safe: engram writes sequentially.

    Opening reads only what search and the graph need (ids, subject and relation, entities, open/closed, and the
    vectors into one contiguous float32 matrix); a `Fact` is built from its row the first time it is asked for.
    """

    def __init__(self, path: str | Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a commit survives a crash of the process (not of the machine) and costs no fsync.
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint the WAL every ~40 MB rather than every 4 MB: each message rewrites the same few right-edge
        # pages, so a rarer checkpoint copies far fewer pages per message into the database file.
        self._db.execute("PRAGMA wal_autocheckpoint=10000")
        self._db.executescript(_SCHEMA)
        self._check_dim()
        self.vectors_path = self.path.with_name(self.path.name + ".vectors")
        self._facts: dict[str, Fact] = {}  # the facts built so far (every change goes to the row and here)
        self._ids: list[str] = []  # row of the vector matrix -> fact id
        self._row: dict[str, int] = {}
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._candidate_mask = np.zeros(0, dtype=bool)  # open, or closed by belief (so it can reopen)
        self._open_mask = np.zeros(0, dtype=bool)
        self._max_norm = 0.0  # the largest stored vector norm, for the rounding margin of batched search
        # (rows when `scores_few`'s two ways were last timed, whether one pass per vector won): see `_FEW_ROWS`
        self._few_choice: tuple[int, bool] = (0, False)
        # The read path's columns, by row, loaded at open and kept up to date with every change: what a search asks
        # the decider about and renders for its shortlist, so a read builds no Fact (fetching and building up to 30
        # facts it has not read before was a quarter of a read at 10k facts). Dates are YYYY-MM-DD, one string
        # object per distinct date.
        self._text: list[str] = []
        self._source_text: list[str | None] = []
        self._belief: list[float] = []
        self._said_day: list[str] = []
        self._from_day: list[str] = []
        self._until_day: list[str | None] = []
        # Graph lookups, filled per key on first use from SQLite's indexes, then kept up to date (rows).
        self._by_subject_predicate: dict[tuple[str, str], _Rows] = {}
        self._by_predicate: dict[str, _Rows] = {}
        self._by_entity: dict[str, _Rows] = {}
        self._closed_by: dict[str, list[str]] = defaultdict(list)
        self._same_as: dict[str, set[str]] = defaultdict(set)
        self._in_transaction = False
        # Inside a transaction, event and decision rows and changed facts wait here and are written with one
        # statement per table at commit (a message's write touches dozens of rows; one execute each was most
        # of the SQLite time). Every read of those tables flushes first.
        self._pending_events: list[tuple[str | None, str, str | None, str]] = []
        self._pending_decisions: list[tuple[str, str, str]] = []
        self._pending_rewrites: dict[int, bytes] = {}
        self._dirty: set[str] = set()
        self._rewritten_rows: list[int] = []  # every row `rewrite` gave a new vector, in order (see `rescore`)
        self._legacy_blobs = "embedding" in {row[1] for row in self._db.execute("PRAGMA table_info(facts)")}
        if self._legacy_blobs:
            self._upgrade_legacy()
        self._vectors = open(self.vectors_path, "r+b" if self.vectors_path.exists() else "w+b")
        self._load()

    # ---- lifecycle -------------------------------------------------------------------------------------------

    def _upgrade_legacy(self) -> None:
        """A store written when vectors were BLOBs in the facts table: write its vectors file and entity rows once
        (new rows then leave that column empty)."""
        if self._db.execute("SELECT 1 FROM meta WHERE key = 'vectors_file'").fetchone() is not None:
            return
        with self.transaction():
            with open(self.vectors_path, "wb") as out:
                for (blob,) in self._db.execute("SELECT embedding FROM facts ORDER BY seq"):
                    out.write(blob)
            rows = self._db.execute("SELECT seq, text FROM facts ORDER BY seq").fetchall()
            self._db.executemany(
                "INSERT INTO fact_entities (entity, seq) VALUES (?, ?)",
                [(e, seq) for seq, text in rows for e in sorted(named_entities(text))],
            )
            self._db.execute("INSERT INTO meta VALUES ('vectors_file', '1')")

    def _check_dim(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('dim', ?)", (str(self.dim),))
        elif int(row[0]) != self.dim:
            raise InvalidInput(f"{self.path}: store holds {row[0]}-dim vectors, the embedder makes {self.dim}")

    def _load(self) -> None:
        self._ids = [fact_id for (fact_id,) in self._db.execute("SELECT id FROM facts ORDER BY seq")]
        n = len(self._ids)
        self._row = dict(zip(self._ids, range(n)))
        self._grow(n)
        self._read_vectors(n)
        for seq, blob in self._db.execute("SELECT seq, embedding FROM vector_rewrites"):
            self._matrix[seq - 1] = np.frombuffer(blob, dtype=np.float32)
        self._note_norms(self._matrix[:n])
        self._open_mask[:n] = True
        self._candidate_mask[:n] = True
        days: dict[str, str] = {}

        def day(stamp: str) -> str:  # an isoformat datetime starts with its date's isoformat
            return days.setdefault(stamp[:10], stamp[:10])

        columns = "SELECT text, source_text, belief, said_at, valid_from, valid_until FROM facts ORDER BY seq"
        for text, source_text, belief, said_at, valid_from, valid_until in self._db.execute(columns):
            self._text.append(text)
            self._source_text.append(source_text)
            self._belief.append(belief)
            self._said_day.append(day(said_at))
            self._from_day.append(day(valid_from))
            self._until_day.append(None if valid_until is None else day(valid_until))
        closed = "SELECT seq, id, closed_reason, closed_by FROM facts WHERE valid_until IS NOT NULL ORDER BY seq"
        for seq, fact_id, reason, closed_by in self._db.execute(closed):
            self._open_mask[seq - 1] = False
            self._candidate_mask[seq - 1] = reason == "belief"
            if closed_by:
                self._closed_by[closed_by].append(fact_id)
        for a, b in self._db.execute("SELECT a, b FROM same_as"):
            self._same_as[a].add(b)
            self._same_as[b].add(a)

    def _read_vectors(self, n: int) -> None:
        """The first n rows of the vectors file, straight into the matrix (rows past n were never committed)."""
        row_bytes = 4 * self.dim
        size = self.vectors_path.stat().st_size
        if size < n * row_bytes:
            raise InvalidInput(
                f"{self.vectors_path}: holds {size // row_bytes} vectors; expected one per stored fact, {n}"
            )
        if n:
            self._vectors.seek(0)
            flat = self._matrix[:n].reshape(-1).view(np.uint8)  # the matrix's own memory: no copy
            self._vectors.readinto(memoryview(flat))  # type: ignore[arg-type]

    def _write_vectors(self, start: int, vectors: np.ndarray) -> None:
        """Rows from `start` on, flushed to the OS before the transaction that adds their facts commits."""
        self._vectors.seek(start * 4 * self.dim)
        self._vectors.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        self._vectors.flush()

    def _grow(self, needed: int) -> None:
        """Room for `needed` rows: the matrix and masks double, so appending stays amortised O(1) per row."""
        if needed <= self._matrix.shape[0]:
            return
        start = min(len(self._ids), self._matrix.shape[0])  # the rows filled so far
        capacity = max(needed, 2 * self._matrix.shape[0], 64)
        grown = np.zeros((capacity, self.dim), dtype=np.float32)
        grown[:start] = self._matrix[:start]
        self._matrix = grown
        for name in ("_candidate_mask", "_open_mask"):
            mask = np.zeros(capacity, dtype=bool)
            mask[:start] = getattr(self, name)[:start]
            setattr(self, name, mask)

    def _note_norms(self, vectors: np.ndarray) -> None:
        if len(vectors):
            self._max_norm = max(self._max_norm, float(np.sqrt(np.einsum("ij,ij->i", vectors, vectors).max())))

    @staticmethod
    def _is_candidate(fact: Fact) -> bool:
        return fact.valid_until is None or fact.closed_reason == "belief"

    def close_db(self) -> None:
        self.flush()
        self._db.close()
        self._vectors.close()

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
        return fact_id in self._row

    def get(self, fact_id: str) -> Fact:
        fact = self._facts.get(fact_id)
        if fact is None:
            if fact_id not in self._row:
                raise KeyError(fact_id)
            self._build([fact_id])
            fact = self._facts[fact_id]
        return fact

    def _build(self, fact_ids: Sequence[str]) -> None:
        """Build the Facts of these ids from their rows, in one query per 500 ids."""
        missing = [i for i in fact_ids if i not in self._facts]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            query = f"SELECT {', '.join(_FACT_COLUMNS)} FROM facts WHERE seq IN ({marks})"
            for row in self._db.execute(query, [self._row[i] + 1 for i in chunk]):
                fact = _fact_from_row(row)
                self._facts[fact.id] = fact

    def next_seq(self) -> int:
        return len(self._ids) + 1

    def all_facts(self) -> list[Fact]:
        if len(self._facts) < len(self._ids):
            query = f"SELECT {', '.join(_FACT_COLUMNS)} FROM facts ORDER BY seq"
            for row in self._db.execute(query):
                if row[1] not in self._facts:
                    self._facts[row[1]] = _fact_from_row(row)
        return [self._facts[i] for i in self._ids]

    def add_facts(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Insert facts with their vectors (rows L2-normalised); entities become nodes. Each fact's seq must be
        `next_seq()` in turn: its row in the vector matrix is seq - 1."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(facts), self.dim)
        start = len(self._ids)
        for offset, fact in enumerate(facts):
            if fact.seq != start + offset + 1:
                raise ValueError(f"fact {fact.id}: seq {fact.seq}; expected {start + offset + 1} (next_seq())")
        self._write_vectors(start, vectors)
        entity_rows = {(f.subject,) for f in facts} | {(f.object,) for f in facts}
        self._db.executemany(
            "INSERT OR IGNORE INTO entities (id, label) VALUES (?, ?)", [(e[0], e[0]) for e in sorted(entity_rows)]
        )
        columns = list(_FACT_COLUMNS) + (["embedding"] if self._legacy_blobs else [])
        extra = (b"",) if self._legacy_blobs else ()
        self._db.executemany(
            f"INSERT INTO facts ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
            [(*_fact_row(f), *extra) for f in facts],
        )
        found = [named_entities(f.text) for f in facts]
        self._db.executemany(
            "INSERT INTO fact_entities (entity, seq) VALUES (?, ?)",
            [(e, f.seq) for f, es in zip(facts, found) for e in sorted(es)],
        )
        self._grow(start + len(facts))
        self._matrix[start : start + len(facts)] = vectors
        self._note_norms(vectors)
        for offset, (fact, entities) in enumerate(zip(facts, found)):
            row = start + offset
            self._facts[fact.id] = fact
            self._row[fact.id] = row
            self._ids.append(fact.id)
            self._text.append(fact.text)
            self._source_text.append(fact.source_text)
            self._belief.append(fact.belief)
            self._said_day.append(fact.said_at.date().isoformat())
            self._from_day.append(fact.valid_from.date().isoformat())
            self._until_day.append(_day(fact.valid_until))
            self._open_mask[row] = fact.valid_until is None
            self._candidate_mask[row] = self._is_candidate(fact)
            if (fact.subject, fact.predicate) in self._by_subject_predicate:
                self._by_subject_predicate[(fact.subject, fact.predicate)].append(row)
            if fact.predicate in self._by_predicate:
                self._by_predicate[fact.predicate].append(row)
            for entity in entities:
                if entity in self._by_entity:
                    self._by_entity[entity].append(row)
            if fact.closed_by:
                self._closed_by[fact.closed_by].append(fact.id)

    def _replace(self, fact: Fact, **changes: Any) -> Fact:
        if not set(changes) <= set(_MUTABLE_COLUMNS):
            raise ValueError(f"fact {fact.id}: {sorted(set(changes) - set(_MUTABLE_COLUMNS))} never change")
        # dataclasses.replace re-runs __init__ over every field and copy.copy goes through __reduce_ex__, each
        # several times slower (a message changes a dozen facts).
        updated = assemble(Fact, **{**fact.__dict__, **changes})
        self._facts[fact.id] = updated
        self._dirty.add(fact.id)
        self._write_through()
        row = self._row[fact.id]
        self._text[row], self._belief[row] = updated.text, updated.belief
        self._until_day[row] = _day(updated.valid_until)
        self._candidate_mask[row] = self._is_candidate(updated)
        self._open_mask[row] = updated.is_open
        return updated

    def set_belief(self, fact_id: str, belief: float, *, against_pieces: int = 0) -> Fact:
        fact = self.get(fact_id)
        return self._replace(fact, belief=belief, against_count=fact.against_count + against_pieces)

    def mark_disputed(self, fact_id: str) -> Fact:
        return self._replace(self.get(fact_id), disputed=True)

    def close(self, fact_id: str, when: datetime, reason: str, by: str | None) -> bool:
        """Set valid_until (conversation time); only an open fact closes. Returns whether it closed."""
        fact = self.get(fact_id)
        if fact.valid_until is not None:
            return False
        self._replace(fact, valid_until=when, closed_reason=reason, closed_by=by)
        if by:
            self._closed_by[by].append(fact_id)
        return True

    def reopen(self, fact_id: str) -> bool:
        fact = self.get(fact_id)
        if fact.valid_until is None:
            return False
        if fact.closed_by and fact_id in self._closed_by.get(fact.closed_by, []):
            self._closed_by[fact.closed_by].remove(fact_id)
        self._replace(fact, valid_until=None, closed_reason=None, closed_by=None)
        return True

    def rewrite(self, fact_id: str, text: str, vector: np.ndarray) -> Fact:
        """Replace a fact's text (a mem0 UPDATE); the caller logs the old text as an event, so nothing is lost."""
        old = self.get(fact_id)
        fact = self._replace(old, text=text)
        row = self._row[fact_id]
        self._matrix[row] = np.asarray(vector, dtype=np.float32).reshape(self.dim)
        self._note_norms(self._matrix[row : row + 1])
        blob = self._matrix[row].tobytes()
        self._db.execute("INSERT OR REPLACE INTO vector_rewrites (seq, embedding) VALUES (?, ?)", (row + 1, blob))
        self._pending_rewrites[row] = blob  # the file's row follows once this commits
        self._rewritten_rows.append(row)
        before, after = named_entities(old.text), named_entities(text)
        self._db.execute("DELETE FROM fact_entities WHERE seq = ?", (row + 1,))
        self._db.executemany(
            "INSERT INTO fact_entities (entity, seq) VALUES (?, ?)", [(e, row + 1) for e in sorted(after)]
        )
        for entity in before:
            if entity in self._by_entity:
                self._by_entity[entity].remove(row)
        for entity in after:
            if entity in self._by_entity:
                self._by_entity[entity].append(row)
        if not self._in_transaction:
            self._apply_rewrites()
        return fact

    def _apply_rewrites(self) -> None:
        for row, blob in self._pending_rewrites.items():
            self._vectors.seek(row * 4 * self.dim)
            self._vectors.write(blob)
        if self._pending_rewrites:
            self._vectors.flush()
        self._pending_rewrites = {}

    def superseded_any(self, fact_id: str) -> bool:
        """Whether this fact closed any (most facts did not; a read asks for every line)."""
        return bool(self._closed_by.get(fact_id))

    def superseded_by(self, fact_id: str) -> list[str]:
        """Facts this fact closed (belief, superseded or fulfilled), in closing order."""
        return list(self._closed_by.get(fact_id, []))

    # ---- vector search ---------------------------------------------------------------------------------------

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """s_cos(v, u) for every stored fact u, by row: one exact float32 matrix-vector pass."""
        n = len(self._ids)
        with _one_blas_thread():
            return self._matrix[:n] @ np.asarray(vector, dtype=np.float32).reshape(self.dim)

    def rewrite_count(self) -> int:
        """How many vectors `rewrite` has replaced so far (a mark for `rescore`)."""
        return len(self._rewritten_rows)

    def rescore(self, scores: np.ndarray, vector: np.ndarray, rewrites: int) -> np.ndarray:
        """`scores(vector)` as the store is now, from the `scores` it gave earlier (`scores_few`), when it held
        fewer rows and `rewrite_count()` was `rewrites`: only the rows added since and those rewritten since are
        scored, by the one-vector pass over just them (exact, as in `make_exact`)."""
        n, done = len(self._ids), scores.shape[0]
        rewritten = sorted({r for r in self._rewritten_rows[rewrites:] if r < done})
        rows = np.array([*rewritten, *range(done, n)], dtype=np.int64)
        out = np.empty(n, dtype=np.float32)
        out[:done] = scores
        if rows.size:
            out[rows] = self._pass_over(rows, vector)
        return out

    def scores_many(self, vectors: np.ndarray) -> np.ndarray:
        """s_cos for several vectors at once, one row per vector: one matrix product, which reads the stored
        vectors once for all of them (the pass is memory-bound, so this costs about one pass, not one per vector).
        Its float32 sums may differ from `scores` in the last bits; `make_exact` redoes the rows where that matters.
        A small store is searched one vector at a time (already exact)."""
        n = len(self._ids)
        queries = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        if n < BATCH_MIN_ROWS:
            return np.stack([self.scores(q) for q in queries]) if len(queries) else np.zeros((0, n), np.float32)
        with _one_blas_thread():
            return np.ascontiguousarray((self._matrix[:n] @ queries.T).T)

    def scores_few(self, vectors: np.ndarray) -> np.ndarray:
        """`scores_many` for a few vectors (a write's fact and the next message): a matrix product with a handful of
        columns runs OpenBLAS's general kernel at ~1.7 passes at 100k facts, so each block of `_FEW_ROWS` rows
        (in cache) is multiplied by all of them instead, ~1.1 passes; or, where this machine's BLAS does that more
        slowly than one pass per vector, one pass per vector (`_few_by_passes`, measured: see `_FEW_ROWS`). Batched,
        not exact: see `make_exact`."""
        n = len(self._ids)
        queries = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        if n < BATCH_MIN_ROWS:
            return self.scores_many(queries)
        if self._few_by_passes(n, queries):
            return np.stack([self.scores(q) for q in queries])
        return self._few_blocked(n, queries)

    def _few_blocked(self, n: int, queries: np.ndarray) -> np.ndarray:
        columns = np.ascontiguousarray(queries.T)
        out = np.empty((n, len(queries)), dtype=np.float32)
        with _one_blas_thread():
            for start in range(0, n, _FEW_ROWS):
                stop = min(start + _FEW_ROWS, n)
                np.matmul(self._matrix[start:stop], columns, out=out[start:stop])
        return np.ascontiguousarray(out.T)

    def _few_by_passes(self, n: int, queries: np.ndarray) -> bool:
        """Whether one pass per vector beats the blocked product on this machine at about this size (timed once,
        and again after the store has grown `_FEW_REMEASURE_GROWTH`-fold)."""
        measured_at, by_passes = self._few_choice
        if measured_at and n < _FEW_REMEASURE_GROWTH * measured_at:
            return by_passes
        blocked = _fastest(lambda: self._few_blocked(n, queries))
        passes = _fastest(lambda: [self.scores(q) for q in queries])
        self._few_choice = (n, passes < blocked)
        return passes < blocked

    def make_exact(self, scores: np.ndarray, vector: np.ndarray, k: int, rows: np.ndarray | None = None) -> None:
        """In place: the scores of the k best `rows` (all rows when None), and of every row that could be among them,
        become exactly what `scores(vector)` gives. A matrix product sums in another order than the one-vector
        pass, so its float32 scores may differ in the last bits (at most `_rounding_margin` apart); a row more than
        twice that below the k-th cannot be among the k best either way, so only the rows above that line are
        redone, by the same one-vector pass over just those rows."""
        n = len(self._ids)
        rows = np.arange(n) if rows is None else rows
        if n < BATCH_MIN_ROWS or rows.size == 0 or k <= 0:
            return
        if rows.size > k:
            rows = rows[self._deciding(scores[rows], vector, k)]
        scores[rows] = self._pass_over(rows, vector)

    def _deciding(self, values: np.ndarray, vector: np.ndarray, k: int) -> np.ndarray:
        """Positions, ascending, of every finite value (batched scores of `vector`; -inf marks a row not read) that
        could be among the k best once exact: |batched - exact| <= `_rounding_margin` for every row, so a row more
        than twice that below the k-th (batched < k-th - 2 margin) has an exact score below k-th - margin, and
        the k rows at or above the k-th have exact scores at least that."""
        margin = 2 * self._rounding_margin(vector)
        near = _near_top(values, k, margin)
        kept = values[near]
        if near.size > k:
            kth = np.partition(kept, near.size - k)[near.size - k]
            keep = kept >= kth - margin
            near, kept = near[keep], kept[keep]
        return near[np.isfinite(kept)]

    def _rounding_margin(self, vector: np.ndarray) -> float:
        """2 gamma_d |v| max_u |u|: twice the bound on the rounding error of a d-term float32 dot product summed in
        any order (gamma_d = d u / (1 - d u), u = 2^-24)."""
        unit = 2.0**-24
        gamma = self.dim * unit / (1 - self.dim * unit)
        return 2 * gamma * float(np.linalg.norm(vector)) * self._max_norm * (1 + 1e-6)

    def _pass_over(self, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """The one-vector pass over some rows, each score exactly what the whole-matrix pass gives it. BLAS sums a
        row in the same order wherever it sits in a block whose row count is a multiple of `_GATHER_MIN_ROWS`,
        except the last few rows of a matrix whose count is not a multiple of its kernel's width (4): those are
        summed apart. So rows of the matrix's last `_GATHER_MIN_ROWS`-aligned block (which ends at the last row,
        where those few sit) are scored by passing over that block, and the others gathered into a block of a
        multiple of `_GATHER_MIN_ROWS` rows (tests check both against the whole-matrix pass)."""
        query = np.asarray(vector, dtype=np.float32).reshape(self.dim)
        n = len(self._ids)
        last = _GATHER_MIN_ROWS * (max(1, n // _GATHER_MIN_ROWS) - 1)  # first row of the last aligned block
        in_last = rows >= last
        gathered = rows[~in_last]
        block = np.zeros((-(-gathered.size // _GATHER_MIN_ROWS) * _GATHER_MIN_ROWS, self.dim), dtype=np.float32)
        block[: gathered.size] = self._matrix[gathered]
        out = np.empty(rows.size, dtype=np.float32)
        with _one_blas_thread():
            out[~in_last] = (block @ query)[: gathered.size]
            if in_last.any():
                out[in_last] = (self._matrix[last:n] @ query)[rows[in_last] - last]
        return out

    def top(
        self,
        scores: np.ndarray,
        k: int,
        *,
        candidates_only: bool = False,
        exclude: Iterable[str] = (),
        candidates: np.ndarray | None = None,
        exact_for: np.ndarray | None = None,
    ) -> list[tuple[str, float]]:
        """The k best rows of `scores` (its first rows, when the store has grown since), exact, ties broken by fact
        text then id. `candidates`: a mask saved by `candidate_mask` to use instead of today's. `exact_for`: the
        vector of batched `scores` (`scores_many`, `scores_few`), whose rows that could be among the k best are first
        made exact as `scores(exact_for)` gives them now (`make_exact`, in place, over the rows the pick reads)."""
        ranked = self.top_rows(
            scores, k, candidates_only=candidates_only, exclude=exclude, candidates=candidates, exact_for=exact_for
        )
        return [(self._ids[r], value) for r, value in ranked]

    def top_rows(
        self,
        scores: np.ndarray,
        k: int,
        *,
        candidates_only: bool = False,
        exclude: Iterable[str] = (),
        candidates: np.ndarray | None = None,
        exact_for: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """`top` as (row, score) pairs: the read path reads its shortlist's columns by row (a fact id's row is a
        dict lookup, a cold cache miss or two per fact right after the pass)."""
        n = scores.shape[0]
        if n == 0 or k <= 0:
            return []
        keep = candidates if candidates is not None else (self._candidate_mask if candidates_only else None)
        dropped = [row for row in map(self._row.get, exclude) if row is not None and row < n]
        if keep is None:
            # read as is when nothing is masked (a search's case: the copy was a cold 40 KB at 10k facts)
            masked = scores.astype(np.float32, copy=bool(dropped))
        else:
            masked = np.where(keep[:n], scores, np.float32(-np.inf)).astype(np.float32, copy=False)
        if dropped:
            masked[dropped] = -np.inf
        if exact_for is not None and len(self._ids) >= BATCH_MIN_ROWS:
            # `make_exact` over the rows read (the finite ones), found in `masked` itself: no gather of them
            redo = self._deciding(masked, exact_for, k)
            masked[redo] = scores[redo] = self._pass_over(redo, exact_for)
        if k < n:
            near = _near_top(masked, k)
            values = masked[near]
            if near.size <= 4 * k:
                found = values.tolist()
                if all(map(math.isfinite, found)):
                    # few rows, none masked or NaN: ranking them all gives the same k best (the rows at or above
                    # the k-th come first), without the partition's numpy calls (each one cold after the pass)
                    return self._ranked_pairs(list(zip(near.tolist(), found)))[:k]
            part = np.argpartition(-values, k - 1)[:k]
            kth = values[part].min()
            rows = near[values >= kth]  # every row tied with the k-th stays in the running
        else:
            rows = np.arange(n)
        rows = rows[np.isfinite(masked[rows])]
        return self._ranked(masked, rows)[:k]

    def _ranked(self, values: np.ndarray, rows: np.ndarray) -> list[tuple[int, float]]:
        """`rows` with their values by descending value, ties by fact text then id (texts from the read
        columns). The values are read into Python floats once (exactly: a float holds any float32), not one
        numpy scalar per comparison."""
        return self._ranked_pairs(list(zip(rows.tolist(), values[rows].tolist())))

    def _ranked_pairs(self, pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """`_ranked` of (row, value) pairs, sorted in place."""
        ranked = pairs
        ranked.sort(key=itemgetter(1), reverse=True)  # descending and stable, as sorting by the negated value is
        tied = {r for (a, x), (b, y) in zip(ranked, ranked[1:]) if x == y for r in (a, b)}
        if tied:
            ranked.sort(key=lambda pair: (-pair[1], self._tie_key(pair[0]) if pair[0] in tied else ("", "")))
        return ranked

    def _tie_key(self, row: int) -> tuple[str, str]:
        return self._text[row], self._ids[row]

    def top_among(self, scores: np.ndarray, fact_ids: Iterable[str], k: int) -> list[str]:
        """The k best of the given facts by score, ties by text then id (numpy selection: G(f) can be large)."""
        rows = np.fromiter((self._row[i] for i in fact_ids), dtype=np.int64)
        return [self._ids[r] for r in self._top_rows(scores, rows, k)]

    def _top_rows(self, scores: np.ndarray, rows: np.ndarray, k: int) -> list[int]:
        if rows.size == 0 or k <= 0:
            return []
        values = scores[rows]
        if rows.size > k:
            near = _near_top(values, k)
            rows, values = rows[near], values[near]
            kth = np.partition(values, rows.size - k)[rows.size - k]
            rows = rows[values >= kth]  # every row tied with the k-th stays in the running
        return [r for r, _ in self._ranked(scores, rows)[:k]]

    def top_candidates_in(
        self,
        scores: np.ndarray,
        groups: Sequence[np.ndarray],
        k: int,
        exclude: Iterable[str],
        exact_for: np.ndarray | None = None,
    ) -> list[str]:
        """The k best candidate facts (open, or closed by belief) among the union of row groups, minus `exclude`.
        `exact_for`: as in `top_open_with_predicate`."""
        if not any(len(g) for g in groups):
            return []
        n = len(self._ids)
        chosen = np.zeros(n, dtype=bool)
        for group in groups:
            chosen[group] = True
        chosen &= self._candidate_mask[:n]
        for fact_id in exclude:
            if fact_id in self._row:
                chosen[self._row[fact_id]] = False
        rows = np.flatnonzero(chosen)
        if exact_for is not None:
            self.make_exact(scores, exact_for, k, rows)
        return [self._ids[r] for r in self._top_rows(scores, rows, k)]

    def top_open_with_predicate(
        self, scores: np.ndarray, predicate: str, k: int, exclude: Iterable[str], exact_for: np.ndarray | None = None
    ) -> list[str]:
        """The k best valid (open) facts of a relation, minus `exclude`, ties by text then id. `exact_for`: the
        vector of batched `scores`, whose rows that decide the pick are first made exact (`make_exact`)."""
        rows = self.predicate_rows(predicate)
        rows = rows[self._open_mask[rows]]
        drop = np.fromiter((self._row[i] for i in exclude if i in self._row), dtype=np.int64)
        if drop.size:
            rows = rows[~np.isin(rows, drop)]
        if exact_for is not None:
            self.make_exact(scores, exact_for, k, rows)
        return [self._ids[r] for r in self._top_rows(scores, rows, k)]

    def prefetch(self, fact_ids: Sequence[str]) -> None:
        """Build these facts' objects in one query (instead of one query each on first `get`)."""
        self._build(fact_ids)

    # The read columns by row (see `top_rows`): what `get` would give, without building the Fact.

    def fact_ids_at(self, rows: Iterable[int]) -> list[str]:
        ids = self._ids
        return [ids[r] for r in rows]

    def row_of(self, fact_id: str) -> int:
        return self._row[fact_id]

    def text_at(self, row: int) -> str:
        return self._text[row]

    def belief_at(self, row: int) -> float:
        return self._belief[row]

    def memory_refs_at(self, rows: Iterable[int]) -> list[dict[str, str | None]]:
        """Each fact as a decision request shows it: text and validity dates."""
        text, since, until = self._text, self._from_day, self._until_day
        return [{"text": text[r], "valid_from": since[r], "valid_until": until[r]} for r in rows]

    def render_at(self, row: int) -> str:
        """`render_fact(self.get(fact_id))` of the fact at this row."""
        return render_parts(self._said_day[row], self._text[row], self._until_day[row], self._source_text[row])

    def score_of(self, scores: np.ndarray, fact_id: str) -> float:
        return float(scores[self._row[fact_id]])

    # ---- graph -----------------------------------------------------------------------------------------------

    def sibling_rows(self, subject: str, predicate: str) -> np.ndarray:
        """Rows of the facts with this subject and relation."""
        key = (subject, predicate)
        if key not in self._by_subject_predicate:
            query = "SELECT seq - 1 FROM facts WHERE subject = ? AND predicate = ?"
            self._by_subject_predicate[key] = _Rows([r for (r,) in self._db.execute(query, key)])
        return self._by_subject_predicate[key].array()

    def predicate_rows(self, predicate: str) -> np.ndarray:
        """Rows of the facts with this relation."""
        if predicate not in self._by_predicate:
            query = "SELECT seq - 1 FROM facts WHERE predicate = ?"
            self._by_predicate[predicate] = _Rows([r for (r,) in self._db.execute(query, (predicate,))])
        return self._by_predicate[predicate].array()

    def entity_rows(self, entity: str) -> np.ndarray:
        """Rows of the facts whose text names this entity."""
        if entity not in self._by_entity:
            query = "SELECT seq - 1 FROM fact_entities WHERE entity = ?"
            self._by_entity[entity] = _Rows([r for (r,) in self._db.execute(query, (entity,))])
        return self._by_entity[entity].array()

    def siblings(self, subject: str, predicate: str) -> list[str]:
        return [self._ids[r] for r in self.sibling_rows(subject, predicate)]

    def with_predicate(self, predicate: str) -> list[str]:
        return [self._ids[r] for r in self.predicate_rows(predicate)]

    def entities_of(self, fact_id: str) -> frozenset[str]:
        return named_entities(self.get(fact_id).text)

    def facts_with_entity(self, entity: str) -> set[str]:
        return {self._ids[r] for r in self.entity_rows(entity)}

    def is_candidate(self, fact_id: str) -> bool:
        return bool(self._candidate_mask[self._row[fact_id]])

    def candidate_mask(self) -> np.ndarray:
        """A copy of which rows are candidates now (open, or closed by belief), one bool per stored fact."""
        return self._candidate_mask[: len(self._ids)].copy()

    def candidate_count(self) -> int:
        return int(np.count_nonzero(self._candidate_mask[: len(self._ids)]))

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
        if not self._same_as.get(fact_id):  # most facts have no same_as link (and a read asks for each line's)
            return [fact_id]
        seen, frontier = {fact_id}, [fact_id]
        while frontier:
            for other in self._same_as.get(frontier.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    frontier.append(other)
        return sorted(seen, key=lambda i: self._row[i])

    def same_as_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM same_as").fetchone()[0]

    # ---- audit trail -----------------------------------------------------------------------------------------

    def add_decisions(self, fact_id: str, message_id: str, decisions: Iterable[Decision]) -> None:
        self._pending_decisions += [(fact_id, message_id, _decision_json(d.to_json())) for d in decisions]
        self._write_through()

    def decisions(self, fact_id: str) -> list[Decision]:
        self.flush()
        rows = self._db.execute("SELECT body FROM decisions WHERE fact_id = ? ORDER BY seq", (fact_id,))
        return [Decision.from_json(json.loads(r[0])) for r in rows]

    def log(self, kind: str, fact_id: str | None, message_id: str | None, **detail: Any) -> None:
        self._pending_events.append((fact_id, kind, message_id, _event_json(detail)))
        self._write_through()

    def _write_through(self) -> None:
        if not self._in_transaction:
            self.flush()

    def flush(self) -> None:
        """Write the waiting event and decision rows and the changed facts."""
        if self._pending_events:
            self._db.executemany(
                "INSERT INTO events (fact_id, kind, message_id, detail) VALUES (?, ?, ?, ?)", self._pending_events
            )
            self._pending_events = []
        if self._pending_decisions:
            self._db.executemany(
                "INSERT INTO decisions (fact_id, message_id, body) VALUES (?, ?, ?)", self._pending_decisions
            )
            self._pending_decisions = []
        if self._dirty:
            self._db.executemany(_UPDATE_MUTABLE, [_mutable_row(self._facts[i]) for i in sorted(self._dirty)])
            self._dirty = set()

    def discard_pending(self) -> None:
        self._pending_events, self._pending_decisions, self._dirty = [], [], set()
        self._pending_rewrites = {}

    def events(self, fact_id: str) -> list[dict[str, Any]]:
        self.flush()
        rows = self._db.execute(
            "SELECT kind, message_id, detail FROM events WHERE fact_id = ? ORDER BY seq", (fact_id,)
        )
        return [{"event": kind, "message_id": mid, **json.loads(detail)} for kind, mid, detail in rows]

    def event_counts(self) -> dict[str, int]:
        self.flush()
        return dict(self._db.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())

    def close_counts(self) -> dict[str, int]:
        self.flush()
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
            self.store.flush()
            self.store._db.execute("COMMIT")
            self.store._apply_rewrites()
        else:
            self.store.discard_pending()
            # The in-memory copy may now be ahead of the file; the caller must reopen the store.
            self.store._db.execute("ROLLBACK")
