"""Answering and judging: the paper protocol's prompts, the offline stand-ins, and the LLM-free scores."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench.errors import CacheMiss
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.judge import (
    ANSWER_PROMPT_FILE,
    CORRECT,
    JUDGE_PROMPT_FILE,
    WRONG,
    ExtractiveAnswerer,
    LexicalJudge,
    LLMAnswerer,
    LLMJudge,
    evidence_recall,
    lexical_verdict,
    memories_by_speaker,
    parse_label,
    prompt_protocol,
    render_answer_prompt,
    render_judge_prompt,
    strip_decorations,
)
from bench.models.providers import Models
from bench.models.stacks import build_stack
from engram import Completion


def models_on(stack: str, gateway: Gateway) -> Models:
    return Models.for_stack(stack, build_stack(stack).models, gateway, shared_minilm)


@pytest.fixture
def gateway(tmp_path: Path) -> Gateway:
    return Gateway(local=tmp_path / "cache", subsets=[])


class RecordingLLM:
    """A chat model double that remembers what it was asked and replies with a fixed text."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[dict] = []

    def complete(self, **request) -> Completion:
        self.calls.append(request)
        return Completion(text=self.reply, model=request["model"], cost_usd=0.001, latency_ms=12.0)


# -- the protocol texts -------------------------------------------------------------------------------------------


def test_prompt_copies_are_byte_identical_to_the_reference_data_and_their_hashes_are_recorded() -> None:
    # NOTICE.md records each copy's sha256 (taken from the reference data when the copies were made): the suite
    # checks the copies against that record and reads nothing outside the repository.
    notice = (ANSWER_PROMPT_FILE.parent / "NOTICE.md").read_text()
    for path in (ANSWER_PROMPT_FILE, JUDGE_PROMPT_FILE):
        assert f"`{hashlib.sha256(path.read_bytes()).hexdigest()}`" in notice.split(path.name, 1)[1].splitlines()[0]
    protocol = prompt_protocol()
    assert (
        len(protocol["answer_prompt_sha256"]) == 64
        and protocol["answer_prompt_sha256"] != protocol["judge_prompt_sha256"]
    )
    assert (ANSWER_PROMPT_FILE.parent / "NOTICE.md").read_text().count("Apache License 2.0") >= 2


def test_answer_prompt_puts_each_line_under_the_speaker_who_said_its_source() -> None:
    lines = ["8 May, 2023: Caroline went to a support group", "Melanie paints sunsets", "unknown source line"]
    split = memories_by_speaker(lines, ["Caroline", "Melanie", None], ["Caroline", "Melanie"])
    assert split == {"Caroline": [lines[0], lines[2]], "Melanie": [lines[1]]}
    prompt = render_answer_prompt("What does Melanie paint?", split)
    assert "Memories for user Melanie:\n\n    " + json.dumps([lines[1]], indent=4) in prompt
    assert "Question: What does Melanie paint?" in prompt
    assert "{{" not in prompt and "}}" not in prompt


def test_judge_prompt_carries_question_gold_and_answer_including_an_int_gold() -> None:
    prompt = render_judge_prompt("Which year did she move?", 2022, "In 2022")
    assert "Question: Which year did she move?" in prompt
    assert "Gold answer: 2022" in prompt and "Generated answer: In 2022" in prompt


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ('The answer names the same date. {"label": "CORRECT"}', CORRECT),
        ('```json\n{"reasoning": "different city", "label": "WRONG"}\n```', WRONG),
        ('{"label": "correct"}', CORRECT),
        ("CORRECT", WRONG),  # no JSON: unparsable is WRONG, as the protocol says
        ('{"label": "MAYBE"}', WRONG),
        ('{"label": CORRECT}', WRONG),  # broken JSON
    ],
)
def test_judge_replies_are_parsed_strictly_and_anything_unparsable_is_wrong(reply: str, label: str) -> None:
    assert parse_label(reply) == label


def test_paper_answerer_sends_the_filled_template_at_temperature_zero() -> None:
    llm = RecordingLLM("7 May 2023")
    answer = LLMAnswerer(llm, "claude-sonnet-4-6").answer(
        "When did Caroline go?",
        ["1:56 pm on 8 May, 2023: Caroline went to the group"],
        ["Caroline", "Melanie"],
        ["Caroline"],
    )
    call = llm.calls[0]
    assert answer.text == "7 May 2023" and answer.cost_usd == 0.001
    assert call["role"] == "answer" and call["model"] == "claude-sonnet-4-6"
    assert call["temperature"] == 0.0 and call["max_tokens"] == 1024
    assert "Caroline went to the group" in call["system"]
    assert call["messages"] == [{"role": "user", "content": "When did Caroline go?"}]


def test_paper_judge_turns_an_unparsable_reply_into_wrong() -> None:
    verdict = LLMJudge(RecordingLLM("I think it is right"), "claude-sonnet-4-6").judge("Q?", "Paris", "Paris")
    assert verdict.label == WRONG and verdict.raw == "I think it is right"


# -- LLM-free scores ------------------------------------------------------------------------------------------------


