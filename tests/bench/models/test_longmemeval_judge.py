"""A researcher scores LongMemEval with its own judge: the upstream templates, chosen by question type and `_abs`,
read with the "yes" rule, never a LoCoMo prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bench.models import longmemeval_judge as lme
from bench.models.judge import CORRECT, WRONG, LexicalJudge, LLMJudge


def test_the_carried_templates_are_upstreams_text_byte_for_byte() -> None:
    # UPSTREAM_SHA256 was computed from evaluate_qa.py's five template strings (NOTICE.md says how), not from these
    assert lme.templates_sha256() == lme.UPSTREAM_SHA256
    assert "off-by-one" in lme.template_text("judge_temporal_reasoning.txt")
    assert "Rubric: {}" in lme.template_text("judge_single_session_preference.txt")


@pytest.mark.parametrize(
    ("qtype", "qid", "template"),
    [
        ("single-session-user", "e47becba", "judge_default.txt"),
        ("multi-session", "gpt4_59c863d7", "judge_default.txt"),
        ("temporal-reasoning", "gpt4_2655b836", "judge_temporal_reasoning.txt"),
        ("knowledge-update", "6a1eabeb", "judge_knowledge_update.txt"),
        ("single-session-preference", "8a2466db", "judge_single_session_preference.txt"),
        ("knowledge-update", "031748ae_abs", "judge_abstention.txt"),
        ("temporal-reasoning", "gpt4_93159ced_abs", "judge_abstention.txt"),
    ],
)
def test_each_question_gets_its_types_template_and_abstention_wins(qtype: str, qid: str, template: str) -> None:
    assert lme.template_for(qtype, qid) == template


def test_the_prompt_is_filled_in_upstreams_order_question_gold_response() -> None:
    prompt = lme.render("knowledge-update", "q1", "Where do I live now?", "Porto", "You moved to Porto.")
    assert prompt.index("Question: Where do I live now?") < prompt.index("Correct Answer: Porto")
    assert prompt.endswith(
        "Model Response: You moved to Porto.\n\nIs the model response correct? Answer yes or no only."
    )


@pytest.mark.parametrize(
    ("reply", "correct"), [("Yes", True), ("yes.", True), (" YES ", True), ("No", False), ("Eyes? no", True)]
)
def test_a_reply_is_correct_when_it_contains_yes_as_upstream_reads_it(reply: str, correct: bool) -> None:
    assert lme.says_yes(reply) is correct


@dataclass
class Completion:
    text: str
    model: str = "fake-judge"
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False


class ScriptedJudgeLLM:
    """Answers every judge prompt with a fixed reply and keeps what it was asked."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.asked: list[dict[str, Any]] = []

    def complete(self, **request: Any) -> Completion:
        self.asked.append(request)
        return Completion(self.reply)


def test_a_live_judge_gets_the_abstention_template_and_ten_tokens_and_yes_makes_it_correct() -> None:
    llm = ScriptedJudgeLLM("yes")
    verdict = lme.judge(
        LLMJudge(llm, "fake-judge"),
        "temporal-reasoning",
        "x_abs",
        "When did I sell my bike?",
        "Not said",
        "I can't tell",
    )
    [asked] = llm.asked
    assert verdict.label == CORRECT and asked["max_tokens"] == 10
    assert asked["messages"][0]["content"].startswith("I will give you an unanswerable question")


def test_a_live_judge_saying_no_is_wrong_and_a_locomo_question_keeps_its_json_judge() -> None:
    no = ScriptedJudgeLLM("No.")
    assert lme.judge(LLMJudge(no, "fake-judge"), "multi-session", "q2", "How many?", "3", "two").label == WRONG
    locomo = ScriptedJudgeLLM('{"label": "CORRECT"}')
    verdict = lme.judge(LLMJudge(locomo, "fake-judge"), "single-hop", "conv-26_q1", "Who?", "Mel", "Mel")
    assert verdict.label == CORRECT and "generated answer" in locomo.asked[0]["messages"][0]["content"].lower()


def test_the_offline_stand_in_judge_is_used_as_it_is() -> None:
    # the lexical stand-in takes no prompt: a LongMemEval question before it is judged by its rules (and labelled so)
    assert not hasattr(LexicalJudge, "judge_rendered")
