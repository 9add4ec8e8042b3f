"""A store written before the vectors file existed opens with today's code: its one-time upgrade (`Store.
_upgrade_legacy`) writes `<store>.vectors` from the vectors kept as BLOBs in the facts table and fills the
fact_entities table, once, in one transaction.

The old store is built here as that code left it, by writing its schema and rows with sqlite3: the facts table with
an `embedding BLOB NOT NULL` column (a rewrite updated the BLOB in place), only the facts_subject index, no
fact_entities or vector_rewrites table, no vectors file, and `dim` the only meta key. That schema is the one every
commit before the vectors file had (c9d02d7 to 77c8305^). Its rows are those of a store written today through the
public API, so the two can be compared: the old store, opened, must hold the same facts and vectors and rank as
that store does.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from engram import Engram, Fact, Flags, Line
from engram._store import _FACT_COLUMNS
from engram.deciders import ScriptedDecider
from engram.testing import HashEmbedder
from tests.engram.conftest import SentenceExtractor, day
from tests.engram.test_write_scenarios import script_move

REPO = Path(__file__).resolve().parents[2]

LEGACY_SCHEMA = """
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

DIM = HashEmbedder().dim
TOPICS = ["jazz", "Porto", "the cello", "chess", "a red bike", "Rome", "hiking"]
PREDICATES = ["hobby", "lives_in", "likes", "related_to"]
QUERIES = ["Where does Ana live?", "Ana likes jazz", "note 7 Porto", "the cello in Rome", "a red bike", "hiking"]


def seed(i: int, seq: int) -> Fact:
    """Bulk facts, so searches run over more than a thousand rows: every 50th pair shares its words (a tie broken by
    text), some are closed (superseded, or by belief, which stays a candidate), and they span a few relations."""
    when = datetime(2023, 1, 1) + timedelta(minutes=i)
    words = f"Ana mentioned {TOPICS[i % 7]} in note {i % 50}"
    text = f"in note {i % 50} Ana mentioned {TOPICS[i % 7]}" if i % 100 == 50 else words
    closed = {3: "superseded", 5: "belief"}.get(i % 11)
    return Fact(
        id=f"seed{i}",
        text=text,
        subject="ana",
        predicate=PREDICATES[i % 4],
        object=TOPICS[i % 7],
        kind="bio",
        durability="long_term",
        sensitivity="none",
        temporal_status="current",
        valid_from=when,
        valid_until=when if closed else None,
        belief=0.3 + (i % 7) / 10,
        tentative=False,
        confidence=0.9,
        closed_reason=closed,
        closed_by=None,
        source_message_id=f"s{i}",
        source_text=text,
        said_at=when,
        seq=seq,
    )


def scripted() -> ScriptedDecider:
    decider = ScriptedDecider()
    script_move(decider)
    decider.on("edge_type", {"hobby": 0.95}, new="jazz")
    decider.on("relation_to_candidate", {"duplicate": 0.95}, new="Berlin Mitte", existing="Berlin")
    decider.on("relevant_to_query", 0.9, memory="jazz")
    decider.on("relevant_to_query", 0.7, memory="note 7")
    decider.on("relevant_to_query", 0.8, memory="Berlin")
    decider.on("query_relation", {"lives_in": 0.95}, query="where")
    return decider


def memory(path: Path, decider: ScriptedDecider) -> Engram:
    return Engram(path, extractor=SentenceExtractor(), decider=decider, embedder=HashEmbedder(), flags=Flags.e2())


def write_today(path: Path, decider: ScriptedDecider) -> None:
    """A store with every kind of row: a supersede (close), a merge (the vector rewritten), a same_as link, the
    decisions and events of each, and bulk facts."""
    fresh = memory(path, decider)
    fresh.add("Ana lives in Paris. Ana likes jazz.", speaker="Ana", when=day(0), message_id="d1")
    fresh.add("Ana moved to Berlin.", speaker="Ana", when=day(30), message_id="d2")
    report = fresh.add("Ana moved to Berlin Mitte.", speaker="Ana", when=day(31), message_id="d3")
    assert report.actions == ["merged"]  # the stored vector of "Ana moved to Berlin" was rewritten
    fresh.add("Ana enjoys jazz music.", speaker="Ana", when=day(32), message_id="d4")
    decider.on("same_fact", 0.9)
    assert fresh.hygiene().links >= 1
    store = fresh._store
    seeds = [seed(i, store.next_seq() + i) for i in range(1500)]
    with store.transaction():
        store.add_facts(seeds, HashEmbedder().embed([f.text for f in seeds]))
    fresh.close()


