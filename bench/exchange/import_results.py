"""Peers' published per-question LoCoMo results as result files (behind `engram-bench import-results`), so
`compare` can pair them with any of our arms on the questions both hold, and `engram-bench field` can set them side
by side.

Formats (`--format` may be left out: the format is detected from the file's shape, bench.exchange.peer_readers):
- `eval-results`: the per-question output of the EverMemOS / MemOS evaluation pipelines (the LoCoMo audit's files):
  `{total_questions, correct, accuracy, detailed_results: {<group>: [{question_id (locomo_<i>_qa<j>), question,
  golden_answer, generated_answer, llm_judgments: {judgment_<n>: bool}, category}]}, metadata?}`. Each judgment run
  becomes one replicate (replicate r<n-1> holds judgment_<n>'s labels), so `compare` pairs the first run and shows
  the spread of all. `correct` follows one of three conventions in the wild, and the one found is recorded: a
  majority vote over the runs, or the mean share of true judgments times the questions rounded, or floored.
  `metadata` (when present) states the answer and judge model and the number of runs, and its `run_scores` must be
  each run's accuracy.
- `mem0`: mem0's `evaluation/evals.py` output and its forks, `{<conversation index or sample id>: [{question,
  answer, response, category, llm_score (0/1)}]}` (category 5 skipped, as mem0 does): rows are matched by position
  among the conversation's scored questions and checked by text; the file carries no aggregates to check.
- `zep-grades`, `zep-responses`, `omb`: bench.exchange.peer_readers.
- `longmemeval`, `longmemeval-hypotheses`: LongMemEval's judged log and hypothesis file (JSON lines),
  bench.exchange.longmemeval_results; one result on slice `longmemeval:<file>`.
- `locomo`: LoCoMo's own evaluation output (`locomo10.json`'s samples with `<model>_prediction` and `<model>_f1` on
  each qa item): ids by position, each stated F1 checked against LoCoMo's F1 rule recomputed here; it has no judge,
  so the label is a stand-in (F1 >= 0.5), said in every file, and `compare --metric f1` compares the F1 itself.

Every import keeps its provenance: the `imported` stack, the source path and SHA-256, what the file states about
itself (answer and judge model, its `correct` convention, its category naming; `--judge` only where the file states
no judge), and how many of LoCoMo's 1,540 scored questions it covers. A mismatch between the file's aggregates and
its rows, an unknown or repeated question, or a category that disagrees with LoCoMo's is one line and nothing is
written.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.analysis.coverage import coverage_phrase
from bench.analysis.scoring.locomo import locomo_f1
from bench.data.audit import our_question_id
from bench.errors import DataError
from bench.exchange.longmemeval_results import hypotheses_answers, judged_log_answers
from bench.exchange.peer_readers import detect, omb_rows, zep_grades_rows, zep_responses_rows
from bench.exchange.peer_rows import Reading, Row, coverage, in_order, locomo, make_row, naming_of
from bench.models.stacks import IMPORTED_STACK
from bench.results.schema import LOCOMO_CATEGORY_NAMES, Answer, Provenance, Result, Source, write_result

LABEL_IS = {
    "eval-results": "the mean of the judgment runs; this file holds one run",
    "mem0": "mem0's llm_score (one judgment)",
    "zep-grades": "Zep's published grade (one judgment)",
    "omb": "the Open Memory Benchmark's judge (one judgment)",
    "longmemeval": "LongMemEval's autoeval_label (one judgment)",
    "locomo": "a stand-in: LoCoMo's output has no judge; CORRECT when its F1 is at least 0.5 (compare --metric f1)",
}
ORIGIN = "import-results"
LICENSE = "as the source file's (check its publisher's terms)"
NOT_STATED = "not stated by the file"


def eval_results_rows(document: Any, where: str) -> Reading:
    """Rows of an eval-results file, its aggregates and metadata checked against them."""
    if not isinstance(document, dict) or not isinstance(document.get("detailed_results"), dict):
        raise DataError(
            f"{where}: expected an eval-results object with detailed_results, found {type(document).__name__}"
        )
    known = locomo()
    rows: list[Row] = []
    seen: set[str] = set()
    named: list[tuple[int, str, str]] = []
    for group, records in document["detailed_results"].items():
        if not isinstance(records, list):
            raise DataError(f"{where}: detailed_results.{group}: expected a list of questions, found {records!r:.60}")
        for i, record in enumerate(records):
            at = f"{where}: detailed_results.{group}[{i}]"
            if not isinstance(record, dict) or "question_id" not in record or "generated_answer" not in record:
                raise DataError(f"{at}: expected question_id and generated_answer, found {str(record)[:80]!r}")
            qid = our_question_id(record["question_id"], known.order, at)
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
            category = record.get("category")
            row = make_row(qid, category, record["generated_answer"], votes, known, at)
            rows.append(row)
            if isinstance(category, str) and not category.strip().isdigit():
                named.append((row.code, category, at))
    runs = {len(r.votes) for r in rows}
    if len(runs) > 1:
        raise DataError(f"{where}: expected the same number of judgments on every question, found {sorted(runs)}")
    stated = {"correct_is": _check_aggregates(document, rows, where), "naming": naming_of(named, where)}
    stated.update(_metadata(document.get("metadata"), rows, where))
    return Reading(rows, stated)


def _judgment_number(name: str) -> tuple[int, str]:
    tail = name.rsplit("_", 1)[-1]
    return (int(tail), name) if tail.isdigit() else (0, name)


def correct_conventions(rows: Sequence[Row]) -> dict[str, int]:
    """What `correct` would be under each convention in use: a majority vote over the judgment runs (the LoCoMo
    audit's full-context files), the mean share of true judgments times the questions rounded (its probe files) or
    floored (EverMemOS's own llm_judge)."""
    share = sum(sum(r.votes) / len(r.votes) for r in rows)
    return {
        "a majority vote over the judgment runs": sum(1 for r in rows if 2 * sum(r.votes) > len(r.votes)),
        "the rounded mean over the judgment runs": round(share),
        "the floored mean over the judgment runs": math.floor(share + 1e-9),
    }


def _check_aggregates(document: dict[str, Any], rows: list[Row], where: str) -> str:
    """The file's own totals must be what its rows give: `accuracy` the mean over questions of the share of true
    judgments, `total_questions` the number of rows, `correct` the count under some convention in use (returned)."""
    total = len(rows)
    accuracy = sum(sum(r.votes) / len(r.votes) for r in rows) / total if total else 0.0
    stated_total = document.get("total_questions")
    if stated_total is not None and stated_total != total:
        raise DataError(f"{where}: field total_questions: expected {total} (the rows), found {stated_total!r}")
    stated = document.get("accuracy")
    if stated is not None and (not isinstance(stated, int | float) or not math.isclose(stated, accuracy, abs_tol=5e-5)):
        raise DataError(f"{where}: field accuracy: expected {accuracy:.6f} (the mean over the rows), found {stated!r}")
    correct = document.get("correct")
    if correct is None:
        return "not stated"
    conventions = correct_conventions(rows)
    fitting = [name for name, value in conventions.items() if value == correct and not isinstance(correct, bool)]
    if not fitting:
        expected = " or ".join(f"{v} ({n})" for n, v in conventions.items())
        raise DataError(f"{where}: field correct: expected {expected}, found {correct!r}")
    return " = ".join(fitting)


def _metadata(metadata: Any, rows: list[Row], where: str) -> dict[str, str]:
    """What an eval-results file's `metadata` states: answer and judge model, number of runs (checked), each run's
    accuracy in `run_scores` (checked against the rows, in judgment order)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise DataError(f"{where}: field metadata: expected an object, found {type(metadata).__name__}")
    runs = len(rows[0].votes) if rows else 0
    stated = {
        fact: str(metadata[key])
        for key, fact in (("answer_model", "answer_model"), ("judge_model", "judge_model"))
        if isinstance(metadata.get(key), str)
    }
    if metadata.get("num_runs") is not None and metadata["num_runs"] != runs:
        raise DataError(
            f"{where}: field metadata.num_runs: expected {runs} (judgments per row), found {metadata['num_runs']!r}"
        )
    scores = metadata.get("run_scores")
    if scores is not None:
        ours = [sum(r.votes[run] for r in rows) / len(rows) for run in range(runs)] if rows else []
        if (
            not isinstance(scores, list)
            or len(scores) != runs
            or not all(
                isinstance(s, int | float) and math.isclose(s, o, abs_tol=5e-5)
                for s, o in zip(scores, ours, strict=True)
            )
        ):
            found = str(scores)[:60]
            raise DataError(
                f"{where}: field metadata.run_scores: expected {[round(o, 6) for o in ours]} (each run's accuracy), found {found}"
            )
    stated["runs"] = str(runs)
    return stated


# Readers by format: each takes the parsed document and the path for its messages.
READERS: dict[str, Callable[[Any, str], Reading]] = {}


def read_rows(path: Path, fmt: str | None = None) -> Reading:
    """Parse and check one file in a given format, or in the one its shape fits when none is given."""
    if fmt is not None and fmt not in READERS:
        raise DataError(f"--format: expected one of {', '.join(READERS)}, found {fmt!r}")
    document = _document(path)
    where = str(path)
    chosen = fmt or detect(document, where)
    return replace(READERS[chosen](document, where), format=chosen)


def _document(path: Path) -> Any:
    """The file's JSON, gunzipped first when it is gzip (as the Open Memory Benchmark publishes); a file of one JSON
    object a line (LongMemEval's logs) is the list of its lines."""
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise DataError(f"{path}: expected a readable results file, found {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        raise DataError(f"{path}: expected JSON, found {exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            parsed = [json.loads(line) for line in lines]
        except json.JSONDecodeError:
            raise DataError(f"{path}: expected JSON, found a parse error: {whole}") from whole
        if len(parsed) < 2 or not all(isinstance(p, dict) for p in parsed):
            raise DataError(f"{path}: expected JSON, found a parse error: {whole}") from whole
        return parsed
    # A JSON-lines log of one line parses whole as one object (no other format has a question_id at the top): it is
    # still a log of one line, which was refused as holding none.
    if isinstance(document, dict) and "question_id" in document and len(text.strip().splitlines()) == 1:
        return [document]
    return document


# LoCoMo's output grades by F1 and has no judge: a row counts as correct at this F1 or above (a stand-in label,
# said in every imported file; compare --metric f1 reads the F1 itself).
LOCOMO_LABEL_F1 = 0.5


def locomo_rows(document: Any, where: str) -> list[Row]:
    """Rows of LoCoMo's evaluation output: `locomo10.json`'s samples in order, each qa item carrying
    `<model>_prediction` and `<model>_f1` for one model key. The stated F1 must be what LoCoMo's F1 rule gives
    (bench.analysis.scoring.locomo) on the prediction and the gold, within 1e-6."""
    if not isinstance(document, list):
        raise DataError(f"{where}: expected LoCoMo's list of samples, found {type(document).__name__}")
    known = locomo()
    order = known.order
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
            entry = known.questions.get(qid)
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
            row = make_row(qid, qa.get("category"), prediction, [ours >= LOCOMO_LABEL_F1], known, at)
            rows.append(replace(row, f1=ours))
    if not rows:
        raise DataError(f"{where}: expected answered questions of categories 1-4, found none")
    return rows


def mem0_rows(document: Any, where: str) -> Reading:
    """Rows of mem0's evaluation output: per conversation (index or sample id), records with question, response,
    category and a 0/1 `llm_score`, matched to LoCoMo's questions by position and checked by text."""
    if not isinstance(document, dict) or not document:
        raise DataError(
            f"{where}: expected mem0's evaluation object {{conversation index: [records]}}, found {type(document).__name__}"
        )
    known = locomo()
    rows: list[Row] = []
    named: list[tuple[int, str, str]] = []
    for key, records in document.items():
        if not isinstance(records, list):
            raise DataError(f"{where}: key {key!r}: expected a list of records, found {type(records).__name__}")
        conversation = known.conversation_of(key, f"{where}: key {key!r}")
        for qid, record, at in in_order(known, conversation, records, lambda r: r.get("question"), f"{where}: [{key}]"):
            if not {"question", "response", "llm_score"} <= set(record):
                raise DataError(f"{at}: expected question, response and llm_score, found {str(record)[:80]!r}")
            score = record["llm_score"]
            if score not in (0, 1) or isinstance(score, bool):
                raise DataError(f"{at}: field llm_score: expected 0 or 1, found {score!r}")
            category = record.get("category")
            row = make_row(qid, category, record["response"], [score == 1], known, at)
            rows.append(row)
            if isinstance(category, str) and not category.strip().isdigit():
                named.append((row.code, category, at))
    return Reading(rows, {"naming": naming_of(named, where)})


READERS.update(
    {
        "eval-results": eval_results_rows,
        "mem0": mem0_rows,
        "zep-grades": zep_grades_rows,
        "zep-responses": zep_responses_rows,
        "omb": omb_rows,
        "longmemeval": judged_log_answers,
        "longmemeval-hypotheses": hypotheses_answers,
        "locomo": lambda document, where: Reading(locomo_rows(document, where), {"label": "F1 >= 0.5 (a stand-in)"}),
    }
)
FORMATS = tuple(READERS)


def results_of(
    reading: Reading, arm: str, source: Path, fmt: str, judge: str, sha256: str
) -> dict[tuple[str, int], Result]:
    """One result per (conversation, judgment run), each on slice `locomo:<conv>`, the first run replicate 0. The
    judge is the one the file states, else `judge` (the user's word, or "not stated")."""
    rows = reading.rows
    runs = len(rows[0].votes)
    stated_judge = reading.stated.get("judge_model", judge)
    # a judge nobody names is not a model: left out, so compare does not call it a different model than ours
    models = {"judge": stated_judge} if stated_judge != NOT_STATED else {}
    if "answer_model" in reading.stated:
        models["answer"] = reading.stated["answer_model"]
    cov = coverage(rows, locomo())
    latency = {r.question_id: r.retrieve_ms for r in rows if r.retrieve_ms is not None}
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
                    retrieved_tokens=r.retrieved_tokens,
                )
                for r in mine
            ]
            replica: dict[str, Any] = {"replicates": runs} if run == 0 else {"replicate": run}
            imported: dict[str, Any] = {
                "format": fmt,
                "source": str(source),
                "sha256": sha256,
                "judge": stated_judge,
                "judgment_run": run + 1,
                "label_is": LABEL_IS[fmt],
                "stated": dict(reading.stated),
                "coverage": cov,
            }
            mine_latency = {r.question_id: latency[r.question_id] for r in mine if r.question_id in latency}
            if mine_latency:
                imported["retrieve_ms"] = mine_latency
            out[(conversation, run)] = Result.build(
                answers=answers,
                arm=arm,
                system="imported",
                stack=IMPORTED_STACK,
                slice=f"locomo:{conversation}",
                k=None,
                arm_hash=None,
                settings={},
                models=models,
                standins=[],
                provenance=Provenance(origin=f"{ORIGIN} {fmt}", sources=[Source(str(source), sha256, LICENSE)]),
                extras={**(replica if runs > 1 else {}), "imported": imported},
            )
    return out


def import_files(
    paths: Sequence[Path], fmt: str | None, arm: str, out: Path, judge: str, say: Callable[[str], None] | None = None
) -> list[Path]:
    """Read and check every file, then write `<out>/locomo/<conv>/<arm>[__r<i>].json`; nothing is written when any
    file is refused. `say` hears one line per file: its format, what it states and its coverage."""
    planned: dict[Path, Result] = {}
    for path in paths:
        reading = read_rows(path, fmt)
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        name = arm if len(paths) == 1 else f"{arm}-{path.stem}"
        if reading.answers is not None:
            result = answers_result(reading, name, path, judge, sha256)
            planned[out / "longmemeval" / f"{name}.json"] = result
            if say is not None:
                say(_summary(path, result))
            continue
        if not reading.rows:
            raise DataError(f"{path}: expected at least one question, found none")
        results = results_of(reading, name, path, reading.format, judge, sha256)
        first = next(iter(results.values()))
        if say is not None:
            say(_summary(path, first))
        for (conversation, run), result in results.items():
            file_name = f"{name}.json" if run == 0 else f"{name}__r{run}.json"
            planned[out / "locomo" / conversation / file_name] = result
    return [write_result(target, result) for target, result in planned.items()]


def answers_result(reading: Reading, arm: str, source: Path, judge: str, sha256: str) -> Result:
    """One result of a benchmark other than LoCoMo, its answers as the reader built them, on the slice it names."""
    stated_judge = reading.stated.get("judge_model", judge)
    return Result.build(
        answers=reading.answers or [],
        arm=arm,
        system="imported",
        stack=IMPORTED_STACK,
        slice=reading.stated["slice"],
        k=None,
        arm_hash=None,
        settings={},
        models={"judge": stated_judge} if stated_judge != NOT_STATED else {},
        standins=[],
        provenance=Provenance(origin=f"{ORIGIN} {reading.format}", sources=[Source(str(source), sha256, LICENSE)]),
        extras={
            "imported": {
                "format": reading.format,
                "source": str(source),
                "sha256": sha256,
                "judge": stated_judge,
                "judgment_run": 1,
                "label_is": LABEL_IS[reading.format],
                "stated": dict(reading.stated),
                "coverage": reading.coverage,
            }
        },
    )


def _summary(path: Path, result: Result) -> str:
    imported = result.extras["imported"]
    stated = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in imported["stated"].items())
    cov = imported.get("coverage")
    if cov is None:
        return f"{path}: format {imported['format']}; {stated}"
    flag = " (PARTIAL)" if cov["partial"] else ""
    return f"{path}: format {imported['format']}; {stated}; questions: {coverage_phrase(cov)}{flag}"
