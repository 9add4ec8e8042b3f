"""The mem0 baseline: the real mem0ai 2.1.0 library, offline, storing and retrieving a few dev-slice turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.data.slices import load_slice
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.stacks import build_stack
from bench.systems import SystemContext, build_system
from bench.systems.mem0_system import PINNED_CURRENT_DATE, Mem0System

pytestmark = pytest.mark.slow
TURNS = 8


def _context(tmp: Path, cache: Path, strict: bool = False) -> SystemContext:
    dev = load_slice("dev")
    return SystemContext(
        stack="offline",
        models=build_stack("offline").models,
        gateway=Gateway(local=cache, subsets=[], strict=strict),
        run_dir=tmp,
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory):
    """One mem0 store built from the first dev turns (offline stack), shared by the scenarios below."""
    root = tmp_path_factory.mktemp("mem0")
    dev = load_slice("dev")
    system = build_system("mem0", {}, _context(root / "run1", root / "cache"))
    usages = [system.write(m) for m in dev.messages[:TURNS]]
    yield system, usages, dev, root
    system.close()


def test_mem0_really_stores_what_the_turns_say_with_their_source_turn(ingested) -> None:
    system, usages, dev, _ = ingested
    assert isinstance(system, Mem0System)
    assert all(u.calls == 1 for u in usages)  # mem0 2.1.0: exactly one extraction call per add()
    assert all(u.cost_usd == 0.0 for u in usages)  # offline stand-in
    facts = system.facts_for_audit()
    assert len(facts) == sum(u.facts for u in usages) > 0
    assert {f.source_message_id for f in facts} <= {m.id for m in dev.messages[:TURNS]}
    support_group = [f for f in facts if "support group" in f.text.lower()]
    assert support_group and support_group[0].source_message_id == "D1:3"
    stats = system.stats()
    assert stats["stored"] == stats["active"] == len(facts) and stats["closes_by_reason"] == {}


def test_mem0_retrieves_the_evidence_as_dated_lines(ingested) -> None:
    system, _, dev, _ = ingested
    question = next(q for q in dev.questions if q.evidence == ("D1:3",))
    retrieval = system.retrieve(question, 3)
    assert 0 < len(retrieval.lines) <= 3
    assert retrieval.lines[0].startswith(f"{dev.messages[2].session_date}: ")
    assert ("D1:3",) in retrieval.sources
    assert retrieval.notes["search_mode"] == "hybrid"


def test_mem0_runs_with_full_hybrid_search_offline_and_says_so(ingested) -> None:
    system, _, _, _ = ingested
    described = system.describe()
    assert described["search_mode"] == "hybrid"
    assert described["mem0_version"] == "2.1.0" and described["pinned_current_date"] == PINNED_CURRENT_DATE
    import mem0.memory.main as main

    assert main.MEM0_TELEMETRY is False


def test_the_extraction_prompt_carries_the_pinned_date_not_today() -> None:
    import mem0.configs.prompts as prompts

    prompt = prompts.generate_additive_extraction_prompt(existing_memories=[], new_messages="user: hi\n")
    assert f"## Current Date\n{PINNED_CURRENT_DATE}" in prompt


def test_a_second_run_replays_every_call_and_builds_the_same_store(ingested) -> None:
    system, _, dev, root = ingested
    first = [(f.fact_id, f.text, f.source_message_id) for f in system.facts_for_audit()]
    replay = build_system("mem0", {}, _context(root / "run2", root / "cache", strict=True))
    try:
        for message in dev.messages[:TURNS]:
            replay.write(message)  # strict: a call missing from the cache would raise CacheMiss
        again = [(f.fact_id, f.text, f.source_message_id) for f in replay.facts_for_audit()]
        question = next(q for q in dev.questions if q.evidence == ("D1:3",))
        assert again == first  # memory ids are derived from message ids, not uuid4
        assert replay.retrieve(question, 5).lines == system.retrieve(question, 5).lines
    finally:
        replay.close()


def test_a_replay_miss_inside_mem0_reaches_the_user_as_the_harness_cache_miss(ingested) -> None:
    from bench.errors import CacheMiss

    _, _, dev, root = ingested
    empty_cache_strict = build_system("mem0", {}, _context(root / "run3", root / "empty-cache", strict=True))
    try:
        with pytest.raises(CacheMiss, match="offline"):
            empty_cache_strict.write(dev.messages[0])  # mem0 wraps LLM errors; the miss must come out unwrapped
    finally:
        empty_cache_strict.close()
