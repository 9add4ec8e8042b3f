"""One scenario on the real offline stack (rules extractor + rules decider stand-ins over MiniLM).

Slow-ish (spaCy and MiniLM load once per session); the gate-by-gate checks use the scripted backend instead.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from engram import Engram


@pytest.mark.slow
def test_offline_stack_keeps_current_facts_through_a_plan_and_a_second_hobby(tmp_path, minilm):
    memory = Engram.offline(tmp_path / "engram.db", embedder=minilm)
    memory.add("I live in Paris.", speaker="Ana", when=datetime(2023, 5, 1))
    memory.add("I'm thinking of moving to Rome.", speaker="Ana", when=datetime(2023, 5, 20))
    memory.add("I like painting.", speaker="Ana", when=datetime(2023, 6, 2))
    memory.add("I like hiking.", speaker="Ana", when=datetime(2023, 6, 3))

    open_texts = [f.text for f in memory.facts()]
    assert any("Paris" in t for t in open_texts), open_texts  # a plan closes nothing
    assert any("painting" in t for t in open_texts), open_texts  # a second hobby does not replace the first
    decisions = memory.explain(memory.facts()[0].id)["decisions"]
    assert decisions and all(d.backend == "rules" and "standin" in d.model for d in decisions)  # labelled
    assert memory.search("Where does Ana live?", k=3)
