"""A newcomer replays the shipped A-MEM, LangMem, Graphiti and cognee runs (cache/local-adapters/, SmolLM2-135M on
the local stack) for $0, with no llama.cpp and no model server: only the adapter's own environment is needed.
Plumbing, not quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_adapters_local_server import adapter_ready, result_of, run_cli, sandbox, the_run

from bench.vocab import CACHE_DIR

SHIPPED = CACHE_DIR / "local-adapters"


@pytest.mark.parametrize("adapter", ["a-mem", "langmem", "graphiti", "cognee"])
def test_a_shipped_adapter_run_replays_from_the_committed_calls_alone(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter_ready(adapter, server=False)
    sandbox(tmp_path, monkeypatch)  # an empty local cache: every call must come from the shipped subset
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # the stack's own address, the one the calls were keyed on
    run_cli(the_run(adapter, "replay", tmp_path / "again"), monkeypatch, capsys)
    again = result_of(tmp_path / "again")
    recorded = json.loads(next((SHIPPED / "recorded").glob(f"{adapter}__k*.json")).read_text())
    assert again["calls"]["misses"] == 0 and again["calls"]["hits"] > 0
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in recorded["answers"]]
    assert [a["answer"] for a in again["answers"]] == [a["answer"] for a in recorded["answers"]]
    assert again["store"] == recorded["store"]
