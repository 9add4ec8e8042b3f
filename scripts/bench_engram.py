"""Local overhead of engram's write and read paths at 1k, 10k and 100k stored facts (model calls excluded).

Not a test: it prints figures for the README. The decision backend is the scripted one (answers written down, no
model), the embedder returns precomputed 384-dim unit vectors, and the time spent inside the decider, embedder and
extractor is measured separately and subtracted, so "local" is engram's own work: candidate search (exact numpy
brute force), graph candidates, the belief policy, SQLite writes, reranking bookkeeping and rendering.

Goal (issue 4): <= 2 ms per fact written and <= 5 ms per query at 100k facts, on this 2-core machine.
Usage: .venv/bin/python scripts/bench_engram.py [--sizes 1000,10000,100000] [--writes 60] [--queries 60]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from engram import Engram, ExtractedFact, Extraction, ExtractionContext, Fact, Flags, Message
from engram.deciders import ScriptedDecider
from engram.questions import EDGE_TYPES

DIM = 384
SPEAKERS = [f"Speaker{n}" for n in range(40)]
TOPICS = ["Paris", "jazz", "the bakery", "a red bike", "Berlin", "hiking", "painting", "sushi", "chess", "Rome"]
START = datetime(2023, 1, 1, 9, 0)


class PrecomputedEmbedder:
    """Unit vectors seeded by the text's hash: what a cache of MiniLM vectors would hand back, at no model cost."""

    name = "precomputed-random-384"
    dim = DIM

    def __init__(self) -> None:
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        began = time.perf_counter()
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        out = np.stack(rows) if rows else np.zeros((0, DIM), dtype=np.float32)
        self.seconds += time.perf_counter() - began
        return out


class OneFactExtractor:
    name, model = "one-fact", "bench"

    def __init__(self) -> None:
        self.seconds = 0.0

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        began = time.perf_counter()
        out = Extraction(facts=[ExtractedFact(text=message.text, subject=message.speaker)])
        self.seconds += time.perf_counter() - began
        return out


class TimedDecider(ScriptedDecider):
    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0
        self.on("relation_to_candidate", {"refinement": 0.9}, new="detail")
        self.on("edge_type", {"hobby": 0.9}, new="likes")
        self.on("relevant_to_query", 0.8, memory="jazz")

    def ask(self, state, asks):
        began = time.perf_counter()
        try:
            return super().ask(state, asks)
        finally:
            self.seconds += time.perf_counter() - began
            self.requests.clear()  # do not hold every request in memory over a long run


def synthetic_fact(i: int, embedder: PrecomputedEmbedder) -> tuple[Fact, str]:
    speaker = SPEAKERS[i % len(SPEAKERS)]
    topic = TOPICS[i % len(TOPICS)]
    text = f"{speaker} mentioned {topic} in remark {i}"
    when = START + timedelta(minutes=i)
    fact = Fact(
        id=f"seed{i}#0",
        text=text,
        subject=speaker.lower(),
        predicate=EDGE_TYPES[i % len(EDGE_TYPES)],
        object="unspecified",
        kind="bio",
        durability="long_term",
        sensitivity="none",
        temporal_status="current",
        valid_from=when,
        valid_until=None,
        belief=0.9,
        tentative=False,
        confidence=0.9,
        closed_reason=None,
        closed_by=None,
        source_message_id=f"seed{i}",
        source_text=text,
        said_at=when,
        seq=i + 1,
    )
    return fact, text


def build(path: Path, size: int) -> float:
    embedder = PrecomputedEmbedder()
    memory = Engram(path, extractor=OneFactExtractor(), decider=TimedDecider(), embedder=embedder)
    began = time.perf_counter()
    chunk = 5000
    for start in range(0, size, chunk):
        pairs = [synthetic_fact(i, embedder) for i in range(start, min(size, start + chunk))]
        with memory._store.transaction():
            memory._store.add_facts([f for f, _ in pairs], embedder.embed([t for _, t in pairs]))
    memory.close()
    return time.perf_counter() - began


def measure(path: Path, size: int, writes: int, queries: int) -> dict[str, float]:
    embedder, extractor, decider = PrecomputedEmbedder(), OneFactExtractor(), TimedDecider()
    began = time.perf_counter()
    memory = Engram(path, extractor=extractor, decider=decider, embedder=embedder, flags=Flags())
    open_s = time.perf_counter() - began

    per_fact = []
    for n in range(writes):
        before = decider.seconds + embedder.seconds + extractor.seconds
        began = time.perf_counter()
        topic = TOPICS[n % len(TOPICS)]
        text = f"{SPEAKERS[n % 7]} likes {topic}, detail {n}" if n % 2 else f"{SPEAKERS[n % 7]} talked about {topic}"
        memory.add(text, speaker=SPEAKERS[n % 7], when=START + timedelta(days=400, minutes=n), message_id=f"bench{n}")
        elapsed = time.perf_counter() - began
        per_fact.append(elapsed - (decider.seconds + embedder.seconds + extractor.seconds - before))

    per_query = []
    for n in range(queries):
        before = decider.seconds + embedder.seconds
        began = time.perf_counter()
        memory.search(f"what does {SPEAKERS[n % 7]} think about {TOPICS[n % len(TOPICS)]}?", k=3)
        elapsed = time.perf_counter() - began
        per_query.append(elapsed - (decider.seconds + embedder.seconds - before))
    floor = brute_force_floor(memory, queries)
    memory.close()
    return {
        "open_s": open_s,
        "matvec_ms": floor,
        "write_ms_median": 1000 * statistics.median(per_fact),
        "write_ms_p90": 1000 * float(np.percentile(per_fact, 90)),
        "read_ms_median": 1000 * statistics.median(per_query),
        "read_ms_p90": 1000 * float(np.percentile(per_query, 90)),
    }


def brute_force_floor(memory: Engram, repeats: int) -> float:
    """Median ms of one bare exact cosine pass over every stored vector (the store's own search primitive), measured
    in the same process and moment: the part of each figure that is memory bandwidth, not engram's bookkeeping.
    A write does two passes (the message for extraction context, the fact for candidates); a read does one."""
    vector = memory.embedder.embed(["floor probe"])[0]
    times = []
    for _ in range(max(5, repeats // 4)):
        began = time.perf_counter()
        memory._store.scores(vector)
        times.append(time.perf_counter() - began)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    print(
        f"engram local overhead (model calls excluded); {platform.machine()}, {platform.python_version()}, "
        f"numpy {np.__version__}, {datetime.now().date().isoformat()}"
    )
    print(
        f"{'facts':>7} {'build s':>8} {'open s':>7} {'write ms/fact p50':>18} {'p90':>6} "
        f"{'read ms/query p50':>18} {'p90':>6} {'one cosine pass ms':>19}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "engram.db"
            build_s = build(path, size)
            m = measure(path, size, args.writes, args.queries)
        print(
            f"{size:>7} {build_s:>8.1f} {m['open_s']:>7.2f} {m['write_ms_median']:>18.2f} {m['write_ms_p90']:>6.2f} "
            f"{m['read_ms_median']:>18.2f} {m['read_ms_p90']:>6.2f} {m['matvec_ms']:>19.2f}",
            flush=True,
        )
    print("goal at 100k: <= 2 ms per fact, <= 5 ms per query")
    print(f"load average while measuring: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
