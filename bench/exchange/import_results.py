"""Peers' published per-question LoCoMo results as result files (behind `engram-bench import-results`), so
`compare` can pair them with any of our arms on the questions both hold.

Formats:
- `eval-results`: the per-question output of the EverMemOS / MemOS evaluation pipelines (the format of the LoCoMo
  audit's probe file): `{total_questions, correct, accuracy, detailed_results: {<group>: [{question_id
  (locomo_<i>_qa<j>), question, golden_answer, generated_answer, llm_judgments: {judgment_<n>: bool}, category}]}}`.
  Each question's label is the mean of its judgments; each judgment run becomes one replicate (replicate r<n-1>
  holds judgment_<n>'s labels), so `compare` pairs the first run and shows the spread of all.
- `mem0`: mem0's `evaluation/evals.py` output, `{<conversation index>: [{question, answer, response, category,
  bleu_score, f1_score, llm_score}]}` (category 5 skipped, as mem0 does): each question is found by conversation
  index and question text, its label is `llm_score`; the file carries no aggregates to check.
- `locomo`: LoCoMo's own evaluation output (`locomo10.json`'s samples with `<model>_prediction` and `<model>_f1` on
  each qa item): ids by position, each stated F1 checked against LoCoMo's F1 rule recomputed here; it has no judge,
  so the label is a stand-in (F1 >= 0.5), said in every file, and `compare --metric f1` compares the F1 itself.

Every import keeps its provenance: the `imported` stack, the source path and SHA-256, the judge the file states (or
`--judge`), and checks the file's own aggregates (`total_questions`, `correct`, `accuracy`) against what it
recomputes from the rows: a mismatch, an unknown or repeated question id, or a category that disagrees with LoCoMo's
is one line and nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.analysis.scoring.locomo import locomo_f1
from bench.data import files as data
from bench.data.audit import our_question_id
from bench.errors import DataError
from bench.models.stacks import IMPORTED_STACK
from bench.results.schema import LOCOMO_CATEGORY_NAMES, Answer, Provenance, Result, Source, write_result

FORMATS = ("eval-results", "mem0", "locomo")
LABEL_IS = {
    "eval-results": "the mean of the judgment runs; this file holds one run",
    "mem0": "mem0's llm_score (one judgment)",
    "locomo": "a stand-in: LoCoMo's output has no judge; CORRECT when its F1 is at least 0.5 (compare --metric f1)",
}
ORIGIN = "import-results"
LICENSE = "as the source file's (check its publisher's terms)"


@dataclass(frozen=True)
class Row:
    """One imported question: our id, LoCoMo's category code, the question and gold as LoCoMo has them, the
    peer's answer, and one label per judgment run (True = judged correct)."""

    question_id: str
    conversation: str
    code: int
    question: str
    gold: str
    answer: str
    votes: tuple[bool, ...]
    f1: float | None = None  # LoCoMo's own output: the F1 the file states (checked against ours)


def _locomo() -> tuple[list[str], dict[str, dict[str, Any]]]:
    conversations = data.load_locomo()
    order = [str(c["sample_id"]) for c in conversations]
    questions = {
        f"{c['sample_id']}:{j}": {"qa": qa, "conversation": str(c["sample_id"])}
        for c in conversations
        for j, qa in enumerate(c["qa"])
    }
    return order, questions


def _row(qid: str, category: Any, answer: Any, votes: Sequence[bool], known: dict[str, dict[str, Any]], at: str) -> Row:
    entry = known.get(qid)
    if entry is None:
        raise DataError(f"{at}: field question_id: expected a LoCoMo question, found {qid!r} (no such question)")
    code = int(entry["qa"]["category"])
    if category is not None and str(category) != str(code):
        raise DataError(f"{at}: field category of {qid}: expected LoCoMo's category {code}, found {category!r}")
    if not votes:
        raise DataError(f"{at}: expected at least one judgment of the answer, found none")
    return Row(
        qid,
        entry["conversation"],
        code,
        str(entry["qa"]["question"]),
        str(entry["qa"].get("answer", entry["qa"].get("adversarial_answer", ""))),
        str(answer),
        tuple(votes),
    )


