"""A researcher asks LongMemEval's questions as of their dates: the answerer is told the current date, with LongMemEval's
own answer prompt, and sees each shown line's session date; LoCoMo's undated questions are asked exactly as before."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bench.models import longmemeval_answer as lme_answer
from bench.models.cache import CallRequest
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.judge import EXTRACTIVE_ANSWERER_MODEL, ExtractiveAnswerer, LLMAnswerer, render_answer_prompt
from engram import Completion

ASKED_ON = "2023/05/30 (Tue) 23:40"
LINES = [
    "[2023/05/20 (Sat) 09:12] user: I adopted a beagle called Biscuit last weekend.",
    "[2023/05/25 (Thu) 18:03] assistant: Congratulations on adopting Biscuit!",
]


class RecordingLLM:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def complete(self, **request) -> Completion:
        self.calls.append(request)
        return Completion(text="About two weeks ago.", model=request["model"])


def test_the_carried_answer_template_is_upstreams_text_byte_for_byte() -> None:
    # UPSTREAM_ANSWER_SHA256 was computed from run_generation.py's template string (NOTICE.md says which), not from
    # this file; the NOTICE row records the same hash
    text = lme_answer.ANSWER_TEMPLATE_FILE.read_bytes()
    assert hashlib.sha256(text).hexdigest() == lme_answer.UPSTREAM_ANSWER_SHA256
    notice = (lme_answer.ANSWER_TEMPLATE_FILE.parents[1] / "NOTICE.md").read_text(encoding="utf-8")
    assert lme_answer.UPSTREAM_ANSWER_SHA256 in notice


def test_a_dated_question_is_asked_with_longmemevals_prompt_stating_the_current_date() -> None:
    llm = RecordingLLM()
    reply = LLMAnswerer(llm, "gpt-4o").answer(
        "How long ago did I adopt my dog?", LINES, ["user", "assistant"], ["user", "assistant"], asked_on=ASKED_ON
    )
    call = llm.calls[0]
    prompt = call["messages"][0]["content"]
    assert reply.text == "About two weeks ago." and call["system"] is None and len(call["messages"]) == 1
    # upstream's order: the history (each line with its session date), then the current date, then the question
    assert prompt.index(LINES[0]) < prompt.index(LINES[1]) < prompt.index(f"Current Date: {ASKED_ON}")
    assert prompt.endswith(f"Current Date: {ASKED_ON}\nQuestion: How long ago did I adopt my dog?\nAnswer:")


def test_an_undated_question_keeps_the_locomo_prompt_unchanged() -> None:
    llm = RecordingLLM()
    lines = ["1:56 pm on 8 May, 2023: Caroline went to the group"]
    LLMAnswerer(llm, "claude-sonnet-4-6").answer("When did Caroline go?", lines, ["Caroline", "Melanie"], ["Caroline"])
    call = llm.calls[0]
    split = {"Caroline": lines, "Melanie": []}
    assert call["system"] == render_answer_prompt("When did Caroline go?", split)
    assert call["messages"] == [{"role": "user", "content": "When did Caroline go?"}]
    assert "Current Date" not in call["system"]


def test_the_offline_answerer_is_keyed_on_the_date_only_when_there_is_one(tmp_path: Path) -> None:
    gateway = Gateway(local=tmp_path / "cache", subsets=[])
    answerer = ExtractiveAnswerer(gateway, shared_minilm())
    undated = answerer.answer("Which dog did I adopt?", LINES, ["user", "assistant"])
    dated = answerer.answer("Which dog did I adopt?", LINES, ["user", "assistant"], asked_on=ASKED_ON)
    assert not undated.cached and not dated.cached  # two requests: the date is part of what was asked
    assert undated.text == dated.text  # the stand-in's rules read the lines, not the date
    body = {"question": "Which dog did I adopt?", "lines": LINES, "rules": 1}
    undated_key = CallRequest("offline", "answer", EXTRACTIVE_ANSWERER_MODEL, body, "answer").key()
    assert gateway.local is not None and gateway.local.get(undated_key) is not None  # the LoCoMo-shaped key, as ever
