"""Import the v3 paper's published per-question labels into our result schema, under ``results/v3/``.

The v3 release (``data/engram-eval-v3/``) carries, per (arm, held-out conversation, k), one TSV line per scored
LoCoMo question: ``idx`` (its position in the conversation's ``qa`` list), ``category``, the judge's ``label`` and
``retrieved_tokens``. Question and gold text come from ``locomo10.json`` at that position. ``MANIFEST.tsv`` records
for every file the source it was transcribed from, the question count and the source file's own accuracy and mean
retrieved tokens; the import recomputes both from the labels and refuses any file that disagrees.

Every file is validated (idx unique, within the ``qa`` list, covering exactly the conversation's scored questions;
category equal to LoCoMo's; aggregates equal to the manifest's) before anything is written; the output is written into
a staging directory and swapped in whole, so a refused import leaves ``results/v3/`` as it was. Re-importing the
same data gives byte-identical files: nothing depends on the clock or the checkout.

The aggregate inputs the paper needs besides the labels (the LongMemEval tests S5-S7, the write-cost ledger totals)
and the paper's list of printed numbers are copied verbatim beside the result files, since the paper build reads only
``results/``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.data import files as data
from bench.data.slices import SliceQuestion, load_slice
from bench.disk.atomic import write_bytes, write_json
from bench.errors import DataError
from bench.exchange.importv1 import sha256_of
from bench.models.stacks import PAPER_V3_STACK
from bench.results.schema import (
    LABELS,
    Answer,
    Provenance,
    Result,
    Source,
    file_name,
    slice_dir,
    write_result,
)
from bench.vocab import V3_RESULTS_DIR, heldout_slice

ORIGIN_V3_IMPORT = "engram-eval-v3 import"
STACK = PAPER_V3_STACK
V3_LICENSE = "CC BY-NC 4.0 (engram-eval v3, Rishabh Sharma 2026; LoCoMo-derived fields remain CC BY-NC 4.0)"
LOCOMO_LICENSE = "CC BY-NC 4.0 (data/locomo/LICENSE.txt)"
HELDOUT_CONVERSATIONS = ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
LABEL_COLUMNS = ("idx", "category", "label", "retrieved_tokens")
MANIFEST_COLUMNS = (
    "file",
    "source",
    "commit",
    "source_chars",
    "questions",
    "source_accuracy",
    "source_retrieved_tokens_mean",
    "sha256",
)
# Aggregates recomputed from the labels must equal the source's own figures to floating-point noise.
_AGGREGATE_TOLERANCE = 1e-9
SUPPLEMENTARY = {
    data.V3_LONGMEMEVAL: "supplementary/longmemeval_tests.json",
    data.V3_WRITE_COSTS: "supplementary/write_costs.json",
}
ARTICLE_NUMBERS = "article_numbers_v3.tsv"

# The paper's stack: gpt-4o-mini answers and judges (temperature 0, mem0's LoCoMo prompts) and extracts for mem0
# and engram v2; text-embedding-3-small embeds; jev-1.13.0 serves the typed decisions and the T0R rerank.
GPT = "openai/gpt-4o-mini"
JEV = "jev/jev-1.13.0"
EMBED = "openai/text-embedding-3-small"
_READ_MODELS = {"answer": GPT, "judge": GPT}


@dataclass(frozen=True)
class V3Arm:
    """How an original file prefix maps to our arm, its system, the paper's name and the models per role."""

    arm: str
    system: str
    paper_name: str
    models: dict[str, str]
    settings: dict[str, Any]


ARMS: dict[str, V3Arm] = {
    "lean_t0r": V3Arm(
        "turns-rerank", "turns-rerank", "T0R", {**_READ_MODELS, "embed": EMBED, "decide": JEV}, {"shortlist": 30}
    ),
    "lean_l0": V3Arm("turns-cosine", "raw-turn-rag", "L0", {**_READ_MODELS, "embed": EMBED}, {}),
    "lean_t0r_llm": V3Arm(
        "turns-llm-rerank",
        "turns-rerank",
        "T0R-LLM",
        {**_READ_MODELS, "embed": EMBED, "decide": GPT},
        {"shortlist": 30},
    ),
    "e4_frozen_sameattr": V3Arm(
        "engram-v2", "engram", "engram v2", {**_READ_MODELS, "embed": EMBED, "extract": GPT, "decide": JEV}, {}
    ),
    "mem0": V3Arm("mem0", "mem0", "mem0 2.1.0", {**_READ_MODELS, "embed": EMBED, "extract": GPT, "update": GPT}, {}),
    "jevmem": V3Arm("jev-mem", "jev-mem", "Jev-Mem", {**_READ_MODELS, "embed": EMBED, "decide": JEV}, {}),
    "full_context": V3Arm("full-context", "full-context", "full context", dict(_READ_MODELS), {}),
}
PROMPTS = {"answer": "mem0 LoCoMo answer prompt", "judge": "mem0 LoCoMo judge prompt", "temperature": 0}

