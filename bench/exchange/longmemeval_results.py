"""LongMemEval's published outputs, placed on the LongMemEval dataset (bench.data.longmemeval).

- `longmemeval`: the judged log LongMemEval's `src/evaluation/evaluate_qa.py` writes, one JSON object a line:
  `{question_id, hypothesis, autoeval_label: {model, label (bool)}}`. Each question is found by its id in the shipped
  oracle split (`longmemeval:oracle`; the s and m splits ask the same 500 questions), its category is its
  `question_type`, its label the judge's; the judge model is the one the log states (one for the whole log). The
  answers form one result on slice `longmemeval:oracle`.
- `longmemeval-hypotheses`: the file a system hands to that script, `{question_id, hypothesis}` a line, has no
  judgment: recognised, and refused in one line that says how to judge it.
"""

from __future__ import annotations

from typing import Any

from bench.data.slices import SliceQuestion, load_slice
from bench.errors import DataError
from bench.exchange.peer_rows import Reading
from bench.results.schema import Answer

# The split a log is placed on: shipped, and asking the same questions as s and m.
QUESTIONS_SLICE = "longmemeval:oracle"


def _questions() -> dict[str, SliceQuestion]:
    return {q.id: q for q in load_slice(QUESTIONS_SLICE).questions}


def judged_log_answers(document: Any, where: str) -> Reading:
    if not isinstance(document, list) or not document:
        raise DataError(f"{where}: expected LongMemEval's judged log (one JSON object a line), found none")
    questions = _questions()
    answers: list[Answer] = []
    judges: set[str] = set()
    seen: set[str] = set()
    for i, record in enumerate(document):
        at = f"{where}: line {i + 1}"
        qid = str(record.get("question_id")) if isinstance(record, dict) else None
        if qid is None or qid not in questions:
            raise DataError(f"{at}: field question_id: expected a question of {QUESTIONS_SLICE}, found {qid!r}")
        if qid in seen:
            raise DataError(f"{at}: field question_id: expected each question once, found {qid!r} twice")
        seen.add(qid)
        verdict = record.get("autoeval_label")
        if not isinstance(verdict, dict) or not isinstance(verdict.get("label"), bool):
            raise DataError(f"{at}: field autoeval_label: expected {{model, label: true|false}}, found {verdict!r:.60}")
        judges.add(str(verdict.get("model", "not stated by the file")))
        asked = questions[qid]
        hypothesis = record.get("hypothesis")
        answers.append(
            Answer(
                question_id=qid,
                conversation=asked.conversation,
                category=asked.category_name,
                scored=asked.scored,
                question=asked.question,
                gold=str(asked.gold),
                answer=None if hypothesis is None else str(hypothesis),
                label="CORRECT" if verdict["label"] else "WRONG",
                type=asked.type,
            )
        )
    if len(judges) > 1:
        raise DataError(f"{where}: field autoeval_label.model: expected one judge for the log, found {sorted(judges)}")
    stated = {"judge_model": judges.pop(), "label": "LongMemEval's autoeval_label", "slice": QUESTIONS_SLICE}
    coverage = {
        "questions": len(answers),
        "of": len(questions),
        "missing": [],
        "partial": len(answers) < len(questions),
    }
    return Reading([], stated, answers=answers, coverage=coverage)


def hypotheses_answers(document: Any, where: str) -> Reading:
    raise DataError(
        f"{where}: field autoeval_label: expected a judgment on each line, found hypotheses only; judge them with "
        "LongMemEval's src/evaluation/evaluate_qa.py and import the log it writes"
    )
