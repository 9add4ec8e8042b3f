"""Import the article's published v1 result files into our result schema, under ``results/v1/``.

The v1 files (``data/engram-eval-v1/results/``) use the original harness's layout: one file per arm and slice with
run-level figures and per-question answers, plus a few supplementary files (held-out extras, the pooled
token-matched mem0 run, calibration items, regression pairs, trade-off inputs). This module:

- converts every arm file into a ``bench.results.schema.Result`` (origin ``engram-eval-v1 import``), renaming the arms we
  know to ours (``e4_belief_v2`` → ``engram`` ...; any other arm keeps its own name) and question ids to
  ``<conv>:<idx>``;
- records the models a file states (``models``, ``model``, ``<role>_model``, ``provider``, at the top or in its
  ``options``) on the ``imported`` stack; a file that states none is on the paper stack only when its bytes are
  one of the article's published files (``bench.exchange.importv1_article``), otherwise ``imported`` with no models. A
  foreign file is never labelled with the paper stack;
- folds the held-out extras into per-conversation files: adversarial answers join each row's file (unscored), and
  two rows that only exist pooled in v1 get per-conversation files (engram with reranking off, mem0 at the
  token-matched k);
- copies the supplementary inputs the paper needs verbatim (calibration, regression, trade-off, the article's
  number list), since they are not arm results;
- notes (one line each, no traceback) the optional supplementary files a release lacks;
- writes ``results/v1/MANIFEST.json``: every written file with its sha256 and the v1 files (path, sha256, license)
  it came from.

Question and gold texts missing from a v1 record are filled from LoCoMo (the v1 README says these fields were
taken from locomo10.json in the first place); answer texts that v1 did not publish stay null.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.data import files as data
from bench.disk.atomic import write_bytes, write_json
from bench.errors import DataError
from bench.exchange.importv1_article import ARTICLE_FILES
from bench.models.stacks import IMPORTED_STACK, ROLES, build_stack
from bench.results.schema import (
    LABELS,
    LOCOMO_CATEGORY_NAMES,
    ORIGIN_V1_IMPORT,
    SCORED_CATEGORIES,
    Answer,
    Calls,
    Costs,
    Latency,
    Provenance,
    Result,
    Source,
    file_name,
    slice_dir,
    write_result,
)
from bench.vocab import REPO_ROOT, V1_DATA_DIR, V1_RESULTS_DIR

V1_LICENSE = "CC BY-NC 4.0 (engram-eval v1, Rishabh Sharma 2026; LoCoMo excerpts remain CC BY-NC 4.0)"

# v1 arm name → ours (docs/architecture.md); ablations keep a readable kebab-case name.
ARM_NAMES = {
    "mem0": "mem0",
    "e2_llm": "engram-llm-decider",
    "e2_jev": "engram-jev",
    "e2_jev_v2": "engram-jev-v2",
    "e4_belief_v2": "engram",
    "e4_belief_v2_norerank": "engram-reranking-off",
    "e3_structural_v2": "e3-structural-v2",
    "e3_structural_v3": "e3-structural-v3",
    "e4_belief": "e4-belief",
    "e4_belief_v2_laya": "engram-laya",
    "e4_belief_v2_shadow": "engram-shadow",
}
# v1 file-name suffixes that are variants of an arm rather than a k (mem0 with dates removed from the context).
ARM_VARIANTS = {"nodates": "nodates"}
SUPPLEMENTARY = ("calibration_items.json", "jev_regression_pairs.json", "tradeoff_inputs.json")
HELDOUT_EXTRA = "heldout_extra.json"
TOKEN_MATCHED = "mem0_token_matched__heldout_pooled__k6.json"
ARTICLE_NUMBERS = "article_numbers.tsv"
DEV_CONVERSATION = "conv-26"

_FILE_NAME = re.compile(
    r"^(?P<arm>[A-Za-z0-9][A-Za-z0-9_-]*?)__(?P<slice>dev(?:_updates2?)?|heldout_conv-\d+)(?:__(?P<tail>k\d+|\w+))?\.json$"
)
# heldout_extra.json keys → (our arm, k, scored?) ; "scored" lists hold categories 1-4, "adv" lists category 5.
_EXTRA_ROWS = {
    "engram_k3_adv": ("engram", 3),
    "engram_k20_adv": ("engram", 20),
    "mem0_k3_adv": ("mem0", 3),
    "mem0_k20_adv": ("mem0", 20),
    "engram_norerank_k3_adv": ("engram-reranking-off", 3),
    "engram_norerank_k3_scored": ("engram-reranking-off", 3),
    "mem0_k6_adv": ("mem0", 6),
}


@dataclass(frozen=True)
class V1File:
    """A v1 arm file and what its name says."""

    path: Path
    v1_arm: str
    arm: str
    slice: str
    k: int | None


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _repo_relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _source(path: Path) -> Source:
    return Source(path=_repo_relative(path), sha256=sha256_of(path), license=V1_LICENSE)


def parse_v1_name(path: Path, k_from_options: int | None) -> V1File:
    match = _FILE_NAME.match(path.name)
    if not match:
        raise DataError(f"{path}: expected a v1 arm file named <arm>__<slice>[__k<k>].json, found {path.name!r}")
    arm = ARM_NAMES.get(match["arm"], match["arm"])  # an arm we do not know keeps its own name
    tail = match["tail"]
    k = k_from_options
    if tail and tail.startswith("k") and tail[1:].isdigit():
        k = int(tail[1:])
    elif tail:
        if tail not in ARM_VARIANTS:
            raise DataError(f"{path}: expected a __k<k> or __nodates suffix, found __{tail}")
        arm = f"{arm}-{ARM_VARIANTS[tail]}"
    slice_name = match["slice"].replace("heldout_", "heldout:")
    return V1File(path=path, v1_arm=match["arm"], arm=arm, slice=slice_name, k=k)


# ------------------------------------------------------------------------------------------------ answer records


def _category_name(raw: Any, where: str) -> str:
    if isinstance(raw, int) and raw in LOCOMO_CATEGORY_NAMES:
        return LOCOMO_CATEGORY_NAMES[raw]
    if raw in ("update", "update2"):
        return str(raw)
    raise DataError(f"{where}: field category: expected 1-5, 'update' or 'update2', found {raw!r}")


def _question_id(conversation: str, idx: Any) -> str:
    """LoCoMo questions: ``<conv>:<position in the conversation's qa list>`` (as bench.data.slices names them);
    update-set items keep their own ids (``U:E01``, ``U2:P01``)."""
    return f"{conversation}:{idx}" if isinstance(idx, int) else str(idx)


class LocomoTexts:
    """Question and gold texts from LoCoMo, for v1 records that carry only (conv, idx)."""

    def __init__(self) -> None:
        self._qa = {c["sample_id"]: c["qa"] for c in data.load_locomo()}

    def question(self, conv: str, idx: int) -> dict[str, Any]:
        try:
            return self._qa[conv][idx]
        except (KeyError, IndexError) as exc:
            raise DataError(f"data/{data.LOCOMO}: expected question {idx} in {conv}, found none") from exc


def _answer_from_v1(rec: dict[str, Any], conversation: str, where: str) -> Answer:
    category = _category_name(rec.get("category"), where)
    return Answer(
        question_id=_question_id(conversation, rec["idx"]),
        conversation=conversation,
        category=category,
        scored=category in SCORED_CATEGORIES,
        question=str(rec["question"]),
        gold=str(rec["gold"]),
        answer=rec.get("answer"),
        label=rec["label"],
        lines=rec.get("lines"),
        lines_shown=int(rec.get("memories") or 0),
        retrieved_tokens=rec.get("retrieved_tokens"),
        checkpoint=rec.get("checkpoint"),
        tier=rec.get("tier"),
        expected=rec.get("expected"),
        type=rec.get("type"),
    )


def _answer_from_extra(rec: dict[str, Any], gold: str, question: str, where: str) -> Answer:
    category = _category_name(rec.get("category"), where)
    return Answer(
        question_id=_question_id(rec["conv"], rec["idx"]),
        conversation=rec["conv"],
        category=category,
        scored=category in SCORED_CATEGORIES,
        question=question,
        gold=gold,
        answer=rec.get("answer"),
        label=rec["label"],
        lines_shown=int(rec.get("memories") or 0),
        retrieved_tokens=rec.get("retrieved_tokens"),
    )


# ------------------------------------------------------------------------------------------------ run-level blocks


def _costs(raw: dict[str, Any]) -> Costs:
    total, decision = raw.get("cost_per_1k"), raw.get("decision_cost_per_1k")
    # engram's write cost is extraction + decision layer; mem0's calls are not split, so its extraction share is null.
    extract = (total - decision) if (total is not None and decision is not None) else None
    return Costs(cost_per_1k=total, decision_cost_per_1k=decision, extract_cost_per_1k=extract)


def _store(raw: dict[str, Any]) -> dict[str, Any]:
    storage = raw.get("storage") or {}
    return {
        "stored": raw.get("stored"),
        "active": raw.get("active"),
        "tentative": raw.get("tentative"),
        "disputed": raw.get("disputed"),
        "same_as": raw.get("same_as_edges"),
        "facts_extracted": raw.get("facts_extracted"),
        "merges": raw.get("merges"),
        "closes": raw.get("closes"),
        "closes_by_reason": storage.get("closes_by_reason"),
        "reopens": storage.get("reopens"),
        "escalations": raw.get("escalations"),
        "llm_decisions": raw.get("llm_decisions"),
        "actions": raw.get("actions"),
        "pipeline_stats": raw.get("pipeline_stats"),
        "stale": raw.get("stale"),
    }


def _updates(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The update-set block (set 1 and set 2 figures), or None on slices without update items."""
    if raw.get("update_items") is None and raw.get("set2_q") is None:
        return None
    storage = raw.get("storage")
    reasons = (storage or {}).get("closes_by_reason") or {}
    stale = raw.get("stale_on_close_items")
    over = raw.get("over_close_on_no_close_items")
    return {
        "items": [
            {k: it.get(k) for k in ("id", "tier", "expected", "behavior")} for it in raw.get("update_items") or []
        ],
        "behavior_counts": raw.get("update_behavior"),
        # [stale close items, stored close items]
        "stale": stale,
        # no-close trap items: how many the arm stored a fact for, and how many of those it wrongly closed
        "traps": {"stored": over[1], "closed": over[0]} if over else None,
        # closes audited against the labelled pairs (v1 "storage"); null when v1 did not audit this run
        "closes": (
            {"total": storage["closes"], "labeled": storage["closes_correct"], "unlabeled": storage["closes_wrong"]}
            if storage
            else None
        ),
        "plan_fulfilled": (
            {
                "asks": storage.get("plan_fulfilled_asks"),
                "correct": reasons.get("fulfilled_correct", 0),
                "wrong": reasons.get("fulfilled_wrong", 0),
            }
            if storage
            else None
        ),
        "closes_detail": raw.get("closes_detail"),
        "set2": (
            {
                "stale_values": raw.get("set2_stale_values"),
                "keep_ok": raw.get("set2_keep_ok"),
                "accuracy_by_type": raw.get("set2_accuracy_by_type"),
            }
            if raw.get("set2_q") is not None
            else None
        ),
    }