_FILE_NAME = re.compile(r"^(?P<prefix>[a-z0-9_]+?)__heldout_(?P<conv>conv-\d+)(?:__k(?P<k>\d+))?\.tsv$")


@dataclass(frozen=True)
class ManifestRow:
    file: str
    source: str
    commit: str | None
    source_chars: int | None
    questions: int
    source_accuracy: float
    source_tokens_mean: float
    sha256: str


@dataclass(frozen=True)
class LabelFile:
    """One label file and what its name says."""

    relative: str
    prefix: str
    conversation: str
    k: int | None

    @property
    def arm(self) -> V3Arm:
        return ARMS[self.prefix]

    @property
    def slice(self) -> str:
        return f"heldout:{self.conversation}"


def _where(relative: str) -> str:
    return f"data/{relative}"


def _tsv_rows(relative: str, columns: tuple[str, ...]) -> list[dict[str, str]]:
    text = data.verified_text(relative)
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    if tuple(reader.fieldnames or ()) != columns:
        raise DataError(
            f"{_where(relative)}: expected the columns {', '.join(columns)}; found {', '.join(reader.fieldnames or [])}"
        )
    rows = list(reader)
    for number, row in enumerate(rows, start=2):
        if None in row or any(value is None for value in row.values()):
            raise DataError(f"{_where(relative)}: line {number}: expected {len(columns)} tab-separated fields")
    return rows


def _integer(text: str, where: str, field: str) -> int:
    if not re.fullmatch(r"-?\d+", text.strip()):
        raise DataError(f"{where}: field {field}: expected an integer, found {text!r}")
    return int(text)


