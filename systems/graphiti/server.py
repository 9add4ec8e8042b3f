"""Graphiti (`graphiti-core` on PyPI) behind engram-bench's memory protocol, in its own Python 3.12 environment.

Each written message becomes one Graphiti episode (`add_episode`, source "message", its name the message id, its
reference time the message's timestamp). Graphiti asks the model to extract entities and the facts between them,
deduplicates them against the graph, and stores episodes, entities and facts in an embedded FalkorDB
(falkordblite: a redis-server with the FalkorDB module, started by this process on a file in the data dir, one
graph per namespace). Its LLM client is `OpenAIGenericClient` at $OPENAI_BASE_URL (the harness's gateway
endpoint, model `engram-bench/extract`), its embedder `OpenAIEmbedder` there too (`engram-bench/embed`, the local
MiniLM), so every model call of the library reaches the harness's cache.

Graphiti's default reranker is a cross-encoder at OpenAI; here it is `CosineReranker`, which ranks passages by the
cosine of their `engram-bench/embed` vectors to the question's (no model call of its own beyond embeddings). A
retrieval is one `search_` over facts (BM25, cosine, graph walk) and episodes (BM25), both reranked by it, merged
by score: the k best lines, a fact sourced to the episodes (messages) it came from, an episode to its own message.

Replayable: Graphiti names nodes and edges with uuid4 and some prompts list them, so ids come from a seeded
generator; its calls run one at a time (max_coroutines 1) so they happen in the same order on every run.
A message whose `add_episode` raised (SmolLM2's JSON failing Graphiti's validation, after its own retries) is
counted in /stats as health.failed_writes and logged, and the run goes on; one that produced no fact is counted as
health.empty_writes. `stored` counts facts, never episodes, so a run whose model extracted nothing says so.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import random
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Coroutine
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve

os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # its PostHog events would try the network at start-up
_IDS = random.Random(0)


def _replayable_uuid4() -> uuid.UUID:
    """A uuid4 from a seeded generator: the same writes name the same nodes on every run, so the prompts that list
    them are the same requests and replay from the cache."""
    return uuid.UUID(int=_IDS.getrandbits(128), version=4)


uuid.uuid4 = _replayable_uuid4  # before graphiti_core is imported (its modules bind `from uuid import uuid4`)

from graphiti_core import Graphiti  # noqa: E402
from graphiti_core.cross_encoder.client import CrossEncoderClient  # noqa: E402
from graphiti_core.driver.falkordb_driver import FalkorDriver  # noqa: E402
from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig  # noqa: E402
from graphiti_core.llm_client.config import LLMConfig  # noqa: E402
from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient  # noqa: E402
from graphiti_core.nodes import EpisodeType  # noqa: E402
from graphiti_core.search.search_config import (  # noqa: E402
    EdgeReranker,
    EdgeSearchConfig,
    EdgeSearchMethod,
    EpisodeReranker,
    EpisodeSearchConfig,
    EpisodeSearchMethod,
    SearchConfig,
)
from redislite.async_falkordb_client import AsyncFalkorDB  # noqa: E402

MODEL = os.environ.get("ENGRAM_ADAPTER_MODEL", "engram-bench/extract")
EMBED_MODEL = "engram-bench/embed"
DIMS = 384  # MiniLM's
MAX_TOKENS = 1024  # per reply: Graphiti's default (16384) is four times SmolLM2's whole context
NO_TIME = datetime(2000, 1, 1, tzinfo=UTC)  # a message without a timestamp: a fixed time, never the clock's
T = TypeVar("T")


class CosineReranker(CrossEncoderClient):
    """Graphiti's reranker interface without OpenAI: passages by the cosine of their embedding to the query's."""

    def __init__(self, embedder: OpenAIEmbedder) -> None:
        self.embedder = embedder

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        if not passages:
            return []
        vectors = await self.embedder.create_batch([query, *passages])
        asked = vectors[0]
        scored = [(passage, _cosine(asked, vector)) for passage, vector in zip(passages, vectors[1:], strict=True)]
        return sorted(scored, key=lambda pair: -pair[1])  # stable: equal scores keep Graphiti's order


def _cosine(a: list[float], b: list[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


class _Loop:
    """One event loop on its own thread for every Graphiti call: the embedded database's connections belong to the
    loop they were opened on, and the protocol server answers each request on a new thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="graphiti-loop", daemon=True).start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)