def _extras(raw: dict[str, Any], v1_name: str) -> dict[str, Any]:
    hygiene = raw.get("hygiene")
    return {
        "v1_file": v1_name,
        "v1_arm": raw.get("arm"),
        "spend_usd": raw.get("spend"),
        "retrieved_tokens_mean": raw.get("retrieved_tokens_mean"),
        "memories_mean": raw.get("memories_mean"),
        "no_memory_questions": raw.get("no_memory_questions"),
        "hygiene": (
            {k: hygiene.get(k) for k in ("groups", "pairs", "decisions", "merges", "drops", "cost_usd")}
            if hygiene
            else None
        ),
    }


def _roles_used(raw: dict[str, Any]) -> list[str]:
    """The roles a v1 run used: extraction, answers and judging; engram adds its decision layer (and the LLM
    decider when its flags say so), mem0 its update call."""
    used = ["extract", "answer", "judge"]
    if raw.get("system") == "engram":
        used += ["decide", "escalate"]
        # v1 spelled the LLM decider "llm_update" (mem0's update prompt); its six fact questions still went to Jev.
        if (raw.get("flags") or {}).get("relation_decider", "jev") in ("llm", "llm_update"):
            used.append("llm_decider")
    else:
        used.append("update")
    return used


def _paper_models(raw: dict[str, Any]) -> dict[str, str]:
    """The paper stack's models (stacks/paper.toml) for the roles a v1 run used, as provider/model."""
    paper = build_stack("paper").models
    return {role: paper["extract" if role == "update" else role] for role in _roles_used(raw)}


