"""What the viewer states about the yardstick: the gold a report shows (`view --gold`), the category numbering and
`--categories` filter, each side's accuracy with and without category 5, its k and retrieved tokens, and a mark on
every question the LoCoMo audit found wrong, with the corrected answer and the audit's reason."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from bench.analysis.categories import accuracy_line, keep_categories, numbered_by_locomo, numbering_line
from bench.analysis.coverage import partial_note
from bench.analysis.gold import gold_line, under_gold
from bench.data.audit import OFFICIAL, Errata, load_errata
from bench.errors import DataError
from bench.results.schema import read_result
from bench.results.trace import trace_of
from bench.view.model import Side, answer_keys


@cache
def _shipped_errata() -> Errata | str:
    """The shipped errata, or why they cannot be read (then no question is marked, and the report says why)."""
    try:
        return load_errata()
    except DataError as exc:
        return str(exc)


def audit_mark(question_id: str) -> dict[str, Any] | None:
    """The audit's entry for a question: error type, corrected answer and evidence, and its reasoning."""
    errata = _shipped_errata()
    if isinstance(errata, str):
        return None
    entry = errata.get(question_id)
    if entry is None:
        return None
    return {
        "error_type": entry.error_type,
        "correct_answer": entry.correct_answer,
        "correct_evidence": list(entry.correct_evidence),
        "reasoning": entry.reasoning,
    }


def side_under(
    path: str | Path, gold: str = OFFICIAL, categories: frozenset[str] | None = None, errata: Errata | None = None
) -> Side:
    """A viewer side seen under a gold and a category filter; the trace keeps the lines of the answers kept."""
    p = Path(path)
    result = read_result(p)
    trace = trace_of(p, result)
    seen = keep_categories(under_gold(result, gold, errata), categories)
    if trace is not None and len(seen.answers) != len(result.answers):
        # both filters drop answers and never reorder them: keep the trace lines of the surviving answers
        kept = iter(seen.answers)
        want = next(kept, None)
        lines = []
        for answer, line in zip(result.answers, trace.lines, strict=True):
            if want is not None and answer.question_id == want.question_id and answer.checkpoint == want.checkpoint:
                lines.append(line)
                want = next(kept, None)
        trace = dataclasses.replace(trace, lines=lines)
    return Side(path=p, result=seen, trace=trace, keys=answer_keys(seen.answers))


def trust_lines(sides: Sequence[Side]) -> list[str]:
    """The lines a report prints under its headline."""
    results = [s.result for s in sides]
    gold = str(results[0].extras.get("gold", {}).get("name", OFFICIAL))
    kept = results[0].extras.get("categories")
    every = [a for r in results for a in r.answers]
    lines = [gold_line(gold, results), numbering_line(every, frozenset(kept) if kept else None)]
    for tag, side in zip("AB", sides):
        name = f"{tag} ({side.label})" if len(sides) > 1 else side.label
        tokens = [a.retrieved_tokens for a in side.result.answers if a.retrieved_tokens is not None]
        budget = f"{sum(tokens) / len(tokens):,.0f} retrieved tokens/question" if tokens else "tokens not recorded"
        k = side.result.k if side.result.k is not None else "none"
        lines.append(f"{name}: {accuracy_line(side.result.answers)}; k={k}, {budget}{partial_note([side.result])}")
    if not numbered_by_locomo(every):
        return lines  # the LoCoMo audit's errata are about LoCoMo's questions only
    errata = _shipped_errata()
    if isinstance(errata, str):
        lines.append(f"audited questions are not marked: {errata}")
    else:
        marked = sum(1 for a in results[0].answers if errata.get(a.question_id) is not None)
        lines.append(f"{marked} question(s) here are marked as audited (the LoCoMo audit's errata)")
    return lines
