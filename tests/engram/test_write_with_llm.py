"""The write path with an LLM in the loop: the LLM-decider arm and escalation through mem0's update prompt.

The chat model is a local fake that answers with mem0's JSON events; nothing leaves the machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from engram import Completion, Flags
from engram.deciders import LLMRelationDecider
from tests.engram.conftest import day


@dataclass
class FakeChatModel:
    """Answers mem0's update prompt with a fixed event for memory "0" and records every prompt it saw."""

    event: str
    text: str = ""
    prompts: list[str] = field(default_factory=list)

    def complete(self, *, role, model, system, messages, max_tokens, temperature=None) -> Completion:
        self.prompts.append(messages[-1]["content"])
        memory = [{"id": "0", "text": self.text, "event": self.event}]
        return Completion(
            text=json.dumps({"memory": memory}),
            model=model,
            input_tokens=900,
            output_tokens=40,
            cost_usd=0.0033,
            latency_ms=2500.0,
        )


def test_the_llm_decider_arm_judges_all_candidates_in_one_call_and_closes_on_delete(decider, make_memory):
    decider.on("edge_type", {"lives_in": 0.95}, new="lives")
    chat = FakeChatModel("DELETE")
    memory = make_memory(Flags.e2(), relation_decider=LLMRelationDecider(chat))
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    assert chat.prompts == []  # no candidates: "new" without a call
    report = memory.add("Ana lives in Lisbon.", speaker="Ana", when=day(9))

    assert len(chat.prompts) == 1 and "Ana lives in Paris" in chat.prompts[0]
    assert not decider.asked("relation_to_candidate")  # relations are the LLM's, fact questions stay typed
    paris = [f for f in memory.facts(valid_only=False) if "Paris" in f.text][0]
    assert paris.closed_reason == "superseded" and report.actions == ["contradicted"]
    assert [u.backend for u in report.decision_usage] == ["scripted", "llm_decider"]
    assert report.decision_cost_usd == 0.0033 and report.decide_ms == 2500.0


def test_an_llm_update_rewrites_the_stored_text_and_keeps_the_old_one_in_history(decider, make_memory):
    chat = FakeChatModel("UPDATE", text="Ana lives in central Paris")
    memory = make_memory(Flags.e2(), relation_decider=LLMRelationDecider(chat))
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add("Ana lives in central Paris.", speaker="Ana", when=day(1))
    assert report.actions == ["rewritten"] and report.facts_stored == 0
    [fact] = memory.facts()
    assert fact.text == "Ana lives in central Paris"
    [rewrite] = [e for e in memory.explain(fact.id)["history"] if e["event"] == "rewrite"]
    assert rewrite["old_text"] == "Ana lives in Paris"


def test_escalation_goes_through_mem0s_update_prompt(decider, make_memory):
    decider.on("edge_type", {"lives_in": 0.95}, new="lives")
    decider.on("relation_to_candidate", {"update": 0.5, "new": 0.3, "duplicate": 0.2}, new="Lisbon")
    chat = FakeChatModel("DELETE")
    memory = make_memory(escalator=chat)  # a bare LLM is wrapped in the mem0 update-prompt escalator
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add("Ana lives in Lisbon.", speaker="Ana", when=day(9))
    assert report.escalations == 1 and len(chat.prompts) == 1
    assert [u.role for u in report.decision_usage] == ["decide", "escalate", "decide"]  # then g_A's second phrasing
    assert report.outcomes[0].relation == "contradiction" and report.outcomes[0].escalated