def eval_results_rows(document: Any, where: str) -> list[Row]:
    """Rows of an eval-results file, its aggregates checked against them."""
    if not isinstance(document, dict) or not isinstance(document.get("detailed_results"), dict):
        raise DataError(
            f"{where}: expected an eval-results object with detailed_results, found {type(document).__name__}"
        )
    order, known = _locomo()
    rows: list[Row] = []
    seen: set[str] = set()
    for group, records in document["detailed_results"].items():
        if not isinstance(records, list):
            raise DataError(f"{where}: detailed_results.{group}: expected a list of questions, found {records!r:.60}")
        for i, record in enumerate(records):
            at = f"{where}: detailed_results.{group}[{i}]"
            if not isinstance(record, dict) or "question_id" not in record or "generated_answer" not in record:
                raise DataError(f"{at}: expected question_id and generated_answer, found {str(record)[:80]!r}")
            qid = our_question_id(record["question_id"], order, at)
            if qid in seen:
                raise DataError(
                    f"{at}: field question_id: expected each question once, found {record['question_id']} twice"
                )
            seen.add(qid)
            judgments = record.get("llm_judgments")
            if not isinstance(judgments, dict) or not all(isinstance(v, bool) for v in judgments.values()):
                raise DataError(
                    f"{at}: field llm_judgments: expected {{judgment_<n>: true|false}}, found {judgments!r:.60}"
                )
            votes = [judgments[k] for k in sorted(judgments, key=_judgment_number)]
            rows.append(_row(qid, record.get("category"), record["generated_answer"], votes, known, at))
    _check_aggregates(document, rows, where)
    runs = {len(r.votes) for r in rows}
    if len(runs) > 1:
        raise DataError(f"{where}: expected the same number of judgments on every question, found {sorted(runs)}")
    return rows


def _judgment_number(name: str) -> tuple[int, str]:
    tail = name.rsplit("_", 1)[-1]
    return (int(tail), name) if tail.isdigit() else (0, name)


def _check_aggregates(document: dict[str, Any], rows: list[Row], where: str) -> None:
    """The file's own totals must be what its rows give: `accuracy` the mean over questions of the share of true
    judgments, `correct` that mean times the questions, rounded, `total_questions` the number of rows."""
    total = len(rows)
    accuracy = sum(sum(r.votes) / len(r.votes) for r in rows) / total if total else 0.0
    stated_total = document.get("total_questions")
    if stated_total is not None and stated_total != total:
        raise DataError(f"{where}: field total_questions: expected {total} (the rows), found {stated_total!r}")
    stated = document.get("accuracy")
    if stated is not None and (not isinstance(stated, int | float) or not math.isclose(stated, accuracy, abs_tol=5e-5)):
        raise DataError(f"{where}: field accuracy: expected {accuracy:.6f} (the mean over the rows), found {stated!r}")
    correct = document.get("correct")
    if correct is not None and correct != round(accuracy * total):
        raise DataError(f"{where}: field correct: expected {round(accuracy * total)} (the rows), found {correct!r}")


def read_rows(path: Path, fmt: str) -> list[Row]:
    """Parse and check one file in a given format."""
    if fmt not in FORMATS:
        raise DataError(f"--format: expected one of {', '.join(FORMATS)}, found {fmt!r}")
    try:
        document = json.loads(path.read_bytes())
    except OSError as exc:
        raise DataError(f"{path}: expected a readable results file, found {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: expected JSON, found a parse error: {exc}") from exc
    if fmt == "eval-results":
        return eval_results_rows(document, str(path))
    if fmt == "mem0":
        return mem0_rows(document, str(path))
    return locomo_rows(document, str(path))


# LoCoMo's output grades by F1 and has no judge: a row counts as correct at this F1 or above (a stand-in label,
# said in every imported file; compare --metric f1 reads the F1 itself).
LOCOMO_LABEL_F1 = 0.5


def locomo_rows(document: Any, where: str) -> list[Row]:
    """Rows of LoCoMo's evaluation output: `locomo10.json`'s samples in order, each qa item carrying
    `<model>_prediction` and `<model>_f1` for one model key. The stated F1 must be what LoCoMo's F1 rule gives
    (bench.analysis.scoring.locomo) on the prediction and the gold, within 1e-6."""
    if not isinstance(document, list):
        raise DataError(f"{where}: expected LoCoMo's list of samples, found {type(document).__name__}")
    order, known = _locomo()
    keys = {
        k[: -len("_prediction")]
        for sample in document
        if isinstance(sample, dict)
        for qa in sample.get("qa", [])
        if isinstance(qa, dict)
        for k in qa
        if k.endswith("_prediction")
    }
    if len(keys) != 1:
        raise DataError(f"{where}: expected one <model>_prediction key on the qa items, found {sorted(keys) or 'none'}")
    model = keys.pop()
    rows: list[Row] = []
    for i, sample in enumerate(document):
        if not isinstance(sample, dict) or str(sample.get("sample_id")) not in order:
            raise DataError(
                f"{where}: [{i}]: field sample_id: expected a LoCoMo conversation, found {str(sample)[:60]!r}"
            )
        for j, qa in enumerate(sample.get("qa", [])):
            at = f"{where}: [{i}].qa[{j}]"
            prediction, stated = qa.get(f"{model}_prediction"), qa.get(f"{model}_f1")
            if prediction is None:
                continue  # a question the run did not answer
            qid = f"{sample['sample_id']}:{j}"
            entry = known.get(qid)
            if entry is None or str(entry["qa"]["question"]) != str(qa.get("question")):
                raise DataError(
                    f"{at}: field question: expected LoCoMo's question {qid}, found {str(qa.get('question'))[:60]!r}"
                )
            code = int(entry["qa"]["category"])
            if code == 5:
                continue  # LoCoMo scores adversarial answers by another rule: not imported as labels
            ours = locomo_f1(prediction, entry["qa"].get("answer"), code)
            if not isinstance(stated, int | float) or ours is None or abs(float(stated) - ours) > 1e-6:
                raise DataError(
                    f"{at}: field {model}_f1: expected {ours} (LoCoMo's F1 of the prediction), found {stated!r}"
                )
            row = _row(qid, qa.get("category"), prediction, [ours >= LOCOMO_LABEL_F1], known, at)
            rows.append(replace(row, f1=ours))
    if not rows:
        raise DataError(f"{where}: expected answered questions of categories 1-4, found none")
    return rows


