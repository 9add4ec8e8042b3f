"""A newcomer replays the committed LongMemEval oracle-sample results of mem0 and of mcp-memory-service (an MCP memory
server; results/offline/longmemeval/oracle/sample/) from the calls shipped in cache/ alone, with an empty local
cache: the same command as the recording, `engram-bench run ARM --slice longmemeval:oracle/sample --mode replay`,
gives the same retrieved lines, answers and store, with no miss. Each run ingests 12 haystacks (272 turns): minutes,
so slow; a server arm also needs its environment (`engram-bench systems install NAME`, or `make adapters`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_adapters_local_server import adapter_ready, result_of, run_cli, sandbox

from bench.vocab import REPO_ROOT

pytestmark = [pytest.mark.slow]
SAMPLE = REPO_ROOT / "results" / "offline" / "longmemeval" / "oracle" / "sample"
SLICE = "longmemeval:oracle/sample"
IN_PROCESS = ("mem0",)
SERVERS = ("mcp-memory-service",)


@pytest.mark.parametrize("arm", [*IN_PROCESS, *SERVERS])
def test_a_committed_longmemeval_sample_result_replays_from_the_shipped_calls_alone(
    arm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if arm in SERVERS:
        adapter_ready(arm, server=False)
    [committed_path] = sorted(SAMPLE.glob(f"{arm}__k*.json"))
    committed = json.loads(committed_path.read_text())
    sandbox(tmp_path, monkeypatch)  # an empty local cache: every call must come from the shipped subsets
    run_cli(
        ["run", arm, "--slice", SLICE, "--mode", "replay", "--out", str(tmp_path / "again"), "--quiet"],
        monkeypatch,
        capsys,
    )
    again = result_of(tmp_path / "again")
    assert again["calls"]["misses"] == 0 and again["calls"]["hits"] > 0
    assert [a["lines"] for a in again["answers"]] == [a["lines"] for a in committed["answers"]]
    assert [a["answer"] for a in again["answers"]] == [a["answer"] for a in committed["answers"]]
    assert [a["label"] for a in again["answers"]] == [a["label"] for a in committed["answers"]]
    assert again["store"] == committed["store"]
