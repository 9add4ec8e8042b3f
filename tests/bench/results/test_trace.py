"""A run leaves a trace next to each result: what the system decided about every line it showed."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from bench.data.slices import load_slice
from bench.errors import TraceError
from bench.results.schema import read_result
from bench.results.trace import Trace, read_trace, trace_of, write_trace
from bench.run.runner import run_arm
from bench.systems import build_system
from tests.bench.run.test_runner import options_for, workspace  # noqa: F401  (the runner tests' tiny workspace)
from tests.bench.systems.test_systems_engram import _context


def test_a_run_writes_a_trace_per_result_with_sources_evidence_and_turn_texts(workspace: dict[str, Path]) -> None:
    written = run_arm("turns", "dev", *options_for(workspace))
    for path in written:
        result = read_result(path)
        assert result.trace == path.name.replace(".json", ".trace.json.gz")
        trace = trace_of(path, result)
        assert trace is not None and len(trace.lines) == len(result.answers)
        for answer in result.answers:
            turns = trace.turns[answer.conversation]
            assert answer.sources is not None and len(answer.sources) == len(answer.lines or [])
            assert answer.evidence and set(answer.evidence) <= set(turns)
            for sources in answer.sources:
                assert set(sources) <= set(turns)
        # raw-turn-rag has no decisions to explain: no per-line details, no items.
        assert trace.items == {"conv-26": {}} and all(entry is None for entry in trace.lines)
        first = result.answers[0]
        assert trace.turns[first.conversation][first.sources[0][0]]["text"] in first.lines[0]


def test_a_trace_is_no_json_file_to_folder_scans_and_reruns_write_the_same_bytes(
    workspace: dict[str, Path],
) -> None:
    from bench.results.schema import iter_results

    first = run_arm("turns", "dev", *options_for(workspace))
    traces = {p.name: p.with_name(read_result(p).trace).read_bytes() for p in first}
    assert sorted(p.name for p, _ in iter_results(first[0].parent)) == ["turns__k2.json", "turns__k5.json"]
    again = run_arm("turns", "dev", *options_for(workspace))
    assert {p.name: p.with_name(read_result(p).trace).read_bytes() for p in again} == traces


def test_engram_explains_a_shown_fact_with_its_decisions_and_the_fact_that_superseded_it(tmp_path: Path) -> None:
    dev = load_slice("dev")
    first = dev.messages[0]
    moved = [
        replace(first, id="T:1", speaker="Ana", text="I live in Paris."),
        replace(
            first, id="T:2", speaker="Ana", text="I moved to Berlin.", timestamp=first.timestamp + timedelta(days=30)
        ),
        replace(
            first, id="T:3", speaker="Ana", text="I live in Berlin now.", timestamp=first.timestamp + timedelta(days=31)
        ),
    ]
    question = replace(dev.questions[0], question="Where does Ana live?", evidence=("T:3",))
    system = build_system("engram", {"preset": "E2"}, _context(tmp_path))
    try:
        for message in moved:
            system.write(message)
        shown = system.retrieve(question, None)
        assert shown.details and len(shown.details) == len(shown.lines)
        ids = [d["fact_id"] for d in shown.details]
        explained = system.trace(ids)
    finally:
        system.close()
    assert set(ids) <= set(explained)
    closed = [item for item in explained.values() if item["fact"]["closed_by"]]
    assert closed, "the Paris fact was closed by a later one"
    paris = closed[0]
    closer = explained[paris["fact"]["closed_by"]]  # the chain is walked to the fact that closed it
    assert paris["fact"]["id"] in closer["superseded"]
    closing = [d for d in closer["decisions"] if d.get("target") == paris["fact"]["id"]]
    assert closing and all(abs(sum(d["probs"].values()) - 1) < 1e-3 for d in closing)
    assert any(e["event"] == "close" for e in paris["history"])
    json.dumps(explained)  # plain JSON all the way down


def test_a_trace_that_does_not_match_its_result_is_refused(tmp_path: Path, workspace: dict[str, Path]) -> None:
    path = run_arm("turns", "dev", *options_for(workspace))[0]
    result = read_result(path)
    trace_path = path.with_name(result.trace)
    trace = read_trace(trace_path)
    write_trace(trace_path, Trace(result=trace.result, system=trace.system, lines=trace.lines[:-1], turns=trace.turns))
    with pytest.raises(TraceError, match=r"field lines: expected \d+ entries \(one per answer\), found \d+"):
        trace_of(path, result)
    trace_path.write_bytes(gzip.compress(json.dumps({"kind": "something else"}).encode()))
    with pytest.raises(TraceError, match="field kind: expected 'engram-bench trace'"):
        trace_of(path, result)
    trace_path.write_text("{}")
    with pytest.raises(TraceError, match="expected gzipped JSON, found BadGzipFile"):
        trace_of(path, result)
