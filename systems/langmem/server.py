"""LangMem behind engram-bench's memory protocol, in its own environment.

Each written message goes to LangMem's memory store manager (`create_memory_store_manager`): it searches the
namespace's memories, then asks the model, with tools and tool_choice "any" (OpenAI's "required"), to insert new
memories or patch existing ones, and applies the calls to LangGraph's store. The model is LangChain's `ChatOpenAI`
at $OPENAI_BASE_URL (the harness's gateway endpoint), `engram-bench/extract`; the store's vector index embeds with
`engram-bench/embed` there too (the local MiniLM), so every call of the library reaches the harness's cache.

LangMem does not say which message a memory came from, so this adapter records it: after each write, the memories
that appeared or changed name that message as a source. A write that changed nothing (a model that called no tool,
which LangMem accepts silently) is counted in /stats as `empty_writes` and logged on stderr. A write whose manager
failed (trustcall retries a tool call that does not validate, up to `RECURSION_LIMIT` graph steps; a small model
can exhaust them) is counted as `failed_writes`, logged, and the run goes on: the library's failure is part of what
is measured. A failure of the endpoint itself (a replay miss) still stops the run, by the harness's own check.
"""

from __future__ import annotations

import os
import random
import sys
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve  # noqa: E402

MODEL = os.environ.get("ENGRAM_ADAPTER_MODEL", "engram-bench/extract")
_IDS = random.Random(0)


def _replayable_uuid4() -> uuid.UUID:
    """LangMem and trustcall name memories and messages with uuid4, and those ids reach the model's prompts (the
    existing memories are listed by id), so a second run would send different requests and never hit the cache.
    Ids drawn from a seeded generator (the same sequence on every run of the same writes) keep a run replayable."""
    return uuid.UUID(int=_IDS.getrandbits(128), version=4)


uuid.uuid4 = _replayable_uuid4  # before langmem and trustcall are imported (they call uuid.uuid4 at run time)
EMBED_MODEL = "engram-bench/embed"
DIMS = 384  # MiniLM's
RECURSION_LIMIT = 10  # graph steps per write: LangMem's default 25 lets a small model retry one write 20 times


def _content(value: dict[str, Any]) -> str:
    """A stored memory's text (LangMem keeps {"kind": "Memory", "content": {"content": text}})."""
    content = value.get("content")
    if isinstance(content, dict):
        content = content.get("content", content)
    return str(content)


class LangMemBackend(MemoryBackend):
    def __init__(self) -> None:
        from langchain_openai import ChatOpenAI, OpenAIEmbeddings
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager

        base_url = os.environ["OPENAI_BASE_URL"]
        key = os.environ.get("OPENAI_API_KEY", "none")
        embeddings = OpenAIEmbeddings(
            model=EMBED_MODEL, base_url=base_url, api_key=key, check_embedding_ctx_length=False, max_retries=0
        )
        self.store = InMemoryStore(index={"dims": DIMS, "embed": embeddings})
        model = ChatOpenAI(model=MODEL, base_url=base_url, api_key=key, temperature=0, max_retries=0)
        self.manager = create_memory_store_manager(model, namespace=("memories", "{langgraph_user_id}"), store=self.store)
        self.sources: dict[str, dict[str, list[str]]] = {}
        self.dates: dict[str, dict[str, str]] = {}
        self.empty: dict[str, int] = {}
        self.failed: dict[str, int] = {}

    def _snapshot(self, namespace: str) -> dict[str, str]:
        items = self.store.search(("memories", namespace), limit=10_000)
        return {item.key: _content(item.value) for item in items}

    def describe(self) -> dict[str, Any]:
        return {
            "name": "langmem",
            "library": "langmem",
            "version": metadata.version("langmem"),
            "store": f"langgraph {metadata.version('langgraph')} InMemoryStore, {DIMS}-dim index via {EMBED_MODEL}",
            "config": {"model": MODEL, "tool_choice": "any", "enable_deletes": False},
        }

    def reset(self, namespace: str) -> None:
        for key in self._snapshot(namespace):
            self.store.delete(("memories", namespace), key)
        self.sources[namespace] = {}
        self.dates[namespace] = {}
        self.empty[namespace] = 0
        self.failed[namespace] = 0

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        before = self._snapshot(namespace)
        said = f"[{message['date']}] {message['speaker']}: {message['text']}"
        config = {"configurable": {"langgraph_user_id": namespace}, "recursion_limit": RECURSION_LIMIT}
        try:
            self.manager.invoke({"messages": [{"role": "user", "content": said}]}, config=config)
        except Exception as exc:  # the library's failure, counted and logged; the endpoint's own are checked apart
            self.failed[namespace] = self.failed.get(namespace, 0) + 1
            first = (str(exc).splitlines() or [""])[0][:200]
            print(f"langmem: message {message['id']}: {type(exc).__name__}: {first}", file=sys.stderr, flush=True)
        after = self._snapshot(namespace)
        changed = [key for key, text in after.items() if before.get(key) != text]
        sources = self.sources.setdefault(namespace, {})
        for key in changed:
            sources.setdefault(key, []).append(message["id"])
            self.dates.setdefault(namespace, {})[key] = message["date"]
        if not changed:
            self.empty[namespace] = self.empty.get(namespace, 0) + 1
            print(f"langmem: message {message['id']} changed no memory (the model called no tool)", file=sys.stderr, flush=True)
        return {"usage": {"calls": None}, "stored": len(changed)}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        found = self.store.search(("memories", namespace), query=question, limit=k or 10)
        sources = self.sources.get(namespace, {})
        dates = self.dates.get(namespace, {})
        lines = [
            {"text": f"{dates.get(item.key, '')} {_content(item.value)}".strip(), "sources": sources.get(item.key, []), "score": item.score}
            for item in found
        ]
        return {"lines": lines, "retrieved_tokens": approx_tokens([line["text"] for line in lines]), "usage": {"calls": 0}}

    def stats(self, namespace: str) -> dict[str, Any]:
        return {
            "stored": len(self._snapshot(namespace)),
            "unit": "memory",
            "health": {"empty_writes": self.empty.get(namespace, 0), "failed_writes": self.failed.get(namespace, 0)},
        }


if __name__ == "__main__":
    options = arguments()
    serve(LangMemBackend(), options.port)