def stated_models(raw: dict[str, Any], where: str) -> dict[str, str]:
    """The models a v1-schema file states, by role: a ``models`` object (role -> model), ``<role>_model`` keys, or
    one ``model`` for every language-model role the run used; at the top level or inside ``options``. A bare model
    name is prefixed with the file's ``provider`` when it states one, else kept as written. Empty: states none."""
    out: dict[str, str] = {}
    for block_name, block in (("", raw), ("options.", raw.get("options") or {})):
        if not isinstance(block, dict):
            continue
        provider = block.get("provider")
        if provider is not None and (not isinstance(provider, str) or not provider or "/" in provider):
            raise DataError(f"{where}: field {block_name}provider: expected a provider name, found {provider!r}")

        def named(value: Any, field_name: str, provider: str | None = provider) -> str:
            if not isinstance(value, str) or not value.strip():
                raise DataError(f"{where}: field {field_name}: expected a model name, found {value!r}")
            value = value.strip()
            return value if "/" in value or provider is None else f"{provider}/{value}"

        single = block.get("model")
        if single is not None:
            for role in _roles_used(raw):
                if role != "decide":  # the typed decisions are not a language model's; a file names them apart
                    out[role] = named(single, f"{block_name}model")
        for role in (*ROLES, "update"):
            if block.get(f"{role}_model") is not None:
                out[role] = named(block[f"{role}_model"], f"{block_name}{role}_model")
        models = block.get("models")
        if models is not None:
            if not isinstance(models, dict):
                raise DataError(
                    f"{where}: field {block_name}models: expected an object role -> model, found {models!r}"
                )
            for role, value in models.items():
                out[str(role)] = named(value, f"{block_name}models.{role}")
    return out


