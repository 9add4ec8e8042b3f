"""The cognee memory backend (imported by server.py once cognee's settings are in the environment)."""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import threading
from collections.abc import Coroutine
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import cognee
from cognee import SearchType
from cognee.infrastructure.llm import retry_config
from protocol_server import MemoryBackend, approx_tokens
from tenacity import stop_after_attempt

Result = TypeVar("Result")

# cognee's model adapters are imported on the first model call, and their retry decorators read this stop condition
# then. cognee 1.6.5 retries a failed structured call for at least 240 s with exponential back-off; through the
# harness a retry is the same request, answered from the call cache with the same reply, so it could only fail again
# after minutes of sleep (in a replay too). One attempt: the failure reaches the write, which counts it in
# health.failed_writes. instructor's own re-asks (a different request carrying the validation error) still run.
LLM_ADAPTER_MODULE = (
    "cognee.infrastructure.llm.structured_output_framework.litellm_instructor.llm.generic_llm_api.adapter"
)
if LLM_ADAPTER_MODULE in sys.modules:
    raise SystemExit(f"cognee adapter: {LLM_ADAPTER_MODULE} was imported with cognee, so its retry cannot be set")
retry_config.llm_retry_stop_condition = stop_after_attempt(1)


# Not cognee's default ("llm": a summary per chunk, asked of the model at the same time as the chunk's graph). Each
# chunk's summary is built from its extracted graph instead, so a cognify's model calls come one after another: when a
# concurrent graph extraction failed, cognee cancelled the summary call at a point that depended on timing, and a
# strict replay could then ask for a reply the record never got. The retrieval here (CHUNKS) never reads summaries.
SUMMARY_METHOD = "from_extraction"


class LoopThread:
    """One event loop for the server's life: cognee caches async engines (SQLAlchemy, LanceDB) bound to the loop
    that first used them, so every call runs on the same loop, from whichever request thread asks."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="cognee-loop", daemon=True).start()

    def run(self, work: Coroutine[Any, Any, Result]) -> Result:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()


def document_name(text: str) -> str:
    """The name cognee gives a text added as a string: `text_` and the md5 of its content."""
    return "text_" + hashlib.md5(text.encode("utf-8")).hexdigest()


def chunks_of(found: list[Any]) -> list[dict[str, Any]]:
    """The chunks of a search answer. With access control on (see server.py) cognee answers one entry per dataset
    searched, `{"dataset_name", "search_result": [chunks], "error"?}`; a dataset's error is raised, not dropped."""
    chunks: list[dict[str, Any]] = []
    for entry in found:
        if isinstance(entry, dict) and "dataset_name" in entry:
            if entry.get("error"):
                raise RuntimeError(f"cognee search of dataset {entry['dataset_name']}: {entry['error']}")
            chunks.extend(entry.get("search_result") or [])
        elif isinstance(entry, dict):
            chunks.append(entry)
    return chunks


class CogneeBackend(MemoryBackend):
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.loop = LoopThread()
        self.generation: dict[str, int] = {}
        self.sources: dict[str, dict[str, list[str]]] = {}  # namespace -> document name -> message ids
        self.failed: dict[str, int] = {}
        self.stored: dict[str, int] = {}
        self.loop.run(self._fresh_store())

    async def _fresh_store(self) -> None:
        # the data dir is the run's own: anything there is a previous run's, which this one must not see
        await cognee.prune.prune_data()
        await cognee.prune.prune_system(metadata=True)

    def _dataset(self, namespace: str) -> str:
        safe = re.sub(r"[^A-Za-z0-9_]", "_", namespace)
        return f"{safe}_{self.generation.get(namespace, 0)}"

    def describe(self) -> dict[str, Any]:
        return {
            "name": "cognee",
            "library": "cognee",
            "version": metadata.version("cognee"),
            "store": f"cognee's embedded defaults: SQLite, LanceDB {metadata.version('lancedb')}, its graph store; "
            "one dataset per namespace",
            "config": {
                "llm": "litellm + instructor json_schema_mode, engram-bench/extract at the gateway endpoint",
                "summary_method": SUMMARY_METHOD,
                "failed_cognify": "the message's document is deleted (not retried with the next message)",
                "embeddings": "engram-bench/embed (384 dims) at the gateway endpoint",
                "retrieval": "SearchType.CHUNKS over the namespace's dataset, top k",
            },
        }

    def reset(self, namespace: str) -> None:
        if namespace in self.generation or namespace in self.sources:
            self.generation[namespace] = self.generation.get(namespace, 0) + 1
        self.sources[namespace] = {}
        self.failed[namespace] = 0
        self.stored[namespace] = 0

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        text = f"[{message['date']}] {message['speaker']}: {message['text']}"
        dataset = self._dataset(namespace)
        name = document_name(text)
        known = self.sources.setdefault(namespace, {})
        new_document = name not in known
        known.setdefault(name, []).append(message["id"])
        self.loop.run(cognee.add(text, dataset_name=dataset))
        try:
            self.loop.run(cognee.cognify(datasets=[dataset], summary_method=SUMMARY_METHOD))
        except Exception as exc:  # a reply failing cognee's validation (one attempt, see the top): counted, run goes on
            self.failed[namespace] = self.failed.get(namespace, 0) + 1
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            print(f"cognee: cognify of message {message['id']} failed: {reason}", file=sys.stderr, flush=True)
            if new_document:
                self.loop.run(self._drop_document(dataset, name))
                del known[name]
            return {"usage": {"calls": None}, "stored": 0}
        self.stored[namespace] = self.stored.get(namespace, 0) + 1
        return {"usage": {"calls": None}, "stored": 1}

    async def _drop_document(self, dataset_name: str, name: str) -> None:
        """Delete a document whose cognify failed. cognee keeps it pending and cognifies it again with the next
        message's; that retry would count as the next write's, and whether it succeeds depends on what ran first."""
        for dataset in await cognee.datasets.list_datasets():
            if dataset.name != dataset_name:
                continue
            for data in await cognee.datasets.list_data(dataset.id):
                if data.name == name:
                    await cognee.datasets.delete_data(dataset_id=dataset.id, data_id=data.id)
                    return
        raise RuntimeError(f"cognee: failed document {name} is not in dataset {dataset_name}, so it cannot be dropped")

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        if not self.stored.get(namespace):  # nothing cognified (or every cognify failed): cognee's search would raise
            return {"lines": [], "retrieved_tokens": 0, "usage": {"calls": 0}}
        found = self.loop.run(
            cognee.search(
                query_text=question, query_type=SearchType.CHUNKS, datasets=[self._dataset(namespace)], top_k=k or 10
            )
        )
        known = self.sources.get(namespace, {})
        lines = []
        for chunk in chunks_of(found)[: k or 10]:
            text = str(chunk.get("text", "")).strip()
            sources = known.get(str(chunk.get("document_name", "")), [])
            if text:
                lines.append({"text": text, "sources": sources, "score": chunk.get("score")})
        return {"lines": lines, "retrieved_tokens": approx_tokens([line["text"] for line in lines]), "usage": {"calls": 1}}

    def stats(self, namespace: str) -> dict[str, Any]:
        return {
            "stored": self.stored.get(namespace, 0),
            "unit": "document",
            "health": {"failed_writes": self.failed.get(namespace, 0)},
        }
