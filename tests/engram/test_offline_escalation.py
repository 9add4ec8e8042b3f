"""§3.2's escalate zone through `Engram.offline` alone: a superseding answer below theta_esc goes to mem0's update
prompt, answered offline by the rules stand-in chat model (the same `RulesUpdateLLM` the harness's offline arms use),
instead of silently leaving the fact tentative.

The rules stand-in is rarely that unsure of a change (its relation answers are sharpened by a fitted temperature),
so the scenario lifts theta_esc above the answer it gives for a flat denial of a job: the zone, the escalator and
what its verdict does are the library's own.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from engram import Engram, config

SAID = datetime(2024, 9, 2, 18, 5)
LATER = datetime(2024, 10, 14, 8, 40)


def _denial(memory: Engram):
    memory.add("I work as a pharmacist.", speaker="Radek", when=SAID)
    return memory.add("I am not a pharmacist.", speaker="Radek", when=LATER)


def _typed_answer(tmp_path, minilm) -> float:
    memory = Engram.offline(tmp_path / "typed.db", embedder=minilm, escalate=False)
    (outcome,) = _denial(memory).outcomes
    assert outcome.relation == "contradiction" and not outcome.escalated
    return outcome.confidence


@pytest.mark.slow
def test_an_unsure_change_is_escalated_to_the_offline_update_prompt(tmp_path, minilm, monkeypatch):
    pi = _typed_answer(tmp_path, minilm)
    assert config.THETA_ESC < pi < config.THETA_ACT  # as shipped, the tentative zone
    monkeypatch.setattr(config, "THETA_ESC", pi + 0.05)

    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm)
    report = _denial(memory)

    (outcome,) = report.outcomes
    assert outcome.escalated and not outcome.tentative
    assert report.escalations == 1 and memory.stats()["escalations"] == 1
    escalation = [e for e in memory.explain("m1#0")["history"] if e["event"] == "escalation"]
    assert escalation and escalation[0]["llm"] == "contradiction"  # mem0's DELETE, read back as a relation
    # the escalator is labelled as the stand-in that answered, not as the article's LLM
    assert memory.escalator is not None and memory.escalator.model.startswith("rules-standin")


@pytest.mark.slow
def test_without_the_escalator_the_same_change_stays_tentative(tmp_path, minilm, monkeypatch):
    pi = _typed_answer(tmp_path, minilm)
    monkeypatch.setattr(config, "THETA_ESC", pi + 0.05)

    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm, escalate=False)
    report = _denial(memory)

    (outcome,) = report.outcomes
    assert outcome.tentative and not outcome.escalated
    assert memory.stats()["escalations"] == 0
