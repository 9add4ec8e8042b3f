"""LongMemEval's published outputs, placed on the LongMemEval dataset (bench.data.longmemeval).

- `longmemeval`: the judged log LongMemEval's `src/evaluation/evaluate_qa.py` writes, one JSON object a line:
  `{question_id, hypothesis, autoeval_label: {model, label (bool)}}`. Each question is found by its id in the
  LongMemEval questions under `$ENGRAM_LONGMEMEVAL_DIR` (the oracle, s or m file: they hold the same 500 questions),
  its category is its `question_type`, its label the judge's; the judge model is the one the log states (one for the
  whole log). The answers form one result on slice `longmemeval:<file>`.
- `longmemeval-hypotheses`: the file a system hands to that script, `{question_id, hypothesis}` a line, has no
  judgment: recognised, and refused in one line that says how to judge it.
"""

from __future__ import annotations

from typing import Any

from bench.data.longmemeval import longmemeval_dir, read_entries
from bench.errors import DataError
from bench.exchange.peer_rows import Reading
from bench.results.schema import Answer
from bench.settings import LONGMEMEVAL as DIR_ENV

# Any of these holds every question; the smallest is read first.
QUESTION_FILES = ("longmemeval_oracle", "longmemeval_s", "longmemeval_m")


def _questions() -> tuple[str, dict[str, dict[str, Any]]]:
    for stem in QUESTION_FILES:
        path = longmemeval_dir() / f"{stem}.json"
        if path.is_file():
            return stem, {str(e.get("question_id")): e for e in read_entries(path) if isinstance(e, dict)}
    raise DataError(
        f"{longmemeval_dir()}: expected LongMemEval's questions ({', '.join(f'{s}.json' for s in QUESTION_FILES)}) "
        f"to place a LongMemEval log on, found none; set ${DIR_ENV} to the folder that holds one"
    )


def judged_log_answers(document: Any, where: str) -> Reading:
    if not isinstance(document, list) or not document:
        raise DataError(f"{where}: expected LongMemEval's judged log (one JSON object a line), found none")
    stem, questions = _questions()
    answers: list[Answer] = []
    judges: set[str] = set()
    seen: set[str] = set()
    for i, record in enumerate(document):
        at = f"{where}: line {i + 1}"
        qid = str(record.get("question_id")) if isinstance(record, dict) else None
        if qid is None or qid not in questions:
            raise DataError(f"{at}: field question_id: expected a question of {stem}.json, found {qid!r}")
        if qid in seen:
            raise DataError(f"{at}: field question_id: expected each question once, found {qid!r} twice")
        seen.add(qid)
        verdict = record.get("autoeval_label")
        if not isinstance(verdict, dict) or not isinstance(verdict.get("label"), bool):
            raise DataError(f"{at}: field autoeval_label: expected {{model, label: true|false}}, found {verdict!r:.60}")
        judges.add(str(verdict.get("model", "not stated by the file")))
        entry = questions[qid]
        hypothesis = record.get("hypothesis")
        answers.append(
            Answer(
                question_id=qid,
                conversation=qid,
                category=str(entry["question_type"]),
                scored=True,
                question=str(entry["question"]),
                gold=str(entry["answer"]),
                answer=None if hypothesis is None else str(hypothesis),
                label="CORRECT" if verdict["label"] else "WRONG",
                type=str(entry["question_type"]),
            )
        )
    if len(judges) > 1:
        raise DataError(f"{where}: field autoeval_label.model: expected one judge for the log, found {sorted(judges)}")
    stated = {
        "judge_model": judges.pop(),
        "label": "LongMemEval's autoeval_label",
        "slice": f"longmemeval:{stem}",
        "questions": f"{len(answers)} of {len(questions)}",
    }
    return Reading([], stated, answers=answers)


def hypotheses_answers(document: Any, where: str) -> Reading:
    raise DataError(
        f"{where}: field autoeval_label: expected a judgment on each line, found hypotheses only; judge them with "
        "LongMemEval's src/evaluation/evaluate_qa.py and import the log it writes"
    )
