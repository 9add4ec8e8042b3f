"""LongMemEval's answer prompt: a LongMemEval question is asked as of its `question_date`, as LongMemEval asks it.

Every LongMemEval question carries the date it is asked (`SliceQuestion.asked_on`, e.g. "2023/05/30 (Tue) 23:40"),
and a temporal question ("how many days ago...") has no answer without it. LongMemEval's own generation script
(`src/generation/run_generation.py`, `prepare_prompt`, MIT) states it as "Current Date: ..." between the history and
the question; its template for retrieved history without chain of thought is carried verbatim in
`bench/prompts/longmemeval/answer.txt` (origin, commit and hash in `bench/prompts/NOTICE.md`) and filled
positionally as upstream fills it: history, current date, question.

The history is the memory's shown lines in rank order, one a line, each with the date of the session it came from as
the memory shows it (`[2023/05/30 (Tue) 23:40] user: ...` for the turn arms, `[said 2023-05-30] ...` for engram), so
the answerer sees when each thing was said and when it is being asked. Upstream groups whole sessions under "Session
Date:" headers; a memory system's lines are not sessions, so the lines carry their dates instead.

A question without a date (every LoCoMo question) is answered with the LoCoMo protocol unchanged
(`bench.models.judge`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache

from bench.vocab import PROMPTS_DIR

ANSWER_TEMPLATE_FILE = PROMPTS_DIR / "longmemeval" / "answer.txt"
#: sha256 of upstream's template string (the `cot` false, `merge_key_expansion_into_value` none branch of
#: `prepare_prompt`) at xiaowu0162/LongMemEval commit d0c699faf593726d96a6c75768e0fd2016d1feb8
UPSTREAM_ANSWER_SHA256 = "e427ff913456e51a132ec865b1b5038d562bdc36890976943ad421cc9b365c9d"
ANSWER_PROMPT_FORM = (
    "LongMemEval's answer prompt (run_generation.py, no chain of thought) as the one user message; History Chats: "
    "the shown lines in rank order, one a line, each with its session date; Current Date: the question's "
    "question_date"
)


@cache
def template_text() -> str:
    return ANSWER_TEMPLATE_FILE.read_text(encoding="utf-8")


def render(question: str, asked_on: str, lines: Sequence[str]) -> str:
    """The answer prompt for a question asked on `asked_on`, filled positionally as upstream fills it."""
    return template_text().format("\n".join(lines), asked_on, question)


def protocol() -> dict[str, str]:
    """What a LongMemEval result records about how its questions were put to the answerer: in place of the LoCoMo
    answer prompt's hash and form (`bench.models.judge.prompt_protocol`), since every LongMemEval question has a
    date and so is answered with this prompt."""
    return {
        "answer_prompt_sha256": hashlib.sha256(template_text().encode()).hexdigest(),
        "answer_prompt_form": ANSWER_PROMPT_FORM,
    }
