"""A memory service in another process that asks a model for every message it stores, the way A-MEM or LangMem do:
through the `openai` SDK at $OPENAI_BASE_URL, model `engram-bench/extract`, then it keeps the model's note beside
the turn. Like those libraries, it swallows a failed model call and stores the turn with an empty note, so the test
can check that the harness still stops the run (the endpoint's error, not the service's silence, decides).

Run as: python noting_memory_service.py --port N   (speaks docs/memory-protocol.md through systems/protocol_server.py)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "systems"))
from protocol_server import MemoryBackend, approx_tokens, arguments, serve

WORD = re.compile(r"[a-z0-9']{3,}")


class NotingMemory(MemoryBackend):
    def __init__(self) -> None:
        self.client = openai.OpenAI(max_retries=0)  # base URL and key from the environment the harness sets
        self.notes: dict[str, list[dict[str, Any]]] = {}
        self.failed_calls = 0

    def describe(self) -> dict[str, Any]:
        return {
            "name": "noting-memory",
            "library": "noting-memory",
            "version": "0.0.1",
            "store": "in memory",
            "config": {},
        }

    def reset(self, namespace: str) -> None:
        self.notes[namespace] = []

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = self.client.chat.completions.create(
                model="engram-bench/extract",
                messages=[
                    {"role": "system", "content": "Write one short note about what this message tells us."},
                    {"role": "user", "content": f"{message['speaker']}: {message['text']}"},
                ],
                max_tokens=40,
                temperature=0,
            )
            note = reply.choices[0].message.content or ""
            usage = {"calls": 1, "input_tokens": reply.usage.prompt_tokens if reply.usage else None}
        except openai.OpenAIError:
            self.failed_calls += 1  # swallowed, as the libraries this stands for do
            note, usage = "", {"calls": 1}
        self.notes.setdefault(namespace, []).append({**message, "note": note})
        return {"usage": usage, "stored": 1}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        asked = set(WORD.findall(question.lower()))
        items = self.notes.get(namespace, [])
        ranked = sorted(items, key=lambda n: -len(asked & set(WORD.findall(n["text"].lower()))))
        lines = [
            {"text": f"{n['speaker']}: {n['text']} (note: {n['note']})", "sources": [n["id"]], "score": None}
            for n in ranked[: k or len(ranked)]
        ]
        return {
            "lines": lines,
            "retrieved_tokens": approx_tokens([line["text"] for line in lines]),
            "usage": {"calls": 0},
        }

    def stats(self, namespace: str) -> dict[str, Any]:
        notes = self.notes.get(namespace, [])
        return {"stored": len(notes), "unit": "note", "health": {"empty_notes": sum(1 for n in notes if not n["note"])}}


if __name__ == "__main__":
    serve(NotingMemory(), arguments().port)
