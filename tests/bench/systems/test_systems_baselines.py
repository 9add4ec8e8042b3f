"""The registry and the two new baselines (full-context, raw-turn-rag) on the real dev slice."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.data.slices import load_slice
from bench.errors import ConfigError
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.systems import SystemContext, build_system, get_system, system_names


@pytest.fixture(scope="module")
def dev():
    return load_slice("dev")


@pytest.fixture
def context(tmp_path: Path, dev) -> SystemContext:
    return SystemContext(
        stack="offline",
        models={},
        gateway=Gateway(local=tmp_path / "cache", subsets=[]),
        run_dir=tmp_path / "run",
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )


def test_every_shipped_system_is_found_by_name() -> None:
    assert {"engram", "mem0", "full-context", "raw-turn-rag"} <= set(system_names())
    assert get_system("raw-turn-rag").name == "raw-turn-rag"


def test_an_unknown_system_or_setting_is_refused_with_the_accepted_values(context: SystemContext) -> None:
    with pytest.raises(ConfigError, match="unknown system 'memgpt'; known systems: .*full-context.*raw-turn-rag"):
        get_system("memgpt")
    with pytest.raises(ConfigError, match=r"settings\.top_n: unknown setting .*accepted: show_dates"):
        build_system("raw-turn-rag", {"top_n": 3}, context)
    with pytest.raises(ConfigError, match=r"settings\.show_dates: expected bool, found str 'yes'"):
        build_system("raw-turn-rag", {"show_dates": "yes"}, context)


def test_full_context_shows_every_turn_so_far_with_dates_and_ignores_k(context: SystemContext, dev) -> None:
    system = build_system("full-context", {}, context)
    for message in dev.messages[:10]:
        assert system.write(message).cost_usd == 0.0
    retrieval = system.retrieve(dev.questions[0], 3)
    assert len(retrieval.lines) == 10 and retrieval.notes["k_ignored"] is True
    first = dev.messages[0]
    assert retrieval.lines[0] == f"[{first.session_date}] {first.speaker}: {first.text}"
    assert retrieval.sources[0] == (first.id,)
    assert system.stats()["stored"] == 10


@pytest.mark.slow
def test_raw_turn_rag_finds_the_evidence_turn_among_the_top_k(context: SystemContext, dev) -> None:
    system = build_system("raw-turn-rag", {}, context)
    for message in dev.messages:
        system.write(message)
    hits = 0
    single_evidence = [q for q in dev.questions if len(q.evidence) == 1][:10]
    for question in single_evidence:
        retrieval = system.retrieve(question, 5)
        assert len(retrieval.lines) == 5
        assert all(line.startswith("[") for line in retrieval.lines)
        hits += any(question.evidence[0] in sources for sources in retrieval.sources)
    # Cosine over raw turns is a real retriever: most single-evidence questions find their turn in the top 5.
    assert hits >= len(single_evidence) // 2
    # A smaller budget is a prefix of a larger one: the runner may sweep k from one retrieval.
    question = single_evidence[0]
    assert system.retrieve(question, 3).lines == system.retrieve(question, 10).lines[:3]
    assert len(system.retrieve(question, None).lines) == len(dev.messages)


def test_raw_turn_rag_can_hide_dates(context: SystemContext, dev) -> None:
    system = build_system("raw-turn-rag", {"show_dates": False}, context)
    system.write(dev.messages[0])
    line = system.retrieve(dev.questions[0], 1).lines[0]
    assert line == f"{dev.messages[0].speaker}: {dev.messages[0].text}"