def graph_name(namespace: str) -> str:
    """A FalkorDB graph (and Graphiti group id) per namespace: letters, digits and underscores only, with a hash so
    two namespaces that differ only in punctuation stay apart."""
    readable = re.sub(r"[^A-Za-z0-9_]", "_", namespace)[:40]
    return f"{readable}_{hashlib.sha256(namespace.encode()).hexdigest()[:8]}"


def reference_time(message: dict[str, Any]) -> datetime:
    stamp = message.get("timestamp")
    if not stamp:
        return NO_TIME
    when = datetime.fromisoformat(stamp)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def search_config(k: int) -> SearchConfig:
    return SearchConfig(
        edge_config=EdgeSearchConfig(
            search_methods=[EdgeSearchMethod.bm25, EdgeSearchMethod.cosine_similarity, EdgeSearchMethod.bfs],
            reranker=EdgeReranker.cross_encoder,
        ),
        episode_config=EpisodeSearchConfig(
            search_methods=[EpisodeSearchMethod.bm25], reranker=EpisodeReranker.cross_encoder
        ),
        limit=k,
        reranker_min_score=-1.0,  # every cosine, also a negative one: the harness asks for k lines, not a threshold
    )


class GraphitiBackend(MemoryBackend):
    def __init__(self, data_dir: Path) -> None:
        base_url = os.environ["OPENAI_BASE_URL"]
        key = os.environ.get("OPENAI_API_KEY") or "none"
        data_dir.mkdir(parents=True, exist_ok=True)
        self.loop = _Loop()
        self.db = self.loop.run(self._open(str(data_dir / "graphiti.falkordb")))
        config = LLMConfig(api_key=key, model=MODEL, small_model=MODEL, base_url=base_url, max_tokens=MAX_TOKENS)
        self.llm = OpenAIGenericClient(config=config, max_tokens=MAX_TOKENS)
        self.embedder = OpenAIEmbedder(
            OpenAIEmbedderConfig(api_key=key, base_url=base_url, embedding_model=EMBED_MODEL, embedding_dim=DIMS)
        )
        self.reranker = CosineReranker(self.embedder)
        self.graphs: dict[str, Graphiti] = {}
        self.episodes: dict[str, dict[str, str]] = {}  # namespace -> episode uuid -> message id
        self.dates: dict[str, dict[str, str]] = {}  # namespace -> message id -> its session date
        self.empty: dict[str, int] = {}
        self.failed: dict[str, int] = {}

    @staticmethod
    async def _open(path: str) -> AsyncFalkorDB:
        return AsyncFalkorDB(path)  # starts the embedded server; on the loop, so its connections belong there

    def close(self) -> None:
        """Stop the embedded redis-server. It runs detached (its own session), so the harness's stop of this
        process group does not reach it, and falkordblite's async close leaves it running (it marks its server as
        managed by the async wrapper, which never shuts it down): SHUTDOWN it here, then make sure it is gone."""
        pid = self.db.client.pid
        try:
            self.loop.run(self._shutdown(), timeout=20)
        except Exception as exc:  # already stopped, or not answering: the signal below still ends it
            print(
                f"graphiti: shutting the embedded FalkorDB down: {type(exc).__name__}: {exc}",
                file=sys.stderr,
                flush=True,
            )
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)

    async def _shutdown(self) -> None:
        try:
            await self.db.client.shutdown(nosave=True, now=True, force=True)
        finally:
            await self.db.close()

    def _graph(self, namespace: str) -> Graphiti:
        graph = self.graphs.get(namespace)
        if graph is None:
            # built here, off the loop: FalkorDriver schedules its own index building when it finds a running loop,
            # and that task would race the awaited one below
            driver = FalkorDriver(falkor_db=self.db, database=graph_name(namespace))
            self.loop.run(driver.build_indices_and_constraints())
            graph = Graphiti(
                graph_driver=driver,
                llm_client=self.llm,
                embedder=self.embedder,
                cross_encoder=self.reranker,
                max_coroutines=1,
            )
            self.graphs[namespace] = graph
        return graph

    def describe(self) -> dict[str, Any]:
        return {
            "name": "graphiti",
            "library": "graphiti-core",
            "version": metadata.version("graphiti-core"),
            "store": f"FalkorDB embedded (falkordblite {metadata.version('falkordblite')}), one graph per namespace",
            "config": {
                "model": MODEL,
                "embedder": EMBED_MODEL,
                "reranker": "cosine of engram-bench/embed vectors (Graphiti's OpenAI cross-encoder replaced)",
                "max_coroutines": 1,
                "max_tokens": MAX_TOKENS,
            },
        }

    def reset(self, namespace: str) -> None:
        name = graph_name(namespace)
        self.graphs.pop(namespace, None)
        if name in self.loop.run(self.db.list_graphs()):
            self.loop.run(self.db.select_graph(name).delete())
        self.episodes[namespace] = {}
        self.dates[namespace] = {}
        self.empty[namespace] = 0
        self.failed[namespace] = 0
        self._graph(namespace)

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        graph = self._graph(namespace)
        episode = graph.add_episode(
            name=message["id"],
            episode_body=f"{message['speaker']}: {message['text']}",
            source_description=f"a conversation turn on {message['date']}",
            reference_time=reference_time(message),
            source=EpisodeType.message,
            group_id=graph_name(namespace),
        )
        self.dates.setdefault(namespace, {})[message["id"]] = message["date"]
        try:
            added = self.loop.run(episode)
        except Exception as exc:  # the library's failure, counted and logged; the endpoint's own are checked apart
            self.failed[namespace] = self.failed.get(namespace, 0) + 1
            first = (str(exc).splitlines() or [""])[0][:200]
            print(f"graphiti: message {message['id']}: {type(exc).__name__}: {first}", file=sys.stderr, flush=True)
            return {"usage": {"calls": None}, "stored": 0}
        self.episodes.setdefault(namespace, {})[added.episode.uuid] = message["id"]
        if not added.edges:
            self.empty[namespace] = self.empty.get(namespace, 0) + 1
            print(
                f"graphiti: message {message['id']} gave no fact ({len(added.nodes)} entities)",
                file=sys.stderr,
                flush=True,
            )
        return {"usage": {"calls": None}, "stored": len(added.edges)}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        graph = self._graph(namespace)
        found = self.loop.run(graph.search_(question, config=search_config(k or 10), group_ids=[graph_name(namespace)]))
        episodes = self.episodes.get(namespace, {})
        dates = self.dates.get(namespace, {})
        scored: list[tuple[float, dict[str, Any]]] = []
        for edge, score in zip(found.edges, found.edge_reranker_scores or [0.0] * len(found.edges), strict=False):
            sources = [episodes[u] for u in edge.episodes if u in episodes]
            when = dates.get(sources[0], "") if sources else ""
            scored.append((score, {"text": f"{when} {edge.fact}".strip(), "sources": sources, "score": score}))
        for node, score in zip(
            found.episodes, found.episode_reranker_scores or [0.0] * len(found.episodes), strict=False
        ):
            message_id = episodes.get(node.uuid)
            if message_id is None:  # not written since this namespace's reset (cannot happen; never a stray id)
                continue
            text = f"{dates.get(message_id, '')} {node.content}".strip()
            scored.append((score, {"text": text, "sources": [message_id], "score": score}))
        scored.sort(key=lambda pair: -pair[0])  # stable: facts before episodes at equal scores
        lines = [line for _, line in scored[: k or 10]]
        return {
            "lines": lines,
            "retrieved_tokens": approx_tokens([line["text"] for line in lines]),
            "usage": {"calls": 0},
        }

    def _count(self, namespace: str, query: str) -> int:
        driver = self._graph(namespace).driver
        records, _, _ = self.loop.run(driver.execute_query(query))
        return int(records[0]["n"]) if records else 0

    def stats(self, namespace: str) -> dict[str, Any]:
        return {
            "stored": self._count(namespace, "MATCH ()-[e:RELATES_TO]->() RETURN count(e) AS n"),
            "unit": "fact",
            "health": {
                "failed_writes": self.failed.get(namespace, 0),
                "empty_writes": self.empty.get(namespace, 0),
                "episodes": self._count(namespace, "MATCH (n:Episodic) RETURN count(n) AS n"),
                "entities": self._count(namespace, "MATCH (n:Entity) RETURN count(n) AS n"),
            },
        }


def _alive(pid: int, within_s: float = 5.0) -> bool:
    """Whether process `pid` is still there after waiting up to `within_s` for it to exit."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    return True


def _stop(_signum: int, _frame: Any) -> None:
    raise SystemExit(0)  # out of serve_forever, through the finally that shuts the embedded database down


if __name__ == "__main__":
    options = arguments()
    backend = GraphitiBackend(Path(options.data_dir))
    signal.signal(signal.SIGTERM, _stop)
    try:
        serve(backend, options.port)
    finally:
        backend.close()
