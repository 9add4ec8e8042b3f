"""Letta (formerly MemGPT) behind engram-bench's memory protocol, through `letta-client`, in its own environment.

Letta's memory lives in a Letta server, which this adapter does not start: it talks to the one at $LETTA_BASE_URL
(and $LETTA_API_KEY, if that server wants one). No Letta server with an embedded store installs from PyPI today
(docs/systems.md says what was tried), so the adapter's tests run it against a fake Letta server that answers the
same routes the way the client expects; a run against a real server is the user's to make.

What is measured is Letta's archival memory, the long-term store its agents search with their
`archival_memory_search` tool: each namespace gets its own agent, each message becomes one archival passage
(`[date] speaker: text`, created at the message's time, tagged with the message id), and a question is answered
from the server's embedding search over that agent's passages, top k. The agent's chat loop, which decides by
itself what to save, is not driven: that would measure a small model's tool use more than the store.

The agent is created with its embedding model set to the harness's gateway endpoint ($OPENAI_BASE_URL, model
`engram-bench/embed`, MiniLM, 384 dimensions), so the server's embedding calls come back through the harness; its
LLM is set to `engram-bench/extract` there too, although nothing here makes the agent think.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve  # noqa: E402

SOURCE_TAG = "engram-message:"  # a passage's tag naming the message it holds
EMBED_MODEL, DIMS, CHUNK_SIZE = "engram-bench/embed", 384, 300
CHAT_MODEL, CONTEXT_WINDOW = os.environ.get("ENGRAM_ADAPTER_MODEL", "engram-bench/extract"), 8192


def required_env(name: str, what: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise SystemExit(f"letta adapter: ${name} is not set: expected {what}")
    return value


class LettaBackend(MemoryBackend):
    def __init__(self) -> None:
        from letta_client import APIConnectionError, Letta  # imported here: a missing variable is named first

        self.unreachable = APIConnectionError
        self.base_url = required_env("LETTA_BASE_URL", "a running Letta server's address, e.g. http://127.0.0.1:8283")
        self.endpoint = required_env("OPENAI_BASE_URL", "the gateway endpoint the harness passes to every adapter")
        self.client = Letta(base_url=self.base_url, api_key=os.environ.get("LETTA_API_KEY") or "engram-bench")
        self.agents: dict[str, str] = {}  # namespace -> the agent holding its passages
        self.generation: dict[str, int] = {}
        self.stored: dict[str, int] = {}
        self.empty: dict[str, int] = {}

    @contextmanager
    def server_call(self, what: str) -> Iterator[None]:
        """A Letta server that does not answer is named with its address (the client's own error says neither)."""
        try:
            yield
        except self.unreachable as exc:
            raise ConnectionError(f"the Letta server at {self.base_url} did not answer ({what}): {exc}") from exc

    def describe(self) -> dict[str, Any]:
        return {
            "name": "letta",
            "library": "letta-client",
            "version": metadata.version("letta-client"),
            "store": f"the archival memory of one agent per namespace on the Letta server at {self.base_url}",
            "config": {
                "memory": "archival passages, one per message, tagged with the message id; the agent loop is not run",
                "retrieval": "the server's archival-memory search (embedding similarity), top k",
                "embedding_config": self.embedding_config(),
                "llm_config": self.llm_config(),
            },
        }

    def embedding_config(self) -> dict[str, Any]:
        return {
            "embedding_endpoint_type": "openai",
            "embedding_endpoint": self.endpoint,
            "embedding_model": EMBED_MODEL,
            "embedding_dim": DIMS,
            "embedding_chunk_size": CHUNK_SIZE,
        }

    def llm_config(self) -> dict[str, Any]:
        return {
            "model": CHAT_MODEL,
            "model_endpoint_type": "openai",
            "model_endpoint": self.endpoint,
            "context_window": CONTEXT_WINDOW,
        }

    def reset(self, namespace: str) -> None:
        old = self.agents.pop(namespace, None)
        generation = self.generation.get(namespace, -1) + 1
        self.generation[namespace] = generation
        with self.server_call("reset"):
            if old is not None:
                self.client.agents.delete(old)
            agent = self.client.agents.create(
                name=f"engram-bench-{namespace}-{generation}",
                embedding_config=self.embedding_config(),  # type: ignore[arg-type]
                llm_config=self.llm_config(),  # type: ignore[arg-type]
                memory_blocks=[],
                include_base_tools=False,
            )
        self.agents[namespace] = agent.id
        self.stored[namespace] = 0
        self.empty[namespace] = 0

    def _agent(self, namespace: str) -> str:
        if namespace not in self.agents:
            self.reset(namespace)
        return self.agents[namespace]

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        text = f"[{message['date']}] {message['speaker']}: {message['text']}"
        extra = {"created_at": message["timestamp"]} if message.get("timestamp") else {}
        agent = self._agent(namespace)
        with self.server_call("write"):
            passages = self.client.agents.passages.create(agent, text=text, tags=[SOURCE_TAG + message["id"]], **extra)
        if not passages:  # the server answered but stored nothing: say so, never a silent empty store
            self.empty[namespace] = self.empty.get(namespace, 0) + 1
            print(f"letta: message {message['id']} gave no archival passage", file=sys.stderr, flush=True)
        self.stored[namespace] = self.stored.get(namespace, 0) + len(passages)
        return {"usage": {"calls": None}, "stored": len(passages)}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent(namespace)
        with self.server_call("retrieve"):
            found = self.client.agents.passages.search(agent, query=question, top_k=k or 10)
        lines = []
        for result in found.results[: k or 10]:
            sources = [tag[len(SOURCE_TAG) :] for tag in result.tags or [] if tag.startswith(SOURCE_TAG)]
            lines.append({"text": result.content, "sources": sources, "score": None})
        texts = [line["text"] for line in lines]
        return {"lines": lines, "retrieved_tokens": approx_tokens(texts), "usage": {"calls": None}}

    def stats(self, namespace: str) -> dict[str, Any]:
        return {
            "stored": self.stored.get(namespace, 0),
            "unit": "passage",
            "health": {"empty_writes": self.empty.get(namespace, 0)},
        }


if __name__ == "__main__":
    options = arguments()
    serve(LettaBackend(), options.port)