def write_legacy_copy(fresh: Path, legacy: Path) -> None:
    """The rows of `fresh` as the code before the vectors file wrote them: each fact's current vector in its
    `embedding` column, nothing in fact_entities (no such table) and no vectors file."""
    vectors = np.fromfile(f"{fresh}.vectors", dtype=np.float32).reshape(-1, DIM)
    source = sqlite3.connect(fresh)
    for seq, blob in source.execute("SELECT seq, embedding FROM vector_rewrites"):
        vectors[seq - 1] = np.frombuffer(blob, dtype=np.float32)
    assert source.execute("SELECT key FROM meta").fetchall() == [("dim",)]
    db = sqlite3.connect(legacy, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(LEGACY_SCHEMA)
    db.execute("BEGIN")
    for table in ("meta", "messages", "entities", "decisions", "events", "same_as"):
        rows = source.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        assert rows or table == "meta" or table == "same_as", table
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' for _ in rows[0])})", rows)
    facts = source.execute(f"SELECT {', '.join(_FACT_COLUMNS)} FROM facts ORDER BY seq").fetchall()
    db.executemany(
        f"INSERT INTO facts ({', '.join(_FACT_COLUMNS)}, embedding) VALUES ({', '.join('?' for _ in range(24))})",
        [(*row, vectors[row[0] - 1].tobytes()) for row in facts],
    )
    db.execute("COMMIT")
    db.close()
    source.close()
    assert not Path(f"{legacy}.vectors").exists()


def tables(path: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(path)
    names = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    rows = {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in names}
    if "fact_entities" in rows:  # a rewrite deletes and inserts its fact's rows: compared in (seq, entity) order
        rows["fact_entities"] = sorted(rows["fact_entities"], key=lambda r: (r[1], r[0]))
    db.close()
    return rows


def readings(engram: Engram) -> tuple[list[list[Line]], list[list[Line]], list[list[Line]]]:
    return (
        [engram.retrieve(q).lines for q in QUERIES],
        [r.lines for r in engram.retrieve_many(QUERIES)],
        [engram.search(q, k=3) for q in QUERIES],
    )


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path]:
    fresh, legacy = tmp_path / "fresh.db", tmp_path / "legacy.db"
    write_today(fresh, scripted())
    write_legacy_copy(fresh, legacy)
    return fresh, legacy


def test_a_store_from_before_the_vectors_file_opens_with_the_same_facts_vectors_and_rankings(stores):
    fresh_path, legacy_path = stores
    assert "fact_entities" not in tables(legacy_path)
    decider = scripted()
    fresh, legacy = memory(fresh_path, decider), memory(legacy_path, decider)

    assert len(legacy._store) == len(fresh._store) > 1500
    assert legacy.facts(valid_only=False) == fresh.facts(valid_only=False)
    assert legacy.stats() == fresh.stats()
    assert {f.id: legacy.explain(f.id) for f in fresh.facts(valid_only=False)[:6]} == {
        f.id: fresh.explain(f.id) for f in fresh.facts(valid_only=False)[:6]
    }
    n = len(fresh._store)
    assert np.array_equal(legacy._store._matrix[:n], fresh._store._matrix[:n])
    assert Path(f"{legacy_path}.vectors").read_bytes() == Path(f"{fresh_path}.vectors").read_bytes()
    upgraded = tables(legacy_path)
    assert upgraded["fact_entities"] == tables(fresh_path)["fact_entities"]
    assert upgraded["meta"] == [("dim", str(DIM)), ("vectors_file", "1")]

    got, want = readings(legacy), readings(fresh)
    assert any(line.source == "relation" for line in want[0][0])  # the relation pull and the reranker both ran
    assert any(line.source == "rerank" for lines in want[0] for line in lines)
    assert got == want


def test_an_upgraded_store_keeps_writing_and_is_not_upgraded_again(stores):
    fresh_path, legacy_path = stores
    decider = scripted()
    for path in (fresh_path, legacy_path):  # the same message on both, then both closed and opened again
        engram = memory(path, decider)
        engram.add("Ana moved to Porto. Ana plays chess in Rome.", speaker="Ana", when=day(40), message_id="d5")
        engram.close()
    written = Path(f"{legacy_path}.vectors").stat().st_mtime_ns
    legacy_entities = len(tables(legacy_path)["fact_entities"])

    fresh, legacy = memory(fresh_path, decider), memory(legacy_path, decider)
    # A second upgrade would rewrite the vectors file from the BLOBs, where rows written since are empty (and then
    # refuse to open), and would add every fact's entity rows again.
    assert Path(f"{legacy_path}.vectors").stat().st_mtime_ns == written
    assert len(tables(legacy_path)["fact_entities"]) == legacy_entities
    assert tables(legacy_path)["fact_entities"] == tables(fresh_path)["fact_entities"]
    assert legacy.facts(valid_only=False) == fresh.facts(valid_only=False)
    n = len(fresh._store)
    assert np.array_equal(legacy._store._matrix[:n], fresh._store._matrix[:n])
    assert legacy.search("Ana plays chess in Rome", k=1)[0].score == pytest.approx(1.0)
    assert readings(legacy) == readings(fresh)


_DIES_MID_UPGRADE = """
import os, sqlite3, sys
from types import SimpleNamespace
from engram import _store

path, point = sys.argv[1], sys.argv[2]


def rows_then_death(cursor):
    for i, row in enumerate(cursor):
        if i == 800:  # halfway through the vectors file
            os._exit(17)
        yield row


class DiesMidUpgrade:  # the process is killed: no rollback, no close, nothing flushed
    def __init__(self, db):
        self._db = db

    def __getattr__(self, name):
        return getattr(self._db, name)

    def execute(self, sql, *args):
        if point == "before the commit" and sql.startswith("INSERT INTO meta VALUES ('vectors_file'"):
            os._exit(17)
        cursor = self._db.execute(sql, *args)
        if point == "while writing the vectors file" and sql.startswith("SELECT embedding FROM facts"):
            return rows_then_death(cursor)
        return cursor


_store.sqlite3 = SimpleNamespace(connect=lambda *a, **k: DiesMidUpgrade(sqlite3.connect(*a, **k)))
_store.Store(path, int(sys.argv[3]))
"""


@pytest.mark.parametrize("point", ["while writing the vectors file", "before the commit"])
def test_a_crash_mid_upgrade_leaves_an_old_store_that_upgrades_on_the_next_open(stores, point):
    fresh_path, legacy_path = stores
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    died = subprocess.run(
        [sys.executable, "-c", _DIES_MID_UPGRADE, str(legacy_path), point, str(DIM)], env=env, capture_output=True
    )
    assert died.returncode == 17, died.stderr.decode()
    half_written = Path(f"{legacy_path}.vectors").stat().st_size
    if point == "while writing the vectors file":
        assert half_written < Path(f"{fresh_path}.vectors").stat().st_size

    decider = scripted()
    fresh, legacy = memory(fresh_path, decider), memory(legacy_path, decider)
    assert tables(legacy_path)["meta"] == [("dim", str(DIM)), ("vectors_file", "1")]
    assert tables(legacy_path)["fact_entities"] == tables(fresh_path)["fact_entities"]  # the lost rows, once
    assert Path(f"{legacy_path}.vectors").read_bytes() == Path(f"{fresh_path}.vectors").read_bytes()
    assert legacy.facts(valid_only=False) == fresh.facts(valid_only=False)
    assert readings(legacy) == readings(fresh)
