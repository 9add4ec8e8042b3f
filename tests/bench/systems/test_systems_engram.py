"""engram as a harness system: settings -> flags, stack -> models, and a small offline ingestion."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from bench.data.slices import load_slice
from bench.errors import ConfigError
from bench.models.clients.wrappers import GatewayDecider, GatewayExtractor
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.providers.jev.client import JevDecider
from bench.models.providers.offline.standins import RulesUpdateStandin
from bench.models.stacks import build_stack
from bench.systems import SystemContext, build_system
from bench.systems.engram_system import EngramSystem, flags_for
from engram import Flags, Mem0PromptExtractor

TURNS = 6


def _context(tmp: Path, stack: str = "offline", cache: Path | None = None, strict: bool = False) -> SystemContext:
    dev = load_slice("dev")
    return SystemContext(
        stack=stack,
        models=build_stack(stack).models,
        gateway=Gateway(local=cache or tmp / "cache", subsets=[], strict=strict),
        run_dir=tmp / "run",
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )


def test_presets_and_flag_overrides_resolve_to_engram_flags(tmp_path: Path) -> None:
    settings = EngramSystem.validate_settings({"preset": "E2"})
    assert flags_for(settings) == Flags.e2()
    frozen_off = EngramSystem.validate_settings({"retrieval_rerank": False})
    assert flags_for(frozen_off) == Flags.frozen().but(retrieval_rerank=False)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"preset": "E5"}, r"settings\.preset: expected one of \['E4_FROZEN', 'E2', 'ORIGINAL_FROZEN'\]"),
        ({"retrieval_rerank": "off"}, r"settings\.retrieval_rerank: expected bool, found str"),
        ({"temporal_gate": "sometimes"}, r"settings\.temporal_gate: expected one of \['not_planned_mass'"),
        ({"rerank": False}, r"settings\.rerank: unknown setting for system 'engram'; accepted: .*retrieval_rerank"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        EngramSystem.validate_settings(settings)


def test_a_chat_model_cannot_answer_typed_questions_but_can_decide_relations(tmp_path: Path) -> None:
    context = _context(tmp_path, "paper")
    claude_decides = replace(context, models={**context.models, "decide": "anthropic/claude-sonnet-4-6"})
    with pytest.raises(ConfigError, match=r"anthropic/claude-sonnet-4-6 cannot serve as a decision backend"):
        build_system("engram", {"preset": "E2"}, claude_decides)
    system = build_system("engram", {"preset": "E2", "relation_decider": "llm_update"}, context)
    try:
        # v1 e2_llm: the LLM decides relations, Jev still answers the typed fact questions.
        assert isinstance(system.decider, JevDecider) and system.relation_decider.model == "claude-sonnet-4-6"
    finally:
        system.close()


def test_the_paper_stack_wires_claude_extraction_and_jev_without_calling_anything(tmp_path: Path) -> None:
    system = build_system("engram", {}, _context(tmp_path, "paper"))
    try:
        assert isinstance(system.extractor, Mem0PromptExtractor) and system.extractor.model == "claude-haiku-4-5"
        assert isinstance(system.decider, JevDecider) and system.decider.model == "jev-1.13.0"
        assert system.escalator.model == "claude-sonnet-4-6"
    finally:
        system.close()


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("engram")
    dev = load_slice("dev")
    system = build_system("engram", {}, _context(root))
    usages = [system.write(m) for m in dev.messages[:TURNS]]
    yield system, usages, dev, root
    system.close()


def test_offline_engram_goes_through_stand_ins_and_stores_facts_with_their_turns(offline_run) -> None:
    system, usages, dev, _ = offline_run
    assert isinstance(system.extractor, GatewayExtractor) and isinstance(system.decider, GatewayDecider)
    assert isinstance(system.escalator.llm, RulesUpdateStandin)
    assert all(u.cost_usd == 0.0 for u in usages) and sum(u.facts for u in usages) > 0
    facts = system.facts_for_audit()
    assert facts and {f.source_message_id for f in facts} <= {m.id for m in dev.messages[:TURNS]}
    stats = system.stats()
    assert {"stored", "active", "tentative", "closes_by_reason", "reopens", "escalations"} <= set(stats)
    assert stats["stored"] == len(facts)


def test_offline_engram_retrieves_rendered_lines_and_k_is_a_prefix(offline_run) -> None:
    system, _, dev, _ = offline_run
    question = next(q for q in dev.questions if q.evidence == ("D1:3",))
    everything = system.retrieve(question, None)
    top = system.retrieve(question, 2)
    assert top.lines == everything.lines[:2] and len(top.lines) == 2
    assert all(line.startswith("[said 2023-05-08]") for line in top.lines)
    assert ("D1:3",) in everything.sources
    assert system.describe()["flags"] == Flags.frozen().describe()


def test_a_close_is_audited_with_the_turn_that_closed_it(tmp_path: Path) -> None:
    dev = load_slice("dev")
    first = dev.messages[0]
    moved = [
        replace(first, id="T:1", speaker="Ana", text="I live in Paris."),
        replace(
            first, id="T:2", speaker="Ana", text="I live in Berlin now.", timestamp=first.timestamp + timedelta(days=30)
        ),
    ]
    # E2 closes on one confident superseding answer, so a single update is enough to see a close.
    system = build_system("engram", {"preset": "E2"}, _context(tmp_path))
    try:
        for message in moved:
            system.write(message)
        audit = {f.source_message_id: f for f in system.facts_for_audit()}
        assert not audit["T:1"].active
        assert (audit["T:1"].closed_by, audit["T:1"].closed_reason) == ("T:2", "superseded")
        assert audit["T:2"].active
        assert system.stats()["closes_by_reason"] == {"superseded": 1}
    finally:
        system.close()