def stack_and_models(raw: dict[str, Any], path: Path) -> tuple[str, dict[str, str], str | None]:
    """(stack, models, note) of a v1-schema file. A file that states models is another run than the article's
    (the article's files state none): the ``imported`` stack with the models as stated, even when they are the
    paper stack's. A file stating none is on the paper stack only if its bytes are one of the article's published
    files; otherwise ``imported`` with no models, and the note says so."""
    stated = stated_models(raw, str(path))
    if stated:
        return IMPORTED_STACK, stated, None
    if sha256_of(path) in ARTICLE_FILES:
        return "paper", _paper_models(raw), None
    return IMPORTED_STACK, {}, "the source file states no models and is not one of the article's published files"


def _provenance(sources: Iterable[Path]) -> Provenance:
    # git fields stay null: an import is a pure function of the v1 bytes, so the files must not change per commit.
    srcs = sorted({_source(p) for p in sources}, key=lambda s: s.path)
    return Provenance(origin=ORIGIN_V1_IMPORT, dataset_sha256=srcs[0].sha256 if len(srcs) == 1 else None, sources=srcs)


# ------------------------------------------------------------------------------------------------------ import


@dataclass
class V1ImportReport:
    written: list[Path]
    manifest: Path
    notes: list[str]  # one line each: an optional source file the release lacks, a file imported without models


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: expected JSON, found a parse error at line {exc.lineno}: {exc.msg}") from None


