"""mem0's update prompt as a decision (escalation and the LLM-decider arm), and its offline stand-in chat model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import pytest

from engram import Completion, Engram, Flags, LLMError, RulesExtractor
from engram.deciders import LLMRelationDecider, RulesDecider, RulesUpdateLLM
from engram.deciders._llm import map_update_events, mem0_update_decision, parse_events, update_prompt


@pytest.fixture(scope="module")
def standin_llm(minilm) -> RulesUpdateLLM:
    return RulesUpdateLLM(RulesDecider(minilm))


@dataclass
class Recorder:
    """A local chat model with a fixed reply that records every call."""

    reply: str
    calls: list[dict] = field(default_factory=list)

    def complete(self, **call) -> Completion:
        self.calls.append(call)
        return Completion(
            text=self.reply,
            model=call["model"],
            input_tokens=1200,
            output_tokens=80,
            cost_usd=0.0048,
            latency_ms=6100.0,
        )


def events(*pairs: tuple[str, str]) -> list[dict]:
    return [{"id": i, "text": "t", "event": e} for i, e in pairs]


def test_events_map_with_delete_first_then_update_then_add_then_duplicate():
    assert map_update_events(events(("0", "UPDATE"), ("1", "DELETE")), 2) == ("contradiction", 1, None)
    assert map_update_events([{"id": "1", "event": "UPDATE", "text": "merged"}], 2) == ("rewrite", 1, "merged")
    assert map_update_events(events(("0", "NONE"), ("2", "ADD")), 2) == ("new", None, None)
    assert map_update_events(events(("0", "NONE"), ("1", "NONE")), 2) == ("duplicate", 0, None)
    assert map_update_events(events(("0", "ADD")), 0) == ("new", None, None)  # no candidates


def test_events_on_ids_that_are_not_candidates_do_not_close_anything():
    assert map_update_events(events(("5", "DELETE"), ("0", "NONE")), 2) == ("duplicate", 0, None)
    assert map_update_events([], 3) == ("new", None, None)  # nothing readable: touch nothing


def test_the_prompt_is_mem0s_own_update_prompt_with_numbered_memories():
    from mem0.configs.prompts import DEFAULT_UPDATE_MEMORY_PROMPT

    prompt = update_prompt(["Ana lives in Paris", "Ana likes tea"], ["Ana lives in Lisbon"])
    assert prompt.startswith(DEFAULT_UPDATE_MEMORY_PROMPT)
    assert "{'id': '1', 'text': 'Ana likes tea'}" in prompt and "['Ana lives in Lisbon']" in prompt


def test_an_escalation_is_one_plain_call_at_mem0s_settings():
    chat = Recorder('```json\n{"memory": [{"id": "0", "text": "Ana lives in Paris", "event": "DELETE"}]}\n```')
    verdict = mem0_update_decision(chat, "claude-sonnet-4-6", ["Ana lives in Paris"], "Ana lives in Lisbon")
    [call] = chat.calls
    assert call["system"] is None and call["role"] == "escalate" and len(call["messages"]) == 1
    assert (call["model"], call["max_tokens"], call["temperature"]) == ("claude-sonnet-4-6", 2000, 0.1)
    assert (verdict.relation, verdict.target_index) == ("contradiction", 0) and verdict.completion.cost_usd == 0.0048


def test_the_llm_decider_judges_all_candidates_in_one_call_with_certainty():
    reply = {
        "memory": [
            {"id": "0", "text": "Ana likes tea", "event": "NONE"},
            {"id": "1", "text": "Ana lives in Lisbon", "event": "UPDATE", "old_memory": "Ana lives in Paris"},
        ]
    }
    chat = Recorder(json.dumps(reply))
    verdict = LLMRelationDecider(chat).decide(
        "Ana lives in Lisbon", [("f7", "Ana likes tea"), ("f9", "Ana lives in Paris")]
    )
    assert len(chat.calls) == 1 and chat.calls[0]["role"] == "decide"
    decision = verdict.decision
    assert (decision.chosen, decision.target, decision.confidence) == ("rewrite", "f9", 1.0)
    assert decision.text == verdict.text == "Ana lives in Lisbon" and decision.backend == "llm_decider"
    assert (decision.cost_usd, decision.latency_ms) == (0.0048, 6100.0)


def test_the_llm_decider_makes_no_call_without_candidates_and_degrades_on_failure():
    chat = Recorder("{}")
    assert LLMRelationDecider(chat).decide("Ana likes tea", []).decision.chosen == "new" and chat.calls == []

    class Down:
        def complete(self, **_):
            raise LLMError("timeout")

    failed = LLMRelationDecider(Down()).decide("Ana likes tea", [("f1", "Ana likes coffee")]).decision
    assert failed.fallback and failed.chosen == "new" and failed.confidence == 0.0


def test_the_offline_stand_in_answers_the_update_prompt_like_an_llm_would(standin_llm):
    def verdict(existing, new):
        return mem0_update_decision(standin_llm, "claude-sonnet-4-6", existing, new)

    moved = verdict(["Ana likes hiking", "Ana lives in Paris"], "Ana moved to Lisbon")
    assert (moved.relation, moved.target_index, moved.text) == ("rewrite", 1, "Ana moved to Lisbon")
    assert verdict(["Ana eats meat"], "Ana no longer eats meat").relation == "contradiction"
    assert verdict(["Ana likes hiking"], "Ana likes painting").relation == "new"
    assert verdict(["Ana lives in Paris"], "Ana lives in Paris").relation == "duplicate"
    assert moved.completion.model == "rules-update-standin-v1" and moved.completion.cost_usd == 0.0


def test_the_offline_stand_in_refuses_prompts_it_cannot_answer(standin_llm):
    with pytest.raises(LLMError):
        standin_llm.complete(
            role="answer", model="m", system=None, messages=[{"role": "user", "content": "Hi"}], max_tokens=10
        )


def test_the_llm_decider_arm_runs_offline_end_to_end(tmp_path, minilm, standin_llm):
    memory = Engram(
        tmp_path / "e.db",
        extractor=RulesExtractor(),
        decider=RulesDecider(minilm),
        embedder=minilm,
        flags=Flags.e2(),
        relation_decider=LLMRelationDecider(standin_llm),
    )
    memory.add("I live in Paris.", speaker="Ana", when=datetime(2023, 5, 1))
    report = memory.add("I don't live in Paris anymore.", speaker="Ana", when=datetime(2023, 6, 1))
    assert report.decision_usage[-1].backend == "llm_decider"
    assert report.outcomes[0].relation == "contradiction"


def test_parse_events_reads_fenced_and_embedded_json():
    assert parse_events('Sure!\n{"memory": [{"id": "0", "event": "NONE"}]}') == [{"id": "0", "event": "NONE"}]
    assert parse_events("no json here") == []