def mem0_rows(document: Any, where: str) -> list[Row]:
    """Rows of mem0's evaluation output: per conversation index, records with question, response, category and a
    0/1 `llm_score`. The file has no question ids: each record is the first question of that conversation with the
    same text not already taken (LoCoMo repeats a few questions; they keep their order)."""
    if not isinstance(document, dict) or not document:
        raise DataError(
            f"{where}: expected mem0's evaluation object {{conversation index: [records]}}, found {type(document).__name__}"
        )
    order, known = _locomo()
    rows: list[Row] = []
    for key, records in document.items():
        if not str(key).isdigit() or int(key) >= len(order) or not isinstance(records, list):
            raise DataError(f"{where}: key {key!r}: expected a conversation index below {len(order)} with a list")
        conversation = order[int(key)]
        free = [q for q, entry in known.items() if entry["conversation"] == conversation]
        for i, record in enumerate(records):
            at = f"{where}: [{key}][{i}]"
            if not isinstance(record, dict) or not {"question", "response", "llm_score"} <= set(record):
                raise DataError(f"{at}: expected question, response and llm_score, found {str(record)[:80]!r}")
            text = str(record["question"]).strip()
            qid = next((q for q in free if str(known[q]["qa"]["question"]).strip() == text), None)
            if qid is None:
                raise DataError(
                    f"{at}: field question: expected a question of {conversation} not already given, found {text[:60]!r}"
                )
            free.remove(qid)
            score = record["llm_score"]
            if score not in (0, 1) or isinstance(score, bool):
                raise DataError(f"{at}: field llm_score: expected 0 or 1, found {score!r}")
            rows.append(_row(qid, record.get("category"), record["response"], [score == 1], known, at))
    return rows


def results_of(
    rows: list[Row], arm: str, source: Path, fmt: str, judge: str, sha256: str
) -> dict[tuple[str, int], Result]:
    """One result per (conversation, judgment run), each on slice `locomo:<conv>`, the first run replicate 0."""
    runs = len(rows[0].votes)
    out: dict[tuple[str, int], Result] = {}
    for conversation in dict.fromkeys(r.conversation for r in rows):
        mine = [r for r in rows if r.conversation == conversation]
        for run in range(runs):
            answers = [
                Answer(
                    question_id=r.question_id,
                    conversation=r.conversation,
                    category=LOCOMO_CATEGORY_NAMES[r.code],
                    scored=r.code != 5,
                    question=r.question,
                    gold=r.gold,
                    answer=r.answer,
                    label="CORRECT" if r.votes[run] else "WRONG",
                    f1=r.f1,
                )
                for r in mine
            ]
            replica: dict[str, Any] = {"replicates": runs} if run == 0 else {"replicate": run}
            out[(conversation, run)] = Result.build(
                answers=answers,
                arm=arm,
                system="imported",
                stack=IMPORTED_STACK,
                slice=f"locomo:{conversation}",
                k=None,
                arm_hash=None,
                settings={},
                models={"judge": judge},
                standins=[],
                provenance=Provenance(origin=f"{ORIGIN} {fmt}", sources=[Source(str(source), sha256, LICENSE)]),
                extras={
                    **(replica if runs > 1 else {}),
                    "imported": {
                        "format": fmt,
                        "source": str(source),
                        "sha256": sha256,
                        "judge": judge,
                        "judgment_run": run + 1,
                        "label_is": LABEL_IS[fmt],
                    },
                },
            )
    return out


def import_files(paths: Sequence[Path], fmt: str, arm: str, out: Path, judge: str) -> list[Path]:
    """Read and check every file, then write `<out>/locomo/<conv>/<arm>[__r<i>].json`; nothing is written when any
    file is refused."""
    planned: dict[Path, Result] = {}
    for path in paths:
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        rows = read_rows(path, fmt)
        name = arm if len(paths) == 1 else f"{arm}-{path.stem}"
        for (conversation, run), result in results_of(rows, name, path, fmt, judge, sha256).items():
            file_name = f"{name}.json" if run == 0 else f"{name}__r{run}.json"
            planned[out / "locomo" / conversation / file_name] = result
    return [write_result(target, result) for target, result in planned.items()]