def _field(record: Any, name: str, kinds: tuple[type, ...], where: str, expected: str) -> Any:
    """``record[name]``, or one DataError line naming the file and field."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected an object, found {type(record).__name__}")
    if name not in record:
        raise DataError(f"{where}: field {name} is missing (expected {expected})")
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise DataError(f"{where}: field {name}: expected {expected}, found {json.dumps(value)[:60]}")
    return value


def _check_v1_record(rec: Any, where: str) -> None:
    _field(rec, "idx", (int, str), where, "the question's index or id")
    _field(rec, "question", (str,), where, "the question text")
    _field(rec, "gold", (str, int, float), where, "the gold answer")
    label = _field(rec, "label", (str,), where, "CORRECT or WRONG")
    if label not in LABELS:
        raise DataError(f"{where}: field label: expected CORRECT or WRONG, found {label!r}")


def _result_from_v1_file(path: Path) -> tuple[V1File, Result]:
    info = parse_v1_name(path, None)  # the name is checked before the bytes are read
    raw = _read_json(path)
    where = str(path)
    system = _field(raw, "system", (str,), where, "the system that ran (engram or mem0)")
    records = _field(raw, "answers", (list,), where, "a list of answer records")
    for i, rec in enumerate(records):
        _check_v1_record(rec, f"{path}: answers[{i}]")
    options = raw.get("options") or {}
    info = parse_v1_name(path, options.get("top_k"))
    stack, models, note = stack_and_models(raw, path)
    conversation = info.slice.split(":", 1)[1] if info.slice.startswith("heldout:") else DEV_CONVERSATION
    answers = [_answer_from_v1(rec, conversation, f"{path}: answers[{i}]") for i, rec in enumerate(records)]
    extras = _extras(raw, path.name)
    if note is not None:
        extras["models_note"] = note
    result = Result.build(
        arm=info.arm,
        system=system,
        stack=stack,
        slice=info.slice,
        k=info.k,
        arm_hash=None,
        settings={"flags": raw.get("flags"), "options": options, "backend": raw.get("backend")},
        models=models,
        standins=[],
        provenance=_provenance([path]),
        answers=answers,
        costs=_costs(raw),
        latency=Latency(
            write_p50_ms=raw.get("write_latency_p50_ms"), decision_p50_ms=raw.get("decision_latency_p50_ms")
        ),
        store=_store(raw),
        updates=_updates(raw),
        extras=extras,
        calls=Calls(
            hits=int((raw.get("cache") or {}).get("hits", 0)), misses=int((raw.get("cache") or {}).get("misses", 0))
        ),
    )
    return info, result


def _with_extra_answers(result: Result, extra: list[Answer], extra_source: Path) -> Result:
    known = {a.question_id for a in result.answers}
    clash = next((a.question_id for a in extra if a.question_id in known), None)
    if clash:
        raise DataError(f"{extra_source}: expected new question ids for {result.arm} k={result.k}, found {clash} twice")
    sources = [Path(REPO_ROOT / s.path) for s in result.provenance.sources] + [extra_source]
    merged = sorted([*result.answers, *extra], key=_answer_order)
    return Result.build(**{**_fields_except_derived(result), "answers": merged, "provenance": _provenance(sources)})


def _answer_order(a: Answer) -> tuple[str, int, str]:
    conv, _, idx = a.question_id.partition(":")
    return (conv, int(idx), "") if idx.isdigit() else (a.question_id, -1, "")


def _fields_except_derived(result: Result) -> dict[str, Any]:
    names = (
        "arm",
        "system",
        "stack",
        "slice",
        "k",
        "arm_hash",
        "settings",
        "models",
        "standins",
        "provenance",
        "costs",
        "latency",
        "store",
        "updates",
        "extras",
        "calls",
        "timing",
    )
    return {n: getattr(result, n) for n in names}


def _texts_for(
    conv: str, idx: int, known: dict[str, Answer], locomo: LocomoTexts, adversarial_gold: str, category: int
) -> tuple[str, str]:
    """(question, gold) for a pooled v1 record: from the same question in a v1 file when there, else LoCoMo."""
    qid = _question_id(conv, idx)
    if qid in known:
        return known[qid].question, known[qid].gold
    qa = locomo.question(conv, idx)
    gold = adversarial_gold if category == 5 else str(qa.get("answer"))
    return str(qa["question"]), gold


def import_v1(source_dir: Path = V1_DATA_DIR, out_dir: Path = V1_RESULTS_DIR) -> V1ImportReport:
    """Convert every v1 file under ``source_dir`` into ``out_dir`` (replacing what was there)."""
    results_dir = source_dir / "results"
    if not results_dir.is_dir():
        raise DataError(f"{results_dir}: expected the v1 results directory, found nothing")
    arm_files = sorted(p for p in results_dir.glob("*__*.json") if p.name != TOKEN_MATCHED)
    results: dict[tuple[str, str, int | None], Result] = {}
    for path in arm_files:
        info, result = _result_from_v1_file(path)
        key = (info.slice, info.arm, info.k)
        if key in results:
            raise DataError(f"{path}: expected one v1 file per arm, slice and k, found a second for {key}")
        results[key] = result

    notes = [
        f"{REPO_ROOT / r.provenance.sources[0].path if r.provenance.sources else r.arm}: {r.extras['models_note']}"
        f" (stack {r.stack!r}, no models recorded)"
        for r in results.values()
        if "models_note" in r.extras
    ]
    locomo = LocomoTexts()
    known = {a.question_id: a for r in results.values() for a in r.answers}
    optional = {
        HELDOUT_EXTRA: "adversarial answers and the pooled reranking-off rows are not folded in",
        TOKEN_MATCHED: "no per-conversation files for mem0 at the token-matched k",
    }
    for name, consequence in optional.items():
        if not (results_dir / name).is_file():
            notes.append(f"{results_dir / name}: not found (optional); {consequence}")
    if (results_dir / HELDOUT_EXTRA).is_file():
        _fold_heldout_extras(results, results_dir, known, locomo)
    if (results_dir / TOKEN_MATCHED).is_file():
        _add_token_matched(results, results_dir, known, locomo)

    # Write into a sibling directory and swap it in at the end, so a failure never leaves half an import.
    staging = out_dir.with_name(f".{out_dir.name}.importing")
    if staging.exists():
        shutil.rmtree(staging)
    written: list[Path] = []
    for (slice_name, arm, k), result in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        target = staging / slice_dir(slice_name) / file_name(arm, k)
        write_result(target, result)
        written.append(target)
    copies = [(results_dir / name, staging / "supplementary" / name) for name in SUPPLEMENTARY]
    copies.append((source_dir / ARTICLE_NUMBERS, staging / ARTICLE_NUMBERS))
    for src, _ in copies:
        if not src.is_file():
            notes.append(f"{src}: not found (optional); not copied, so the paper build lacks it")
    copies = [(src, dst) for src, dst in copies if src.is_file()]
    for src, dst in copies:
        write_bytes(dst, src.read_bytes())
        written.append(dst)
    _write_manifest(staging, f"results/{out_dir.name}", written, results, copies)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    staging.rename(out_dir)
    final = [out_dir / p.relative_to(staging) for p in written]
    return V1ImportReport(written=final, manifest=out_dir / "MANIFEST.json", notes=notes)


def _fold_heldout_extras(
    results: dict[tuple[str, str, int | None], Result], results_dir: Path, known: dict[str, Answer], locomo: LocomoTexts
) -> None:
    path = results_dir / HELDOUT_EXTRA
    extra = json.loads(path.read_text(encoding="utf-8"))
    adversarial_gold = extra["adversarial_gold"]
    grouped: dict[tuple[str, str, int], list[Answer]] = defaultdict(list)
    for key, (arm, k) in _EXTRA_ROWS.items():
        for i, rec in enumerate(extra["answers"][key]):
            question, gold = _texts_for(rec["conv"], rec["idx"], known, locomo, adversarial_gold, rec["category"])
            answer = _answer_from_extra(rec, gold, question, f"{path}: answers.{key}[{i}]")
            grouped[(f"heldout:{rec['conv']}", arm, k)].append(answer)
    for (slice_name, arm, k), answers in sorted(grouped.items()):
        row = (slice_name, arm, k)
        if row in results:
            results[row] = _with_extra_answers(results[row], answers, path)
        else:
            results[row] = _pooled_row(slice_name, arm, k, answers, [path], {"v1_file": HELDOUT_EXTRA})


def _pooled_row(
    slice_name: str, arm: str, k: int, answers: list[Answer], sources: list[Path], extras: dict[str, Any]
) -> Result:
    """A per-conversation file for a row that v1 published only pooled: answers, no run-level figures."""
    system = "mem0" if arm.startswith("mem0") else "engram"
    settings: dict[str, Any] = {"options": {"top_k": k}}
    if arm == "engram-reranking-off":
        settings["flags"] = {"retrieval_rerank": False}
    return Result.build(
        arm=arm,
        system=system,
        stack="paper",
        slice=slice_name,
        k=k,
        arm_hash=None,
        settings=settings,
        models=_paper_models({"system": system, "flags": settings.get("flags")}),
        standins=[],
        provenance=_provenance(sources),
        answers=sorted(answers, key=_answer_order),
        extras=extras,
    )


def _add_token_matched(
    results: dict[tuple[str, str, int | None], Result], results_dir: Path, known: dict[str, Answer], locomo: LocomoTexts
) -> None:
    """mem0 at the token-matched k, split per conversation; the matching itself goes in extras.token_match."""
    path = results_dir / TOKEN_MATCHED
    raw = json.loads(path.read_text(encoding="utf-8"))
    k = int(raw["k"])
    token_match = {
        "k": k,
        "tokens_by_k": {int(kk): v for kk, v in raw["tokens_by_k"].items()},
        "reference_tokens": raw["engram_k3_tokens"],
        "reference_arm": "engram",
        "reference_k": 3,
        "pooled_over": sorted(raw["per_conv"]),
    }
    by_conv: dict[str, list[Answer]] = defaultdict(list)
    for i, rec in enumerate(raw["answers"]):
        question, gold = _texts_for(rec["conv"], rec["idx"], known, locomo, "", rec["category"])
        by_conv[rec["conv"]].append(_answer_from_extra(rec, gold, question, f"{path}: answers[{i}]"))
    for conv, answers in sorted(by_conv.items()):
        key = (f"heldout:{conv}", "mem0", k)
        extras = {
            "v1_file": TOKEN_MATCHED,
            "token_match": {**token_match, "tokens_by_k": {str(kk): v for kk, v in token_match["tokens_by_k"].items()}},
        }
        scored = _pooled_row(key[0], "mem0", k, answers, [path], extras)
        if key in results:  # adversarial answers were folded in first
            merged = _with_extra_answers(scored, [a for a in results[key].answers], results_dir / HELDOUT_EXTRA)
            results[key] = merged
        else:
            results[key] = scored


def _write_manifest(
    out_dir: Path, cited_as: str, written: list[Path], results: dict[Any, Result], copies: list[tuple[Path, Path]]
) -> Path:
    """MANIFEST.json: each written file as ``<cited_as>/<relative path>`` with its sha256 and its v1 sources."""
    by_target = {dst: [_source(src)] for src, dst in copies}
    for (slice_name, arm, k), result in results.items():
        by_target[out_dir / slice_dir(slice_name) / file_name(arm, k)] = list(result.provenance.sources)
    entries = [
        {
            "path": f"{cited_as}/{p.relative_to(out_dir).as_posix()}",
            "sha256": sha256_of(p),
            "sources": [{"path": s.path, "sha256": s.sha256, "license": s.license} for s in by_target[p]],
        }
        for p in sorted(written)
    ]
    manifest = {
        "origin": ORIGIN_V1_IMPORT,
        "license": V1_LICENSE,
        "note": "Imported by `engram-bench import-v1` from data/engram-eval-v1 (see its README for provenance). "
        "Rows v1 published only pooled (engram reranking off, mem0 token-matched) are split per conversation.",
        "files": entries,
    }
    path = out_dir / "MANIFEST.json"
    write_json(path, manifest)
    return path
