"""Share results the way the field does: a Hugging Face `datasets.DatasetDict`, saved to disk and as parquet, with a
dataset card; optionally pushed to the Hub.

Tables (one split each; their schemas differ, so on the Hub each is its own config):

- ``answers_paper`` and ``answers_offline``: every per-question answer of every result file under ``results/``, the
  published papers' imported results apart from the offline stand-in runs (a result that used any stand-in, or ran
  on the offline stack, is offline), with the identifying columns ``stack``, ``origin``, ``slice``, ``arm``,
  ``arm_label`` (readable), ``k`` and ``standins``;
- ``runs_paper`` and ``runs_offline``: one row per result file (accuracy, costs, latency, store, settings,
  provenance), split the same way;
- ``update_set1_items``, ``update_set2_messages``, ``update_set2_questions``: the update sets;
- ``contradiction_pairs``: the 50 gold pairs;
- ``calibration_items``: per-item probabilities of Jev and the zero-shot open model with the gold label (from the
  v1 import), when ``results/v1/supplementary/calibration_items.json`` exists.

Layout of OUT_DIR: ``README.md`` (the card), ``parquet/<table>.parquet``, and the `save_to_disk` files
(``dataset_dict.json`` and one folder per split) so ``datasets.load_from_disk(OUT_DIR)`` works offline. The
directory is built next to OUT_DIR and renamed into place: a reader sees the old export or the new one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
from jinja2 import Template

from bench.data import files as data
from bench.disk.atomic import umask_mode, write_text
from bench.errors import ConfigError, ExportError
from bench.models.stacks import OFFLINE_STACK
from bench.results.gitinfo import head_commit
from bench.results.schema import Answer, Result, is_standin_stack, iter_results
from bench.run.arms import arm_label
from bench.vocab import REPO_ROOT

EXPORT_MARKER = ".engram-bench-export"
CALIBRATION_FILE = Path("v1") / "supplementary" / "calibration_items.json"
LICENSE_ID = "cc-by-nc-4.0"


# ------------------------------------------------------------------------------------------------- table builders


# The columns that say which result file a row comes from, first in every table.
_RESULT_COLUMNS = {
    "result_file": datasets.Value("string"),
    "stack": datasets.Value("string"),
    "origin": datasets.Value("string"),
    "slice": datasets.Value("string"),
    "arm": datasets.Value("string"),
    "arm_label": datasets.Value("string"),
    "system": datasets.Value("string"),
    "k": datasets.Value("int32"),
    "standins": datasets.Sequence(datasets.Value("string")),
}

ANSWER_FEATURES = datasets.Features(
    {
        **_RESULT_COLUMNS,
        "question_id": datasets.Value("string"),
        "conversation": datasets.Value("string"),
        "category": datasets.Value("string"),
        "scored": datasets.Value("bool"),
        "question": datasets.Value("string"),
        "gold": datasets.Value("string"),
        "answer": datasets.Value("string"),
        "label": datasets.Value("string"),
        "f1": datasets.Value("float64"),
        "evidence_recall": datasets.Value("float64"),
        "lines": datasets.Sequence(datasets.Value("string")),
        "lines_shown": datasets.Value("int32"),
        "retrieved_tokens": datasets.Value("int32"),
        "checkpoint": datasets.Value("int32"),
        "tier": datasets.Value("string"),
        "expected": datasets.Value("string"),
        "type": datasets.Value("string"),
        "scores": datasets.Value("string"),  # JSON {metric: value} (bench.analysis.scoring), null when absent
        "sources": datasets.Sequence(datasets.Sequence(datasets.Value("string"))),
        "evidence": datasets.Sequence(datasets.Value("string")),
    }
)


_OPTIONAL_FLOAT = datasets.Value("float64")
RUN_FEATURES = datasets.Features(
    {
        **_RESULT_COLUMNS,
        "arm_hash": datasets.Value("string"),
        "accuracy_correct": datasets.Value("int32"),
        "accuracy_n": datasets.Value("int32"),
        "accuracy": _OPTIONAL_FLOAT,
        "accuracy_by_category": datasets.Value("string"),
        "cost_per_1k": _OPTIONAL_FLOAT,
        "decision_cost_per_1k": _OPTIONAL_FLOAT,
        "extract_cost_per_1k": _OPTIONAL_FLOAT,
        "write_p50_ms": _OPTIONAL_FLOAT,
        "decision_p50_ms": _OPTIONAL_FLOAT,
        "models": datasets.Value("string"),
        "settings": datasets.Value("string"),
        "store": datasets.Value("string"),
        "updates": datasets.Value("string"),
        "extras": datasets.Value("string"),
        "metrics": datasets.Value("string"),
        "provenance": datasets.Value("string"),
    }
)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _run_identity(path: Path, root: Path, result: Result) -> dict[str, Any]:
    return {
        "result_file": _relative(path, root),
        "stack": result.stack,
        "origin": result.provenance.origin,
        "slice": result.slice,
        "arm": result.arm,
        "arm_label": arm_label(result.arm, result.k),
        "system": result.system,
        "k": result.k,
    }


def answer_rows(results: Sequence[tuple[Path, Result]], root: Path) -> list[dict[str, Any]]:
    """One row per answer per result file; `lines` stays null when the run did not record it."""
    rows = []
    for path, result in results:
        identity = _run_identity(path, root, result) | {"standins": list(result.standins)}
        for answer in result.answers:
            record = asdict(answer)
            record["scores"] = _json(answer.scores) if answer.scores is not None else None
            rows.append(identity | {name: record[name] for name in Answer.__dataclass_fields__})
    return sorted(rows, key=lambda r: (r["result_file"], r["question_id"]))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def run_rows(results: Sequence[tuple[Path, Result]], root: Path) -> list[dict[str, Any]]:
    """One row per result file; open-ended blocks are JSON text so every row has the same columns."""
    rows = []
    for path, result in results:
        rows.append(
            _run_identity(path, root, result)
            | {
                "standins": list(result.standins),
                "arm_hash": result.arm_hash,
                "accuracy_correct": result.accuracy.correct,
                "accuracy_n": result.accuracy.n,
                "accuracy": result.accuracy.value,
                "accuracy_by_category": _json({c: asdict(t) for c, t in result.accuracy_by_category.items()}),
                "cost_per_1k": result.costs.cost_per_1k,
                "decision_cost_per_1k": result.costs.decision_cost_per_1k,
                "extract_cost_per_1k": result.costs.extract_cost_per_1k,
                "write_p50_ms": result.latency.write_p50_ms,
                "decision_p50_ms": result.latency.decision_p50_ms,
                "models": _json(result.models),
                "settings": _json(result.settings),
                "store": _json(result.store),
                "updates": _json(result.updates),
                "extras": _json(result.extras),
                "metrics": _json(result.metrics),
                "provenance": _json(asdict(result.provenance)),
            }
        )
    return sorted(rows, key=lambda r: r["result_file"])


def _json_text(value: Any) -> str | None:
    """A cell as text: strings unchanged, lists/objects/numbers as JSON, missing (None/NaN) as null."""
    if isinstance(value, str):
        return value
    if not isinstance(value, (list, dict)) and pd.isna(value):
        return None
    return _json(value)


def _flat_table(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Nested objects become `parent_child` columns (pandas.json_normalize); lists and mixed-type columns become
    JSON text, so parquet gets one type per column."""
    frame = pd.json_normalize(list(records), sep="_")
    for column in frame.columns:
        values = frame[column].dropna()
        kinds = {type(v) for v in values}
        if any(k in (list, dict) for k in kinds) or len(kinds) > 1:
            frame[column] = frame[column].map(_json_text)
    return frame


