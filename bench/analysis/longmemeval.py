"""LongMemEval's numbers from a result's answers: what its paper and evaluate_qa.py report, plus retrieval recall.

- per question type: accuracy (judged correct / asked), turn-level evidence recall@k (the answer's
  `evidence_recall`: the share of the `has_answer` turns a shown line came from) and session recall@k (the answer's
  `scores["session-recall"]`: the share of `answer_session_ids` some shown line came from);
- task-averaged accuracy: the mean of the per-type accuracies (each type weighs the same, as LongMemEval reports);
- overall accuracy: correct / asked over every question;
- abstention accuracy: over the questions with `_abs` in their id (they count in their type too, as upstream).

Both recalls are LLM-free and real offline (the shown lines come from the arm's own retrieval, MiniLM for the
baselines). Accuracy is whatever judge labelled the answers: on the offline stack the lexical STAND-IN, which
`judge_note` says wherever these numbers are shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from bench.data.longmemeval import QUESTION_TYPES, is_abstention, session_of
from bench.models.provider import shown_model
from bench.results.schema import Answer, Result

SLICE_PREFIX = "longmemeval:"
SESSION_RECALL = "session-recall"  # per answer, in `scores`


def is_longmemeval(result: Result) -> bool:
    return result.slice.startswith(SLICE_PREFIX)


def session_recall(shown_sources: Iterable[Sequence[str]], answer_session_ids: Sequence[str]) -> float | None:
    """The share of the evidence sessions that at least one shown line came from; None without evidence sessions."""
    if not answer_session_ids:
        return None
    shown = {session_of(message_id) for sources in shown_sources for message_id in sources}
    return sum(1 for session in answer_session_ids if session in shown) / len(answer_session_ids)


def retrieval_scores(extra: dict[str, Any], shown_sources: Sequence[Sequence[str]]) -> dict[str, float]:
    """The LongMemEval scores of one answer (its question's `extra` holds `answer_session_ids`); {} otherwise."""
    recall = session_recall(shown_sources, extra.get("answer_session_ids") or ())
    return {} if recall is None else {SESSION_RECALL: recall}


@dataclass(frozen=True)
class Row:
    """One question type (or all of them, or the abstention questions)."""

    name: str
    correct: int
    n: int
    session_recall: float | None
    turn_recall: float | None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None


@dataclass(frozen=True)
class Report:
    by_type: tuple[Row, ...]
    overall: Row
    abstention: Row
    task_averaged: float | None


def _row(name: str, answers: Sequence[Answer]) -> Row:
    sessions = [a.scores[SESSION_RECALL] for a in answers if a.scores and SESSION_RECALL in a.scores]
    turns = [a.evidence_recall for a in answers if a.evidence_recall is not None]
    return Row(
        name,
        sum(a.correct for a in answers),
        len(answers),
        mean(sessions) if sessions else None,
        mean(turns) if turns else None,
    )


def report(answers: Sequence[Answer]) -> Report:
    """The LongMemEval report of a result's scored answers (types in the dataset's order, only those asked)."""
    scored = [a for a in answers if a.scored]
    by_type = tuple(
        _row(qtype, [a for a in scored if a.category == qtype])
        for qtype in QUESTION_TYPES
        if any(a.category == qtype for a in scored)
    )
    accuracies = [row.accuracy for row in by_type if row.accuracy is not None]
    return Report(
        by_type=by_type,
        overall=_row("overall", scored),
        abstention=_row("abstention", [a for a in scored if is_abstention(a.question_id)]),
        task_averaged=mean(accuracies) if accuracies else None,
    )


def judge_note(result: Result) -> str:
    """Who labelled the answers: the stand-in is named as one."""
    if "judge" in result.standins:
        judge = shown_model(result.models["judge"]) if "judge" in result.models else "lexical judge"
        return f"judged by the offline stand-in {judge}, not LongMemEval's judge"
    return f"judged by {shown_model(result.models.get('judge', '?'))} with LongMemEval's templates and 'yes' rule"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _recall(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def headline(rep: Report, result: Result) -> str:
    """One line: who judged, task-averaged, overall and abstention accuracy, session and turn recall at k."""
    k = "all" if result.k is None else result.k
    return (
        f"LongMemEval ({judge_note(result)}): task-averaged {_pct(rep.task_averaged)}, overall "
        f"{rep.overall.correct}/{rep.overall.n} = {_pct(rep.overall.accuracy)}, abstention "
        f"{rep.abstention.correct}/{rep.abstention.n} = {_pct(rep.abstention.accuracy)}; "
        f"session recall@{k} {_recall(rep.overall.session_recall)}, turn recall@{k} {_recall(rep.overall.turn_recall)}"
    )


def type_lines(rep: Report) -> list[str]:
    return [
        f"  {row.name}: {row.correct}/{row.n} = {_pct(row.accuracy)}, session recall {_recall(row.session_recall)}, "
        f"turn recall {_recall(row.turn_recall)}"
        for row in rep.by_type
    ]


def summary_lines(result: Result) -> list[str]:
    """The terminal's LongMemEval block: task-averaged, overall and abstention accuracy, then one line per type."""
    rep = report(result.answers)
    return [headline(rep, result), *type_lines(rep)]


def compare_lines(sides: Sequence[tuple[str, Sequence[Result]]]) -> list[str]:
    """`compare`'s LongMemEval block: each side made only of LongMemEval results gets its own report."""
    lines = []
    for name, results in sides:
        if results and all(is_longmemeval(r) for r in results):
            rep = report([a for r in results for a in r.answers])
            lines += [f"{name} {headline(rep, results[0])}", *type_lines(rep)]
    return lines
