"""mem0 behind the memory protocol: the cross-check that the protocol loses nothing.

It runs with the project's own python (mem0ai is a dependency of the harness) and serves the in-process `mem0`
arm's system, `bench.systems.mem0_system.Mem0System`, one per namespace, built exactly as the runner builds it: the
same mem0 `Memory` configuration, pinned date, deterministic ids, MiniLM embedder and qdrant store (under the data
dir). Its model calls go through a gateway over the run's own cache (`bench.systems.handoff`), so the offline
stack's stand-in answers mem0's extraction prompt here as it does in-process, and the same requests share cache
keys. What differs from the in-process arm is only what the protocol carries: the turns and questions as JSON, the
lines and their source ids back, in another process. `tests/bench/systems/test_systems_mem0_protocol.py` checks that the
two arms give the same answers on `dev`.
"""

from __future__ import annotations

import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

# The helper beside this folder, and the harness of this same checkout (not whichever one is installed).
sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parents[2])]

from protocol_server import MemoryBackend, approx_tokens, arguments, serve  # noqa: E402

from bench.data.slices import SliceMessage, SliceQuestion  # noqa: E402
from bench.run.runner import KeyTap  # noqa: E402
from bench.systems.base import SystemContext  # noqa: E402
from bench.systems.handoff import gateway_from_run, run_from_env  # noqa: E402
from bench.systems.mem0_system import MEM0_VERSION, Mem0System  # noqa: E402


class Mem0Backend(MemoryBackend):
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.run = run_from_env()
        self.tap = KeyTap(gateway_from_run(self.run))
        self.systems: dict[str, Mem0System] = {}
        self._seen: tuple[set[str], int, int] = (set(), 0, 0)

    def _system(self, namespace: str) -> Mem0System:
        system = self.systems.get(namespace)
        if system is None:
            context = SystemContext(
                stack=self.run["stack"],
                models=self.run["models"],
                gateway=self.tap.as_gateway(),
                run_dir=self._folder(namespace),
                conversation=namespace,
                speakers=(),
            )
            system = self.systems[namespace] = Mem0System({"show_dates": True}, context)
        return system

    def _folder(self, namespace: str) -> Path:
        return self.data_dir / "".join(c if c.isalnum() or c in "-_" else "_" for c in namespace)

    def _calls(self) -> dict[str, Any]:
        """The cache keys and hit/miss counts of the calls made since the last reply."""
        keys, hits, misses = self._seen
        new = sorted(self.tap.keys - keys)
        report = {"cache_keys": new, "cache_hits": self.tap.hits - hits, "cache_misses": self.tap.misses - misses}
        self._seen = (set(self.tap.keys), self.tap.hits, self.tap.misses)
        return report

    def describe(self) -> dict[str, Any]:
        return {
            "name": "mem0",
            "library": "mem0ai",
            "version": MEM0_VERSION,
            "store": "qdrant local mode and mem0's SQLite history, one folder per namespace under the data dir",
            "config": {"stack": self.run["stack"], "models": self.run["models"], "show_dates": True},
        }

    def reset(self, namespace: str) -> None:
        system = self.systems.pop(namespace, None)
        if system is not None:
            system.close()
        shutil.rmtree(self._folder(namespace), ignore_errors=True)

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        when = datetime.fromisoformat(message["timestamp"]) if message.get("timestamp") else datetime(2000, 1, 1)
        turn = SliceMessage(
            id=message["id"],
            conversation=namespace,
            session=0,
            index=0,
            speaker=message["speaker"],
            text=message["text"],
            session_date=message["date"],
            timestamp=when,
        )
        usage = self._system(namespace).write(turn)
        reply = {"calls": usage.calls, "cost_usd": usage.cost_usd, "latency_ms": usage.write_ms, **self._calls()}
        return {"usage": reply, "stored": usage.facts}

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        asked = SliceQuestion(
            id="protocol",
            conversation=namespace,
            question=question,
            gold=None,
            category=0,
            category_name="",
            evidence=(),
            scored=False,
            asked_at=(),
        )
        found = self._system(namespace).retrieve(asked, k)
        lines = [{"text": t, "sources": list(s)} for t, s in zip(found.lines, found.sources, strict=True)]
        return {"lines": lines, "retrieved_tokens": approx_tokens(list(found.lines)), "usage": self._calls()}

    def facts(self, namespace: str) -> dict[str, Any]:
        listed = [
            {"id": f.fact_id, "text": f.text, "source": f.source_message_id, "active": f.active}
            for f in self._system(namespace).facts_for_audit()
        ]
        return {"facts": listed}

    def stats(self, namespace: str) -> dict[str, Any]:
        return {"stored": self._system(namespace).stats()["stored"], "unit": "memory"}


def main() -> None:
    options = arguments()
    serve(Mem0Backend(Path(options.data_dir)), options.port)


if __name__ == "__main__":
    main()
