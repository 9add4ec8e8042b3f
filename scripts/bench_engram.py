"""engram's store against the hardware floor: write, read, batched read and open, as ratios to a numpy anchor.

Not a test: it prints figures for the README. The anchor, measured in the same run and interleaved with the store's
own figures, is one brute-force top-30 pass over N x 384 float32 unit vectors held in a numpy matrix (a
matrix-vector product, one BLAS thread like the store, then the 30 best by partition and sort): the least any
exact search over N facts can cost on this machine. Every figure is divided by the pass at its own N.

engram's figures are local work only: the decision backend is the scripted one (answers written down, no model),
the embedder returns precomputed 384-dim unit vectors, and the time inside the decider, embedder and extractor is
measured and subtracted. What is left is engram's own: the vector passes, graph candidates, the belief policy,
SQLite writes, reranking bookkeeping and rendering. Two extractors are timed: one that never reads the extraction
context (so the message's own search, Top_10 s_cos(m_t, .), is never run) and one that reads the similar facts, as
a prompt extractor does (two passes per write: the message's and the fact's), and that one again with each write
given the next message (`Engram.add_many`), whose search is then scored in the same product as the fact's.

mem0's store is timed through the same loop: mem0's own Qdrant wrapper in qdrant's local mode, configured as the
mem0 arm configures it (bench/systems/mem0_system.py: on-disk path, 384 dims, cosine), holding the same vectors. A
write is a top-10 search plus an insert of one point, a read a top-30 search, both with the user_id filter mem0
searches with. Dense vectors only: mem0's BM25 leg and its LLM calls are not in the loop.

Goals: write at 100k within 1.3x of one pass, at 10k within 3x; a single read within 1.1x; a batched read well under
one pass per query; opening a 100k store under 1 s.
Usage: nice -n 10 .venv/bin/python scripts/bench_engram.py [--sizes 10000,100000] [--writes 60] [--queries 60]
       [--mem0 / --no-mem0] [--mem0-ops 20]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from engram import Engram, ExtractedFact, Extraction, ExtractionContext, Fact, Flags, Message
from engram.deciders import ScriptedDecider
from engram.questions import EDGE_TYPES

DIM = 384
TOP = 30
SPEAKERS = [f"Speaker{n}" for n in range(40)]
TOPICS = ["Paris", "jazz", "the bakery", "a red bike", "Berlin", "hiking", "painting", "sushi", "chess", "Rome"]
START = datetime(2023, 1, 1, 9, 0)


def unit_vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class PrecomputedEmbedder:
    """Unit vectors seeded by the text's hash: what a cache of MiniLM vectors would hand back, at no model cost."""

    name = "precomputed-random-384"
    dim = DIM

    def __init__(self) -> None:
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        began = time.perf_counter()
        out = np.stack([unit_vector(t) for t in texts]) if texts else np.zeros((0, DIM), dtype=np.float32)
        self.seconds += time.perf_counter() - began
        return out


class OneFactExtractor:
    """The message is the fact. With `reads_context`, it reads the similar facts first, as a prompt would."""

    name, model = "one-fact", "bench"

    def __init__(self, reads_context: bool) -> None:
        self.seconds = 0.0
        self.reads_context = reads_context

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        if self.reads_context:
            len(context.similar_facts)  # engram's search for them runs here: it is engram's time, not ours
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

    def ask(self, state: Any, asks: Any) -> Any:
        began = time.perf_counter()
        try:
            return super().ask(state, asks)
        finally:
            self.seconds += time.perf_counter() - began
            self.requests.clear()  # do not hold every request in memory over a long run


# ---- the anchor ----------------------------------------------------------------------------------------------


class Anchor:
    """One brute-force top-30 pass over n x 384 float32 unit vectors in memory. It is run right before every timed
    operation, so the pass and the operation see the same load on a shared machine."""

    def __init__(self, n: int) -> None:
        rng = np.random.default_rng(n)
        self.matrix = rng.standard_normal((n, DIM), dtype=np.float32)
        self.matrix /= np.linalg.norm(self.matrix, axis=1, keepdims=True)
        self.times: list[float] = []

    def since(self, start: int) -> tuple[float, float]:
        """(p50, p10) of the passes timed since `start`: the anchor of one phase of the run."""
        times = self.times[start:]
        return statistics.median(times), float(np.percentile(times, 10))

    def once(self) -> None:
        query = self.matrix[len(self.times) % self.matrix.shape[0]] + np.float32(0.01)
        with threadpool_limits(1, user_api="blas"):
            began = time.perf_counter()
            scores = self.matrix @ query
            best = np.argpartition(-scores, TOP - 1)[:TOP]
            best[np.argsort(-scores[best])]
            self.times.append(1000 * (time.perf_counter() - began))


# ---- engram --------------------------------------------------------------------------------------------------


def synthetic_fact(i: int) -> tuple[Fact, str]:
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