def test_evidence_recall_counts_evidence_turns_that_a_shown_line_came_from() -> None:
    assert evidence_recall([("D1:3",), ("D2:8",)], ["D1:3"]) == 1.0
    assert evidence_recall([("D1:4",)], ["D1:3"]) == 0.0
    assert evidence_recall([("D1:3", "D2:1"), ()], ["D1:3", "D2:8"]) == 0.5
    assert evidence_recall([("D1:3",)], []) is None


# -- offline stand-ins ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "answer", "label"),
    [
        ("7 May 2023", "Caroline went on 7 May 2023", CORRECT),
        ("7 May 2023", "in June 2021", WRONG),
        ("7 May 2023", "said 1:56 pm on 8 May, 2023", WRONG),  # most words, but the wrong day
        ("2022", "Paris", WRONG),
        (2022, "She moved there in 2022.", CORRECT),
        ("Adoption agencies", "Caroline is researching adoption agency options", CORRECT),  # stems match
        ("mental health, counseling, LGBTQ support", "She wants to work in counseling", WRONG),  # 1 of 4
        ("mental health, counseling, LGBTQ support", "counseling for mental health", CORRECT),  # 3 of 4
        ("two", "She has two kids", CORRECT),  # number words are content, not stop words
    ],
)
def test_lexical_judge_needs_most_of_the_golds_content_words(gold: object, answer: str, label: str) -> None:
    assert lexical_verdict(gold, answer)[0] == label


def test_lexical_judge_goes_through_the_gateway_and_replays_from_its_cache(gateway: Gateway, tmp_path: Path) -> None:
    judge = LexicalJudge(gateway)
    first = judge.judge("Where did she move?", "Berlin", "She moved to Berlin")
    again = judge.judge("Where did she move?", "Berlin", "She moved to Berlin")
    assert (first.label, first.cached, again.cached) == (CORRECT, False, True)
    assert json.loads(first.raw) == {"found": ["berlin"], "missing": []}
    gateway.close()

    strict = Gateway(local=tmp_path / "cache", subsets=[], strict=True)
    assert LexicalJudge(strict).judge("Where did she move?", "Berlin", "She moved to Berlin").cached
    with pytest.raises(CacheMiss, match="lexical-judge-standin-v1"):
        LexicalJudge(strict).judge("Where did she move?", "Berlin", "Paris")


def test_decorations_of_every_system_line_format_are_stripped() -> None:
    engram = '[said 2023-05-08] Caroline attended an LGBTQ support group. - "I went to a LGBTQ support group"'
    assert strip_decorations(engram) == ("Caroline attended an LGBTQ support group.", "2023-05-08")
    assert strip_decorations("1:56 pm on 8 May, 2023: Caroline is single") == (
        "Caroline is single",
        "1:56 pm on 8 May, 2023",
    )
    assert strip_decorations("[1:56 pm on 8 May, 2023] Melanie: I paint") == (
        "Melanie: I paint",
        "1:56 pm on 8 May, 2023",
    )
    assert strip_decorations("no decoration") == ("no decoration", None)


def test_extractive_answerer_returns_the_line_that_matches_the_question(gateway: Gateway) -> None:
    answerer = models_on("offline", gateway).answerer()
    assert isinstance(answerer, ExtractiveAnswerer)
    lines = [
        "1:56 pm on 8 May, 2023: Caroline is researching adoption agencies",
        "1:14 pm on 25 May, 2023: Melanie painted a lake sunrise",
        "1:14 pm on 25 May, 2023: Melanie ran a charity race for mental health",
    ]
    answer = answerer.answer("What did Melanie paint?", lines, ["Caroline", "Melanie"])
    assert answer.text == "Melanie painted a lake sunrise"
    when = answerer.answer("When did Melanie run a charity race?", lines, ["Caroline", "Melanie"])
    assert when.text == "Melanie ran a charity race for mental health (said 1:14 pm on 25 May, 2023)"
    assert answerer.answer("What did Melanie paint?", lines, ["Caroline", "Melanie"]).cached
    assert answerer.answer("Anything?", [], ["Caroline", "Melanie"]).text == "I don't know"


def test_the_stack_decides_between_stand_ins_and_real_models(gateway: Gateway) -> None:
    offline, paper = models_on("offline", gateway), models_on("paper", gateway)
    assert isinstance(offline.judge(), LexicalJudge)
    assert offline.ran == {"judge": "offline/lexical-judge-standin-v1"}
    paper_judge, paper_answerer = paper.judge(), paper.answerer()
    assert isinstance(paper_judge, LLMJudge) and paper_judge.model == "claude-sonnet-4-6"
    assert isinstance(paper_answerer, LLMAnswerer)
    assert paper.ran == {"judge": "anthropic/claude-sonnet-4-6", "answer": "anthropic/claude-sonnet-4-6"}
    paper.close()
    llm = RecordingLLM('{"label": "CORRECT"}')
    assert LLMJudge(llm, "claude-sonnet-4-6").judge("Q?", "Paris", "Paris").label == CORRECT