def calibration_rows(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per item: label set, decision question, item index, label, source, and each model's options and
    probabilities as parallel lists (their option sets differ between items)."""
    rows = []
    for label_set, questions in raw["label_sets"].items():
        for question, block in questions.items():
            for index, item in enumerate(block["items"]):
                row = {
                    "label_set": label_set,
                    "question": question,
                    "item": index,
                    "label": item["label"],
                    "source": item.get("source"),
                }
                for model in ("jev", "laya"):
                    dist = item.get(model) or {}
                    row[f"{model}_options"] = list(dist)
                    row[f"{model}_probs"] = [float(p) for p in dist.values()]
                rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------------- assembling


# The two kinds of result a row can come from; each gets its own answers and runs split, the stand-in kind named
# after the stack of stand-ins (bench.models.stacks.OFFLINE_STACK).
PAPER = "paper"
# What each provenance origin value means, for the card (an origin not listed here is shown as it is).
ORIGIN_MEANINGS = {
    "engram-eval-v1 import": "the v1 article's published per-question results, converted to this schema",
    "engram-eval-v3 import": "the v3 paper's published per-question labels, converted to this schema",
    "engram-bench run": "a run of this harness (on this export's stacks: offline stand-ins)",
}


def result_kind(result: Result) -> str:
    """ "offline" for a result any stand-in served or that ran on a stack of stand-ins only, else "paper"."""
    return OFFLINE_STACK if result.standins or is_standin_stack(result.stack) else PAPER


def _typed_table(rows: list[dict[str, Any]], features: datasets.Features) -> datasets.Dataset:
    """A table of fixed columns; an empty one keeps them (a results folder without offline runs still has the split)."""
    if rows:
        return datasets.Dataset.from_list(rows, features=features)
    return datasets.Dataset.from_dict({name: [] for name in features}, features=features)


def build_dataset(results_root: Path) -> tuple[datasets.DatasetDict, dict[str, Any]]:
    """The DatasetDict and the facts the card states (sources, counts, stacks)."""
    results = list(iter_results(results_root))
    if not results:
        raise ExportError(
            f"{results_root}: expected result files (run a slice or `engram-bench import-v1`), found none"
        )
    tables: dict[str, datasets.Dataset] = {}
    for kind in (PAPER, OFFLINE_STACK):
        of_kind = [(path, result) for path, result in results if result_kind(result) == kind]
        tables[f"answers_{kind}"] = _typed_table(answer_rows(of_kind, results_root), ANSWER_FEATURES)
        tables[f"runs_{kind}"] = _typed_table(run_rows(of_kind, results_root), RUN_FEATURES)
    set1, set2 = data.load_update_set1(), data.load_update_set2()
    tables["update_set1_items"] = datasets.Dataset.from_pandas(_flat_table(set1["items"]), preserve_index=False)
    tables["update_set2_messages"] = datasets.Dataset.from_pandas(_flat_table(set2["messages"]), preserve_index=False)
    tables["update_set2_questions"] = datasets.Dataset.from_pandas(_flat_table(set2["questions"]), preserve_index=False)
    tables["contradiction_pairs"] = datasets.Dataset.from_pandas(
        _flat_table(data.load_contradiction_pairs()), preserve_index=False
    )
    sources = [
        {"path": f"data/{relative}", "sha256": data.file_sha256(relative)}
        for relative in (data.UPDATE_SET_1, data.UPDATE_SET_2, data.CONTRADICTION_PAIRS)
    ]
    calibration_path = results_root / CALIBRATION_FILE
    if calibration_path.is_file():
        raw = json.loads(calibration_path.read_text(encoding="utf-8"))
        tables["calibration_items"] = datasets.Dataset.from_list(calibration_rows(raw))
        sources.append(
            {"path": _relative(calibration_path, results_root.parent), "sha256": data.sha256_file(calibration_path)}
        )
    facts = {
        "git_commit": head_commit(REPO_ROOT),
        "results_root": results_root.name,
        "result_files": len(results),
        "stacks": sorted({r.stack for _, r in results}),
        "origins": [
            {
                "value": origin,
                "meaning": ORIGIN_MEANINGS.get(origin, "as recorded by the run"),
                "files": sum(r.provenance.origin == origin for _, r in results),
            }
            for origin in sorted({r.provenance.origin for _, r in results})
        ],
        "arms": sorted(
            {(r.arm, r.k, arm_label(r.arm, r.k), result_kind(r)) for _, r in results},
            key=lambda a: (a[3], a[0], a[1] or 0),
        ),
        "standin_files": sum(bool(r.standins) for _, r in results),
        "sources": sources,
        "calibration_included": "calibration_items" in tables,
    }
    return datasets.DatasetDict(tables), facts


CARD_TEMPLATE = Template(
    """---
license: {{ license }}
language:
- en
pretty_name: engram-bench results
tags:
- agent-memory
- locomo
- benchmark
configs:
{%- for name in tables %}
- config_name: {{ name }}
  data_files: parquet/{{ name }}.parquet
{%- endfor %}
---

# engram-bench results

Per-question results of the engram-bench harness (engram, an agent-memory system with typed decisions, against
mem0 and other baselines on LoCoMo-derived evaluations), with the update sets, the gold contradiction pairs and the
calibration items, exported by `engram-bench export --hf`.

## License

CC BY-NC 4.0, non-commercial use only. The answers quote LoCoMo questions and gold answers (Maharana et al., ACL
2024, CC BY-NC 4.0); the v1 results, update sets, contradiction pairs and calibration items are the engram-eval v1
release (Rishabh Sharma, 2026, CC BY-NC 4.0). Keep this notice with any copy.

## Provenance

- Exported from engram-bench at git commit `{{ facts.git_commit or "unknown" }}`, from {{ facts.result_files }}
  result files under `{{ facts.results_root }}/`.
- Two kinds of rows, in separate splits: `answers_paper` and `runs_paper` hold the published papers' results;
  `answers_offline` and `runs_offline` hold the runs in which local offline stand-ins served the roles listed in
  their `standins` column, not the models the papers used: they test the harness, not the systems, and are never
  the papers' numbers. {{ facts.standin_files }} of the result files used stand-ins.
- Stacks present: {{ facts.stacks | join(", ") }}.
- The values of the `origin` column:
{%- for o in facts.origins %}
  - `origin = "{{ o.value }}"` ({{ o.files }} result files): {{ o.meaning }}.
{%- endfor %}
  Texts that an imported paper did not publish are null.
- Source data files (SHA-256):
{%- for s in facts.sources %}
  - `{{ s.path }}` `{{ s.sha256 }}`
{%- endfor %}
{%- if not facts.calibration_included %}
- `calibration_items` is absent: no `v1/supplementary/calibration_items.json` under the results root at export time.
{%- endif %}

## Tables

Each table is a split of the DatasetDict saved here and its own config on the Hub (their columns differ).

{% for name, table in tables.items() -%}
### `{{ name }}` ({{ table.num_rows }} rows)

{{ descriptions[name] }}

| column | type |
|---|---|
{%- for column, feature in table.features.items() %}
| `{{ column }}` | {{ feature_types[name][column] }} |
{%- endfor %}

{% endfor -%}
## Arms

`arm_label` in every row is the readable name below; `arm` and `k` are the identifiers the result files use.

| split | arm | k | arm_label |
|---|---|---|---|
{%- for arm, k, label, kind in facts.arms %}
| {{ kind }} | `{{ arm }}` | {{ k if k is not none else "–" }} | {{ label }} |
{%- endfor %}

## Loading

```python
import datasets
tables = datasets.load_from_disk("OUT_DIR")          # offline, the whole DatasetDict
answers = datasets.load_dataset("parquet", data_files="OUT_DIR/parquet/answers_paper.parquet", split="train")
```

A paired comparison needs the same `question_id`s on both sides: take one split, filter it by `stack`, `slice`,
`arm` and `k` (held-out conversations are separate slices `heldout:conv-NN`; pool them by `question_id`), and keep
`scored = true` for the article's tables. Never pair a paper row with an offline row. `engram-bench compare` does
this from the result files.
"""
)

_ANSWERS = (
    "One row per question per result file: which stack, origin, slice, arm (with its readable `arm_label`) and k "
    "produced it, the question, gold answer, the system's answer, the judge's label (CORRECT/WRONG), whether it is "
    "scored (LoCoMo categories 1-4 and the update questions; adversarial questions are unscored), lines shown and "
    "retrieved tokens."
)
_RUNS = (
    "One row per result file: accuracy, costs per 1,000 messages (nominal USD), latency medians (recorded), and the "
    "open-ended blocks of the result schema (models, settings, store, updates, extras, provenance) as JSON text."
)
DESCRIPTIONS = {
    "answers_paper": _ANSWERS + " The published papers' results only (`standins` is empty).",
    "answers_offline": _ANSWERS + " Offline stand-in runs only: `standins` lists the roles stand-ins served; not "
    "the papers' numbers.",
    "runs_paper": _RUNS + " The published papers' results only.",
    "runs_offline": _RUNS + " Offline stand-in runs only; not the papers' numbers.",
    "update_set1_items": "Update set 1 (30 items: 15 easy closes, 10 subtle no-close traps, 5 fulfilled plans); nested "
    "fields flattened with `_` (e.g. `original_fact`, `update_text`).",
    "update_set2_messages": "Update set 2: the 28 messages (chains of changes), in ingestion order.",
    "update_set2_questions": "Update set 2: the 20 questions (point-in-time, chain current/past, no-cue changes); "
    "list fields are JSON text.",
    "contradiction_pairs": "The 50 gold contradiction pairs: old fact, new fact, message, expected relation, accepted "
    "relations (JSON text) and temporal status.",
    "calibration_items": "Per-item probability distributions of Jev and of the zero-shot open model (laya) with the "
    "gold label: label set A (29 escalation-labelled decisions) and B (50 gold pairs; relation and temporal "
    "status). `<model>_options` and `<model>_probs` are parallel lists.",
}


def dataset_card(tables: datasets.DatasetDict, facts: dict[str, Any]) -> str:
    feature_types = {
        name: {column: _feature_type(feature) for column, feature in table.features.items()}
        for name, table in tables.items()
    }
    return CARD_TEMPLATE.render(
        license=LICENSE_ID, tables=dict(tables), facts=facts, descriptions=DESCRIPTIONS, feature_types=feature_types
    )


def _feature_type(feature: Any) -> str:
    if isinstance(feature, datasets.Value):
        return feature.dtype
    if isinstance(feature, (datasets.Sequence, datasets.List)):
        return f"list of {_feature_type(feature.feature)}"
    return type(feature).__name__


# ------------------------------------------------------------------------------------------------ writing/pushing


def require_replaceable(out_dir: Path) -> None:
    """Only a new or empty folder, or a previous export (it carries the marker file), may be (re)written."""
    if out_dir.exists() and not (out_dir / EXPORT_MARKER).exists() and any(out_dir.iterdir()):
        raise ConfigError(
            f"{out_dir}: expected a new folder or a previous engram-bench export, found other files (not replaced)"
        )


def write_export(tables: datasets.DatasetDict, card: str, out_dir: Path) -> Path:
    """Build the export in a sibling temp folder, then rename it into place (replacing a previous export only)."""
    out_dir = Path(out_dir)
    require_replaceable(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        staging.chmod(umask_mode(0o777))  # mkdtemp makes it private; the export gets what the user's umask gives
        tables.save_to_disk(str(staging))
        (staging / "parquet").mkdir()
        for name, table in tables.items():
            table.to_parquet(str(staging / "parquet" / f"{name}.parquet"))
        write_text(staging / "README.md", card)
        write_text(staging / EXPORT_MARKER, "written by engram-bench export --hf\n")
        _swap_into_place(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir


def _swap_into_place(staging: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        os.replace(staging, out_dir)
        return
    retired = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    os.replace(out_dir, retired)
    try:
        os.replace(staging, out_dir)
    except BaseException:
        os.replace(retired, out_dir)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def export_hf(results_root: Path, out_dir: Path) -> datasets.DatasetDict:
    """Write the DatasetDict, its parquet files and its card to `out_dir` (atomically)."""
    datasets.disable_progress_bars()  # one summary line from the CLI instead of a bar per split
    require_replaceable(Path(out_dir))  # before the work, not after it
    tables, facts = build_dataset(Path(results_root))
    write_export(tables, dataset_card(tables, facts), Path(out_dir))
    return tables


def _hub_token() -> str | None:
    # local import: huggingface_hub is the hf extra, which the base install lacks
    from huggingface_hub import get_token

    return get_token()


def push_export(out_dir: Path, repo_id: str, token_source: Callable[[], str | None] = _hub_token) -> str:
    """Upload the card and parquet files of an export to a Hub dataset repo; needs a token and the network."""
    token = token_source()
    if not token:
        raise ExportError(
            f"export --push {repo_id}: expected a Hugging Face token (HF_TOKEN or `hf auth login`), found none; "
            f"nothing was uploaded, the export in {out_dir} is complete"
        )
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise ExportError(
            f"export --push {repo_id}: expected network access, found HF_HUB_OFFLINE={os.environ['HF_HUB_OFFLINE']}; "
            f"nothing was uploaded, the export in {out_dir} is complete"
        )
    # local import: huggingface_hub is the hf extra, which the base install lacks
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=str(out_dir),
        allow_patterns=["README.md", "parquet/*"],
        commit_message="engram-bench export",
    )
    return str(commit)