def build(path: Path, size: int) -> None:
    embedder = PrecomputedEmbedder()
    memory = Engram(path, extractor=OneFactExtractor(False), decider=TimedDecider(), embedder=embedder)
    for start in range(0, size, 5000):
        pairs = [synthetic_fact(i) for i in range(start, min(size, start + 5000))]
        with memory._store.transaction():
            memory._store.add_facts([f for f, _ in pairs], embedder.embed([t for _, t in pairs]))
    memory.close()


def open_seconds(path: Path, times: int) -> float:
    spent = []
    for _ in range(times):
        began = time.perf_counter()
        memory = Engram(path, extractor=OneFactExtractor(False), decider=TimedDecider(), embedder=PrecomputedEmbedder())
        spent.append(time.perf_counter() - began)
        memory.close()
    return statistics.median(spent)


def question(n: int) -> str:
    return f"what does {SPEAKERS[n % 7]} think about {TOPICS[n % len(TOPICS)]} ({n})?"


def written(n: int, tag: str) -> Message:
    topic = TOPICS[n % len(TOPICS)]
    text = f"{SPEAKERS[n % 7]} likes {topic}, detail {n}" if n % 2 else f"{SPEAKERS[n % 7]} talked about {topic}"
    return Message(id=f"{tag}{n}", text=text, speaker=SPEAKERS[n % 7], when=START + timedelta(days=400, minutes=n))


def measure_engram(
    path: Path, writes: int, queries: int, reads_context: bool, tag: str, anchor: Anchor, ahead: bool = False
) -> dict[str, float]:
    """`ahead`: each write is given the next message, as `Engram.add_many` gives it (its private per-message step
    is called here, so every write is timed on its own, right after its anchor pass)."""
    embedder, extractor, decider = PrecomputedEmbedder(), OneFactExtractor(reads_context), TimedDecider()
    first = len(anchor.times)
    memory = Engram(path, extractor=extractor, decider=decider, embedder=embedder, flags=Flags())

    def outside() -> float:
        return decider.seconds + embedder.seconds + extractor.seconds

    per_fact = []
    for n in range(writes):
        message = written(n, tag)
        anchor.once()
        before, began = outside(), time.perf_counter()
        if ahead:
            memory._add(message, written(n + 1, tag) if n + 1 < writes else None)
        else:
            memory.add(message.text, speaker=message.speaker, when=message.when, message_id=message.id)
        per_fact.append(1000 * (time.perf_counter() - began - (outside() - before)))
    figures = {"write": statistics.median(per_fact), "write_p10": float(np.percentile(per_fact, 10))}
    if queries:
        figures |= measure_reads(memory, queries, anchor, outside)
    memory.close()
    one_pass, quiet_pass = anchor.since(first)
    return {"pass": one_pass, "pass_p10": quiet_pass, **figures}


def measure_reads(memory: Engram, queries: int, anchor: Anchor, outside: Callable[[], float]) -> dict[str, float]:
    """Single reads, each right after an anchor pass, then the same questions asked together (checked to rank as
    the single reads do); `outside()`: the seconds spent so far in decider, embedder and extractor."""
    per_query = []
    for n in range(queries):
        anchor.once()
        before, began = outside(), time.perf_counter()
        memory.search(question(n), k=3)
        per_query.append(1000 * (time.perf_counter() - began - (outside() - before)))

    batch = [question(n) for n in range(queries)]
    for _ in range(3):
        anchor.once()
    before, began = outside(), time.perf_counter()
    batched = memory.search_many(batch, k=3)
    batched_ms = 1000 * (time.perf_counter() - began - (outside() - before)) / len(batch)
    singles = [memory.search(q, k=3) for q in batch]
    if [[line.fact_id for line in lines] for lines in batched] != [[line.fact_id for line in s] for s in singles]:
        raise SystemExit("batched read ranked differently from single reads")
    return {
        "read": statistics.median(per_query),
        "read_p10": float(np.percentile(per_query, 10)),
        "batched": batched_ms,
    }


# ---- mem0's store --------------------------------------------------------------------------------------------