def _number(text: str, where: str, field: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{where}: field {field}: expected a number, found {text!r}") from None


def read_manifest() -> dict[str, ManifestRow]:
    rows: dict[str, ManifestRow] = {}
    for number, row in enumerate(_tsv_rows(data.V3_MANIFEST, MANIFEST_COLUMNS), start=2):
        where = f"{_where(data.V3_MANIFEST)}: line {number}"
        if row["file"] in rows:
            raise DataError(f"{where}: field file: expected each file once, found {row['file']!r} twice")
        rows[row["file"]] = ManifestRow(
            file=row["file"],
            source=row["source"],
            commit=row["commit"] or None,
            source_chars=_integer(row["source_chars"], where, "source_chars") if row["source_chars"] else None,
            questions=_integer(row["questions"], where, "questions"),
            source_accuracy=_number(row["source_accuracy"], where, "source_accuracy"),
            source_tokens_mean=_number(row["source_retrieved_tokens_mean"], where, "source_retrieved_tokens_mean"),
            sha256=row["sha256"],
        )
    return rows


def parse_label_name(name: str) -> LabelFile:
    match = _FILE_NAME.match(name)
    if not match or match["prefix"] not in ARMS:
        raise DataError(
            f"{_where(data.V3_MANIFEST)}: field file: expected <arm>__heldout_<conv>[__k<k>].tsv with an arm among "
            f"{', '.join(ARMS)}; found {name!r}"
        )
    if match["conv"] not in HELDOUT_CONVERSATIONS:
        raise DataError(
            f"{_where(data.V3_MANIFEST)}: field file: expected a conversation among "
            f"{', '.join(HELDOUT_CONVERSATIONS)}; found {match['conv']!r} in {name!r}"
        )
    k = int(match["k"]) if match["k"] else None
    return LabelFile(f"{data.V3_DIR}/labels/{name}", match["prefix"], match["conv"], k)


# ------------------------------------------------------------------------------------------------ one label file


def _slice_questions(conversation: str) -> list[SliceQuestion]:
    """The held-out slice's questions in ``qa`` order (position i is question ``<conv>:i``), scored or not."""
    questions = list(load_slice(heldout_slice(conversation)).questions)
    for position, question in enumerate(questions):
        if question.id != f"{conversation}:{position}":
            raise DataError(
                f"slice heldout:{conversation}: expected question {position} in qa order, found {question.id}"
            )
    return questions


def _answers(label_file: LabelFile, questions: list[SliceQuestion]) -> list[Answer]:
    where = _where(label_file.relative)
    answers: dict[int, Answer] = {}
    for number, row in enumerate(_tsv_rows(label_file.relative, LABEL_COLUMNS), start=2):
        at = f"{where}: line {number}"
        idx = _integer(row["idx"], at, "idx")
        if idx in answers:
            raise DataError(f"{at}: field idx: expected each question once, found idx {idx} twice")
        if not 0 <= idx < len(questions):
            raise DataError(
                f"{at}: field idx: expected a position in {label_file.conversation}'s qa list "
                f"(0-{len(questions) - 1}), found {idx}"
            )
        category = _integer(row["category"], at, "category")
        question = questions[idx]
        if category != question.category:
            raise DataError(
                f"{at}: field category: expected {question.category} (LoCoMo's category for "
                f"{label_file.conversation} question {idx}), found {category}"
            )
        if row["label"] not in LABELS:
            raise DataError(f"{at}: field label: expected CORRECT or WRONG, found {row['label']!r}")
        tokens = _integer(row["retrieved_tokens"], at, "retrieved_tokens")
        answers[idx] = Answer(
            question_id=question.id,
            conversation=label_file.conversation,
            category=question.category_name,
            scored=question.scored,
            question=str(question.question),
            gold=str(question.gold),
            answer=None,  # answer texts were not transcribed
            label=row["label"],
            retrieved_tokens=tokens,
        )
    scored = {i for i, q in enumerate(questions) if q.scored}
    missing = sorted(scored - set(answers))
    if missing:
        raise DataError(
            f"{where}: field idx: expected every scored question of {label_file.conversation} "
            f"({len(scored)}); found {len(missing)} missing, first idx {missing[0]}"
        )
    unscored = sorted(set(answers) - scored)
    if unscored:
        raise DataError(
            f"{where}: field idx: expected scored questions only (categories 1-4); found idx {unscored[0]}, "
            f"which the heldout:{label_file.conversation} slice does not score"
        )
    return [answers[i] for i in sorted(answers)]


def _check_aggregates(label_file: LabelFile, answers: list[Answer], row: ManifestRow) -> dict[str, float]:
    where = _where(label_file.relative)
    n = len(answers)
    if n != row.questions:
        raise DataError(f"{where}: expected {row.questions} questions (MANIFEST.tsv), found {n}")
    accuracy = sum(a.correct for a in answers) / n
    tokens = sum(a.retrieved_tokens or 0 for a in answers) / n
    for field, ours, theirs in (
        ("accuracy", accuracy, row.source_accuracy),
        ("mean retrieved tokens", tokens, row.source_tokens_mean),
    ):
        if abs(ours - theirs) > _AGGREGATE_TOLERANCE * max(1.0, abs(theirs)):
            raise DataError(f"{where}: expected the {field} recorded in MANIFEST.tsv ({theirs!r}); recomputed {ours!r}")
    return {"accuracy": accuracy, "retrieved_tokens_mean": tokens}


def _result(label_file: LabelFile, row: ManifestRow, questions: list[SliceQuestion]) -> Result:
    where = _where(label_file.relative)
    if data.file_sha256(label_file.relative) != row.sha256:
        raise DataError(
            f"{where}: expected the sha256 recorded in MANIFEST.tsv ({row.sha256}); data/SOURCES.md differs"
        )
    answers = _answers(label_file, questions)
    recomputed = _check_aggregates(label_file, answers, row)
    arm = label_file.arm
    sources = [
        Source(path=f"data/{label_file.relative}", sha256=row.sha256, license=V3_LICENSE),
        Source(path=f"data/{data.LOCOMO}", sha256=data.file_sha256(data.LOCOMO), license=LOCOMO_LICENSE),
    ]
    return Result.build(
        arm=arm.arm,
        system=arm.system,
        stack=STACK,
        slice=label_file.slice,
        k=label_file.k,
        arm_hash=None,
        settings={**arm.settings, "k": label_file.k, "prompts": PROMPTS},
        models=dict(arm.models),
        standins=[],
        # git fields stay null: an import is a pure function of the data bytes, the same at every commit.
        provenance=Provenance(origin=ORIGIN_V3_IMPORT, dataset_sha256=row.sha256, sources=sources),
        answers=answers,
        extras={
            "paper_name": arm.paper_name,
            "v3_file": label_file.relative.rsplit("/", 1)[1],
            "v3_prefix": label_file.prefix,
            "original": {"path": row.source, "commit": row.commit, "chars": row.source_chars},
            "source_accuracy": row.source_accuracy,
            "source_retrieved_tokens_mean": row.source_tokens_mean,
            "retrieved_tokens_mean": recomputed["retrieved_tokens_mean"],
            "answers_transcribed": False,
        },
    )


# ------------------------------------------------------------------------------------------------------ import


@dataclass
class V3ImportReport:
    written: list[Path]
    manifest: Path
    results: int


def build_results() -> dict[tuple[str, str, int | None], Result]:
    """Every label file of the manifest as a validated Result, keyed by (slice, arm, k); nothing is written."""
    manifest = read_manifest()
    slices = {conv: _slice_questions(conv) for conv in HELDOUT_CONVERSATIONS}
    results: dict[tuple[str, str, int | None], Result] = {}
    for name, row in sorted(manifest.items()):
        label_file = parse_label_name(name)
        key = (label_file.slice, label_file.arm.arm, label_file.k)
        if key in results:
            raise DataError(
                f"{_where(data.V3_MANIFEST)}: expected one file per arm, conversation and k; {name} repeats"
            )
        results[key] = _result(label_file, row, slices[label_file.conversation])
    _require_complete_grid(results)
    return results


def _require_complete_grid(results: dict[tuple[str, str, int | None], Result]) -> None:
    """Each (arm, k) must cover all five conversations: the paper pools them."""
    by_arm_k = Counter((arm, k) for (_, arm, k) in results)
    partial = sorted(((arm, k) for (arm, k), n in by_arm_k.items() if n != len(HELDOUT_CONVERSATIONS)), key=str)
    if partial:
        arm, k = partial[0]
        raise DataError(
            f"{_where(data.V3_MANIFEST)}: expected {arm} k={k} for each of {', '.join(HELDOUT_CONVERSATIONS)}; "
            f"found {by_arm_k[(arm, k)]}"
        )


def import_v3(out_dir: Path = V3_RESULTS_DIR) -> V3ImportReport:
    """Convert the v3 release into ``out_dir`` (replacing what was there, only once everything validated)."""
    results = build_results()
    copies = {relative: data.verified_bytes(relative) for relative in (*SUPPLEMENTARY, data.V3_ARTICLE_NUMBERS)}
    for relative in SUPPLEMENTARY:
        _require_json(relative, copies[relative])

    staging = out_dir.with_name(f".{out_dir.name}.importing")
    if staging.exists():
        shutil.rmtree(staging)
    written: dict[Path, list[Source]] = {}
    for (slice_name, arm, k), result in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        target = staging / slice_dir(slice_name) / file_name(arm, k)
        write_result(target, result)
        written[target] = list(result.provenance.sources)
    for relative, raw in copies.items():
        target = staging / (SUPPLEMENTARY.get(relative) or ARTICLE_NUMBERS)
        write_bytes(target, raw)
        written[target] = [Source(path=f"data/{relative}", sha256=data.file_sha256(relative), license=V3_LICENSE)]
    manifest = _write_manifest(staging, f"results/{out_dir.name}", written)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    staging.rename(out_dir)
    final = sorted(out_dir / p.relative_to(staging) for p in written)
    return V3ImportReport(written=final, manifest=out_dir / manifest.name, results=len(results))


def _require_json(relative: str, raw: bytes) -> None:
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataError(f"{_where(relative)}: expected valid JSON; found a parse error at line {exc.lineno}") from None


def _write_manifest(out_dir: Path, cited_as: str, written: dict[Path, list[Source]]) -> Path:
    entries = [
        {
            "path": f"{cited_as}/{path.relative_to(out_dir).as_posix()}",
            "sha256": sha256_of(path),
            "sources": [{"path": s.path, "sha256": s.sha256, "license": s.license} for s in sources],
        }
        for path, sources in sorted(written.items())
    ]
    manifest = {
        "origin": ORIGIN_V3_IMPORT,
        "license": V3_LICENSE,
        "stack": STACK,
        "note": "Imported by `engram-bench import-v3` from data/engram-eval-v3 (see its README for provenance). "
        "Answer texts were not published with the labels, so answers are null and LLM-free scores are absent. "
        "supplementary/ holds aggregate inputs (LongMemEval S5-S7, write costs), not per-question results.",
        "files": entries,
    }
    path = out_dir / "MANIFEST.json"
    write_json(path, manifest)
    return path
