"""The protocol loses nothing: mem0 in its own process behind the memory protocol (systems/mem0/, arm
`mem0-protocol`) answers every dev question exactly as the in-process mem0 arm does, on the offline stack."""

from __future__ import annotations

import json

import pytest

from bench.runner import RunOptions, run_arm

COMPARED = ("question_id", "answer", "label", "lines", "sources", "retrieved_tokens", "evidence_recall", "f1")


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    folder = tmp_path_factory.mktemp("mem0-both")
    results = []
    for arm in ("mem0", "mem0-protocol"):
        options = RunOptions(
            runs_root=folder / "runs", out=folder / arm, cache_dir=folder / "cache", progress=False, ks=(8,)
        )
        [written] = run_arm(arm, "dev", options)
        result = json.loads(written.read_text())
        result["keys"] = set(written.with_suffix(".calls.txt").read_text().split())
        results.append(result)
    return results[0], results[1]


def test_every_dev_answer_is_the_same_in_process_and_through_the_protocol(both: tuple[dict, dict]) -> None:
    inside, outside = both
    assert outside["system"] == "http" and inside["system"] == "mem0"
    assert len(inside["answers"]) == len(outside["answers"]) == 35
    for one, other in zip(inside["answers"], outside["answers"], strict=True):
        assert {f: one[f] for f in COMPARED} == {f: other[f] for f in COMPARED}
    assert inside["accuracy"] == outside["accuracy"]


def test_the_store_and_its_update_scoring_cross_the_protocol_too(both: tuple[dict, dict]) -> None:
    inside, outside = both
    assert inside["store"]["stored"] == outside["store"]["stored"] > 0
    assert inside["updates"] == outside["updates"]
    assert inside["extras"]["facts_produced"] == outside["extras"]["facts_produced"]
    # The adapter's mem0 calls are the in-process arm's requests (the same cache keys); the one extra call is the
    # isolation canary's extraction, in a namespace of its own.
    assert inside["keys"] < outside["keys"]
    assert len(outside["keys"] - inside["keys"]) == 1
    assert outside["calls"]["misses"] <= 1


def test_the_result_records_which_library_answered_and_how(both: tuple[dict, dict]) -> None:
    _, outside = both
    described = outside["extras"]["system"]
    assert described["memory_system"]["library"] == "mem0ai"
    assert described["memory_system"]["version"] == "2.1.0"
    assert "qdrant" in described["memory_system"]["store"]
    assert described["adapter"]["environment"] == "project"
