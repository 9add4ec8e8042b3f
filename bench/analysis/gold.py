"""A result seen under a gold (official, audited-exclude, audited): what `--gold` does to compare, rescore, view
and the paper builds.

- `official`: the result as written.
- `audited-exclude`: the questions whose gold the audit found wrong are dropped (bench.data.audit), the summary
  recomputed; nothing else changes, so this works for every result, imported ones included.
- `audited`: each audited question's gold becomes the audit's corrected answer, and the citation-only entries'
  evidence becomes the audit's corrected evidence. The LLM-free metrics (F1, BLEU-1, evidence recall) are
  recomputed at once; the judge's labels stay as they are until `rejudge --gold audited` re-asks the judge, and the
  result says which gold its labels were given against (`extras.gold.labels`).

The view is recorded in `extras.gold` so a result shown under a gold never passes for the file as written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.analysis.categories import numbered_by_locomo, with_answers
from bench.analysis.scoring.score import llm_free_scores
from bench.data.audit import AUDITED, AUDITED_EXCLUDE, OFFICIAL, Errata, check_gold, load_errata
from bench.models.judge import evidence_recall
from bench.results.schema import Answer, Result

# What a result states about the gold its labels were judged against (set by `rejudge --gold`).
LABELS_GOLD_KEY = "labels_gold"


def labels_gold(result: Result) -> str:
    """The gold the judge's labels were given against: `official` unless a re-judge says otherwise."""
    stated = result.extras.get(LABELS_GOLD_KEY)
    return stated if isinstance(stated, str) else OFFICIAL


def labels_note(result: Result, gold: str) -> str | None:
    """The plain warning a result under the audited gold carries while its labels are against another gold."""
    if gold != AUDITED or labels_gold(result) == AUDITED:
        return None
    return (
        f"judge labels are against the {labels_gold(result)} gold (F1, BLEU-1 and evidence recall are against the "
        "audited gold); re-judge with `engram-bench rejudge --gold audited` for audited labels"
    )


def under_gold(result: Result, gold: str, errata: Errata | None = None) -> Result:
    """The result as seen under `gold` (see the module docstring); `official` returns it unchanged."""
    check_gold(gold)
    if gold == OFFICIAL:
        return result
    errata = errata or load_errata()
    if gold == AUDITED_EXCLUDE:
        answers = [a for a in result.answers if a.question_id not in errata.corrupting]
    else:
        answers = [audited_answer(a, errata) for a in result.answers]
    seen = _gold_block(result, gold, errata, len(result.answers) - len(answers))
    return replace(with_answers(result, answers), extras={**result.extras, "gold": seen})


def _gold_block(result: Result, gold: str, errata: Errata, dropped: int) -> dict[str, Any]:
    block: dict[str, Any] = {"name": gold, "errata": errata.source, "errata_sha256": errata.sha256}
    if gold == AUDITED_EXCLUDE:
        block["dropped"] = dropped
    else:
        block["labels"] = labels_gold(result)
    return block


def audited_answer(answer: Answer, errata: Errata) -> Answer:
    """One answer against the audited gold: corrected answer (score-corrupting entries) or corrected evidence
    (citation-only entries), with the LLM-free metrics recomputed. The label stays the judge's."""
    entry = errata.get(answer.question_id)
    if entry is None:
        return answer
    if entry.corrupts_score:
        f1, scores = llm_free_scores(answer.answer, entry.correct_answer, answer.category)
        return replace(answer, gold=entry.correct_answer, f1=f1, scores=scores)
    evidence = list(entry.correct_evidence)
    recall = answer.evidence_recall
    if answer.sources is not None:
        recall = evidence_recall(answer.sources, evidence)
    elif answer.lines is not None or answer.lines_shown == 0:
        recall = None  # the file kept no per-line sources: the recall against new evidence cannot be known
    # else: a system that ignores k showed the whole conversation (no lines kept), so every turn was shown
    return replace(answer, evidence=evidence, evidence_recall=recall if evidence else None)


GOLD_TEXT = {
    OFFICIAL: "LoCoMo's gold as published",
    AUDITED_EXCLUDE: "the official gold without the questions the LoCoMo audit found score-corrupting",
    AUDITED: "the LoCoMo audit's corrected answers and citations",
}


def gold_line(gold: str, results: list[Result]) -> str:
    """`gold: audited (...)` plus, for the audited gold, whether the judge labels follow it."""
    said = GOLD_TEXT[gold]
    if gold == OFFICIAL and not any(numbered_by_locomo(r.answers) for r in results):
        said = "the dataset's gold as published"  # LongMemEval's, say: none of LoCoMo's questions is here
    line = f"gold: {gold} ({said})"
    if gold == AUDITED_EXCLUDE:
        dropped = sum(int(r.extras.get("gold", {}).get("dropped", 0)) for r in results)
        line += f"; {dropped} answer(s) dropped"
    notes = sorted({note for r in results if (note := labels_note(r, gold)) is not None})
    held = sorted({name for r in results if (name := _held_gold(r)) not in (OFFICIAL, gold)})
    notes += [f"a file already holds the {name} gold (a view written by rescore or rejudge)" for name in held]
    return line + "".join(f"; !! {note}" for note in notes)


def _held_gold(result: Result) -> str:
    """The gold a file's own gold fields hold: official unless it was written as a view under another."""
    block = result.extras.get("gold")
    return str(block.get("name", OFFICIAL)) if isinstance(block, dict) else OFFICIAL


def _mean(values: list[float | None]) -> str:
    kept = [v for v in values if v is not None]
    return f"{sum(kept) / len(kept):.3f}" if kept else "-"


def gold_summary(result: Result) -> str:
    """One line of what a result scores under the gold it is seen under: scored n, accuracy (and the gold its
    labels follow), mean F1, BLEU-1 and evidence recall."""
    scored = result.scored_answers()
    gold = str(result.extras.get("gold", {}).get("name", OFFICIAL))
    tally = result.accuracy
    accuracy = f"{100 * tally.value:.1f}%" if tally.value is not None else "-"
    return (
        f"{gold:<16} n={tally.n:<5} accuracy {accuracy} (labels vs {labels_gold(result)} gold)  "
        f"F1 {_mean([a.f1 for a in scored])}  BLEU-1 {_mean([(a.scores or {}).get('mem0-bleu1') for a in scored])}  "
        f"evidence recall {_mean([a.evidence_recall for a in scored])}"
    )
