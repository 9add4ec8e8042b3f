"""LongMemEval's official judge: one prompt template per question type, the abstention template for every question
with `_abs` in its id, and the "yes" rule (a reply is correct when it contains "yes", any case).

The five templates are LongMemEval's own (`src/evaluation/evaluate_qa.py`, `get_anscheck_prompt`, MIT), carried
verbatim in `bench/prompts/longmemeval/` (origin, commit and hashes in `bench/prompts/NOTICE.md`) and filled the
way upstream fills them: `template.format(question, answer, response)`. Peers that grade LongMemEval with a LoCoMo
judge prompt, or grade abstention questions with the answer rubric, score a different benchmark; here the template
is chosen by the question's type and id alone.

With a live judge model (`LLMJudge`) a LongMemEval question is judged with its template and the "yes" rule; the
offline stack's lexical judge is a STAND-IN that ignores templates (its labels are labelled as such everywhere).
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

from bench.data.longmemeval import is_abstention
from bench.errors import DataError
from bench.vocab import PROMPTS_DIR

TEMPLATE_DIR = PROMPTS_DIR / "longmemeval"
#: question type -> template file, as upstream's `get_anscheck_prompt` branches
TEMPLATE_FOR_TYPE = {
    "single-session-user": "judge_default.txt",
    "single-session-assistant": "judge_default.txt",
    "multi-session": "judge_default.txt",
    "temporal-reasoning": "judge_temporal_reasoning.txt",
    "knowledge-update": "judge_knowledge_update.txt",
    "single-session-preference": "judge_single_session_preference.txt",
}
ABSTENTION_TEMPLATE = "judge_abstention.txt"
#: the templates in upstream's source order (the order `UPSTREAM_SHA256` hashes them in)
UPSTREAM_ORDER = (
    "judge_default.txt",
    "judge_temporal_reasoning.txt",
    "judge_knowledge_update.txt",
    "judge_single_session_preference.txt",
    "judge_abstention.txt",
)
#: sha256 of upstream's five `template` strings, in source order, joined by "\n": computed from evaluate_qa.py at
#: xiaowu0162/LongMemEval commit d6dc8b50a2d9ac0c99485ea28fa5755c62414c34 (see bench/prompts/NOTICE.md)
UPSTREAM_SHA256 = "84d4a15455723ba860545bb7be7f3ff44d9d8dbe894fcf1d2d4b7be7eca32b6f"
YES = "yes"
MAX_TOKENS = 10  # upstream asks its judge for at most 10 tokens, at temperature 0


@cache
def template_text(file_name: str) -> str:
    return (TEMPLATE_DIR / file_name).read_text(encoding="utf-8")


def template_for(question_type: str, question_id: str) -> str:
    """The template file that judges this question: the abstention one for `_abs` ids (upstream's rule,
    `bench.data.longmemeval.is_abstention`), else its type's."""
    if is_abstention(question_id):
        return ABSTENTION_TEMPLATE
    try:
        return TEMPLATE_FOR_TYPE[question_type]
    except KeyError:
        raise DataError(
            f"question {question_id}: expected a LongMemEval question type ({', '.join(TEMPLATE_FOR_TYPE)}), "
            f"found {question_type!r}"
        ) from None


def render(question_type: str, question_id: str, question: str, gold: Any, response: str) -> str:
    """The judge prompt, filled positionally as upstream fills it."""
    return template_text(template_for(question_type, question_id)).format(question, gold, response)


def says_yes(reply: str) -> bool:
    """Upstream's rule: correct when the stripped, lower-cased reply contains "yes"."""
    return YES in reply.strip().lower()


def templates_sha256() -> str:
    """The sha256 of our five template files joined as UPSTREAM_SHA256 joins upstream's strings."""
    return hashlib.sha256("\n".join(template_text(name) for name in UPSTREAM_ORDER).encode()).hexdigest()


def protocol() -> dict[str, str]:
    """What a LongMemEval result records about its judge protocol."""
    return {
        "judge_templates": "LongMemEval src/evaluation/evaluate_qa.py get_anscheck_prompt (verbatim)",
        "judge_templates_sha256": templates_sha256(),
        "judge_rule": "correct when the reply contains 'yes'",
        "judge_max_tokens": str(MAX_TOKENS),
    }


def judge(judge_model: Any, question_type: str, question_id: str, question: str, gold: Any, response: str) -> Any:
    """The verdict on one answer: a LongMemEval question before a judge that takes a rendered prompt (`LLMJudge`)
    is judged with its template and the "yes" rule; anything else (LoCoMo, the lexical stand-in) as usual."""
    rendered = getattr(judge_model, "judge_rendered", None)
    if question_type not in TEMPLATE_FOR_TYPE or rendered is None:
        return judge_model.judge(question, gold, response)
    return rendered(render(question_type, question_id, question, gold, response), says_yes, MAX_TOKENS)
