"""A researcher reads a LongMemEval result: task-averaged accuracy (each type weighs the same), overall and abstention
accuracy apart, and session and turn recall per type."""

from __future__ import annotations

import pytest

from bench.analysis import longmemeval
from bench.analysis.scoring.rescore import rescored
from bench.results.schema import Answer, read_result
from bench.vocab import REPO_ROOT


def answer(qid: str, qtype: str, correct: bool, session: float | None = None, turn: float | None = None) -> Answer:
    return Answer(
        question_id=qid,
        conversation=qid,
        category=qtype,
        scored=True,
        question="?",
        gold="g",
        answer="a",
        label="CORRECT" if correct else "WRONG",
        evidence_recall=turn,
        scores=None if session is None else {longmemeval.SESSION_RECALL: session},
    )


ANSWERS = [
    # temporal-reasoning: 3 of 4 right; one abstention question among them
    answer("t1", "temporal-reasoning", True, 1.0, 1.0),
    answer("t2", "temporal-reasoning", True, 0.5, 0.0),
    answer("t3", "temporal-reasoning", True, 1.0, 0.5),
    answer("t4_abs", "temporal-reasoning", False, 0.0),
    # single-session-user: 0 of 1
    answer("u1", "single-session-user", False, 0.0, 0.0),
]


def test_task_averaged_is_the_mean_of_the_types_not_of_the_questions() -> None:
    report = longmemeval.report(ANSWERS)
    assert [row.name for row in report.by_type] == ["single-session-user", "temporal-reasoning"]
    assert report.task_averaged == pytest.approx((0 / 1 + 3 / 4) / 2)
    assert (report.overall.correct, report.overall.n) == (3, 5)
    assert (report.abstention.correct, report.abstention.n) == (0, 1)


def test_recall_is_averaged_over_the_questions_that_have_it() -> None:
    temporal = {row.name: row for row in longmemeval.report(ANSWERS).by_type}["temporal-reasoning"]
    assert temporal.session_recall == pytest.approx(2.5 / 4)
    assert temporal.turn_recall == pytest.approx(1.5 / 3)  # the abstention question has no evidence turn


def test_session_recall_counts_the_evidence_sessions_some_shown_turn_came_from() -> None:
    shown = [["answer_a:0"], ["answer_a:3", "other_b:1"], ["noise_c:2"]]
    assert longmemeval.session_recall(shown, ["answer_a", "answer_d"]) == 0.5
    assert longmemeval.session_recall(shown, []) is None
    assert longmemeval.retrieval_scores({"answer_session_ids": ["other_b"]}, shown) == {"session-recall": 1.0}
    assert longmemeval.retrieval_scores({}, shown) == {}  # a LoCoMo question gets none


def test_rescoring_a_longmemeval_answer_keeps_its_session_recall() -> None:
    result = read_result(REPO_ROOT / "results/offline/longmemeval/oracle/sample/raw-turn-rag__k20.json")
    again = rescored(result)
    assert [a.scores for a in again.answers] == [a.scores for a in result.answers]
    assert all(a.scores and longmemeval.SESSION_RECALL in a.scores for a in again.answers)