def measure_mem0_store(folder: Path, size: int, writes: int, queries: int, anchor: Anchor) -> dict[str, float]:
    """mem0's Qdrant wrapper in local mode, as the mem0 arm configures it, through the same write/search loop."""
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0.vector_stores.qdrant import Qdrant

    store = Qdrant(collection_name="mem0", embedding_model_dims=DIM, path=str(folder / "qdrant"), on_disk=True)
    store._has_bm25_slot = False  # dense vectors only: the BM25 leg is not part of this loop
    first = len(anchor.times)
    user = {"user_id": "bench"}
    for start in range(0, size, 2000):
        chunk = range(start, min(size, start + 2000))
        texts = [synthetic_fact(i)[1] for i in chunk]
        store.insert([unit_vector(t).tolist() for t in texts], [{"data": t, **user} for t in texts], list(chunk))
    per_write = []
    for n in range(writes):
        text = f"{SPEAKERS[n % 7]} likes {TOPICS[n % len(TOPICS)]}, detail {n}"
        vector = unit_vector(text).tolist()
        anchor.once()
        began = time.perf_counter()
        store.search(text, vector, top_k=10, filters=user)
        store.insert([vector], [{"data": text, **user}], [size + n])
        per_write.append(1000 * (time.perf_counter() - began))
    per_read = []
    for n in range(queries):
        vector = unit_vector(question(n)).tolist()
        anchor.once()
        began = time.perf_counter()
        store.search(question(n), vector, top_k=TOP, filters=user)
        per_read.append(1000 * (time.perf_counter() - began))
    store.client.close()
    one_pass, quiet_pass = anchor.since(first)
    return {
        "pass": one_pass,
        "pass_p10": quiet_pass,
        "write": statistics.median(per_write),
        "write_p10": float(np.percentile(per_write, 10)),
        "read": statistics.median(per_read),
        "read_p10": float(np.percentile(per_read, 10)),
    }


# ---- report --------------------------------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (a figure names the CPU it was measured on)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def blas_kernel() -> str:
    """The BLAS library, version and kernel numpy runs on (OpenBLAS picks its kernel by CPU; OPENBLAS_CORETYPE
    forces one), read after a product has loaded it."""
    np.ones((4, 4), dtype=np.float32) @ np.ones(4, dtype=np.float32)
    found = [
        f"{info.get('internal_api')} {info.get('version')}, {info.get('architecture')} kernel"
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return "; ".join(found) or "no BLAS found by threadpoolctl"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--mem0", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--mem0-ops", type=int, default=20, help="writes and reads through mem0's store")
    args = parser.parse_args()
    print(
        f"engram's store vs one brute-force top-{TOP} pass (numpy anchor, same run); {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{datetime.now().isoformat(timespec='minutes')}"
    )
    print(f"CPU: {cpu_model()}; BLAS: {blas_kernel()}")
    loads = [os.getloadavg()[0]]
    for size in (int(s) for s in args.sizes.split(",")):
        anchor = Anchor(size)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "engram.db"
            build(path, size)
            opened = open_seconds(path, 3)
            plain = measure_engram(path, args.writes, args.queries, False, "plain", anchor)
            context = measure_engram(path, args.writes, args.queries, True, "context", anchor)
            ahead = measure_engram(path, args.writes, 0, True, "ahead", anchor, ahead=True)
            mem0 = None
            if args.mem0:
                mem0 = measure_mem0_store(Path(folder), size, args.mem0_ops, args.mem0_ops, anchor)
        pool = anchor.times
        loads.append(os.getloadavg()[0])
        one_pass, quiet_pass = statistics.median(pool), float(np.percentile(pool, 10))
        print(
            f"\n{size:,} facts: one pass (anchor) p50 {one_pass:.2f} ms, p10 {quiet_pass:.2f} ms, "
            f"p90 {np.percentile(pool, 90):.2f} ms ({len(pool)} passes)"
        )
        # p10 / p10 is the ratio at the least disturbed moments of both, which a loaded machine hides in the p50s.
        print(f"  {'':<62} {'p50 ms':>8} {'p50/p50':>8} {'p10/p10':>8}")
        rows = [
            ("write, extractor ignores the context", plain["write"], plain["write_p10"], plain),
            ("write, extractor reads similar facts", context["write"], context["write_p10"], context),
            ("write, reads similar facts, next message given (add_many)", ahead["write"], ahead["write_p10"], ahead),
            ("read, one query", plain["read"], plain["read_p10"], plain),
            (f"read, {args.queries} queries batched, per query", plain["batched"], None, plain),
        ]
        if mem0 is not None:
            rows += [
                ("mem0's store (qdrant local): write = top-10 search + insert", mem0["write"], mem0["write_p10"], mem0),
                ("mem0's store (qdrant local): read = top-30 search", mem0["read"], mem0["read_p10"], mem0),
            ]
        # Each ratio is against the passes timed in its own phase (they ran between its operations).
        for label, ms, p10, phase in rows:
            quiet = f"{p10 / phase['pass_p10']:7.2f}x" if p10 is not None else f"{'':>8}"
            print(f"  {label:<62} {ms:8.2f} {ms / phase['pass']:7.2f}x {quiet}")
        if mem0 is not None:
            print(
                f"  mem0's store / engram's (p50): write {mem0['write'] / plain['write']:.1f}x, "
                f"read {mem0['read'] / plain['read']:.1f}x"
            )
        print(f"  open the store: {opened:.2f} s")
    print(f"\nload average (1 min) at the start and after each size: {' '.join(f'{x:.1f}' for x in loads)}")


if __name__ == "__main__":
    main()
