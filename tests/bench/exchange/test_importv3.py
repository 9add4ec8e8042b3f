"""`engram-bench import-v3`: the v3 paper's published labels become schema-v1 result files on the paper-v3 stack,
byte-identical on every import, and a broken label file stops the import with one line and nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.data import files as data
from bench.exchange.importv3 import ARMS, HELDOUT_CONVERSATIONS, V3_RESULTS_DIR, import_v3
from bench.results.schema import iter_results

LABELS = data.REPO_ROOT / "data" / "engram-eval-v3" / "labels"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "v3"
    import_v3(out)
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_fresh_import_equals_the_committed_results_byte_for_byte(imported: Path) -> None:
    assert _files(imported) == _files(V3_RESULTS_DIR)


def test_importing_twice_gives_the_same_bytes(imported: Path, tmp_path: Path) -> None:
    again = tmp_path / "v3"
    import_v3(again)
    assert _files(again) == _files(imported)


def test_every_arm_pools_778_questions_with_the_papers_models(imported: Path) -> None:
    pooled: dict[tuple[str, int | None], list[int]] = {}
    for _, result in iter_results(imported / "heldout"):
        assert result.stack == "paper-v3" and result.standins == []
        assert result.provenance.origin == "engram-eval-v3 import"
        assert result.models["answer"] == result.models["judge"] == "openai/gpt-4o-mini"
        assert all(a.answer is None and a.scored for a in result.answers)
        tally = pooled.setdefault((result.arm, result.k), [0, 0])
        tally[0] += result.accuracy.correct
        tally[1] += result.accuracy.n
    assert {n for _, n in pooled.values()} == {778}
    assert len(pooled) == 15
    assert pooled[("turns-rerank", 3)] == [601, 778]  # 77.2%
    assert pooled[("turns-cosine", 3)] == [466, 778]  # 59.9%
    assert pooled[("full-context", None)][0] == 609  # 78.3%


def test_models_per_role_follow_the_paper(imported: Path) -> None:
    def models(arm: str, k: int | None) -> dict[str, str]:
        name = f"{arm}__k{k}.json" if k is not None else f"{arm}.json"
        return json.loads((imported / "heldout" / "conv-48" / name).read_text())["models"]

    assert models("turns-rerank", 3)["decide"] == "jev/jev-1.13.0"
    assert models("turns-llm-rerank", 3)["decide"] == "openai/gpt-4o-mini"
    assert models("engram-v2", 20)["extract"] == models("mem0", 3)["extract"] == "openai/gpt-4o-mini"
    assert "extract" not in models("turns-cosine", 6) and "embed" not in models("full-context", None)


def test_questions_and_gold_come_from_locomo_at_idx(imported: Path) -> None:
    qa = data.locomo_conversation("conv-47")["qa"]
    result = json.loads((imported / "heldout" / "conv-47" / "mem0__k20.json").read_text())
    for answer in result["answers"][:5] + result["answers"][-5:]:
        idx = int(answer["question_id"].split(":")[1])
        assert answer["question"] == qa[idx]["question"]
        assert answer["gold"] == str(qa[idx]["answer"])


def test_the_manifest_names_every_file_with_its_sources(imported: Path) -> None:
    manifest = json.loads((imported / "MANIFEST.json").read_text())
    listed = {e["path"] for e in manifest["files"]}
    assert "results/v3/article_numbers_v3.tsv" in listed
    assert "results/v3/supplementary/longmemeval_tests.json" in listed
    assert len(listed) == 75 + 3
    for entry in manifest["files"]:
        assert entry["sha256"] == hashlib.sha256((imported.parent / entry["path"][8:]).read_bytes()).hexdigest()
        assert all(s["path"].startswith("data/") and "CC BY-NC 4.0" in s["license"] for s in entry["sources"])


def test_the_arm_table_covers_every_original_prefix() -> None:
    prefixes = {p.name.split("__")[0] for p in LABELS.glob("*.tsv")}
    assert prefixes == set(ARMS)
    assert {p.name.split("__")[1].removeprefix("heldout_").removesuffix(".tsv") for p in LABELS.glob("*.tsv")} == set(
        HELDOUT_CONVERSATIONS
    )


# --------------------------------------------------------------------------------------------------- bad input


Edit = Callable[[list[str]], list[str]]


def _doctor(tmp_path: Path, name: str, edit: Edit) -> Path:
    """A data copy with one label file edited and its sha256 updated in MANIFEST.tsv and SOURCES.md, so the import's
    own checks (not the checksum) have to catch the problem."""
    root = tmp_path / "data"
    shutil.copytree(data.REPO_ROOT / "data", root)
    label = root / "engram-eval-v3" / "labels" / name
    old = hashlib.sha256(label.read_bytes()).hexdigest()
    lines = label.read_text().splitlines()
    label.write_text("\n".join(edit(lines)) + "\n")
    new = hashlib.sha256(label.read_bytes()).hexdigest()
    manifest = root / "engram-eval-v3" / "MANIFEST.tsv"
    manifest_old = hashlib.sha256(manifest.read_bytes()).hexdigest()
    manifest.write_text(manifest.read_text().replace(old, new))
    manifest_new = hashlib.sha256(manifest.read_bytes()).hexdigest()
    sources = root / "SOURCES.md"
    sources.write_text(sources.read_text().replace(old, new).replace(manifest_old, manifest_new))
    return root


def _swap_row(lines: list[str], number: int, row: str) -> list[str]:
    return [*lines[:number], row, *lines[number + 1 :]]


BAD = [
    ("missing idx", lambda ls: ls[:40] + ls[41:], "expected every scored question of conv-44 (123); found 1 missing"),
    ("duplicated idx", lambda ls: ls[:6] + [ls[5]] + ls[6:], "line 7: field idx: expected each question once"),
    (
        "idx outside the qa list",
        lambda ls: _swap_row(ls, 1, "158\t2\tCORRECT\t140"),
        "field idx: expected a position in conv-44's qa list (0-157), found 158",
    ),
    (
        "category disagreeing with LoCoMo",
        lambda ls: _swap_row(ls, 1, "0\t4\t" + ls[1].split("\t", 2)[2]),
        "line 2: field category: expected 2 (LoCoMo's category for conv-44 question 0), found 4",
    ),
    (
        "a label changed under a stale aggregate",
        lambda ls: _swap_row(ls, 1, ls[1].replace("CORRECT", "WRONG")),
        "expected the accuracy recorded in MANIFEST.tsv",
    ),
    (
        "an adversarial question among the scored ones",
        lambda ls: [*ls, "123\t5\tCORRECT\t140"],
        "found idx 123, which the heldout:conv-44 slice does not score",
    ),
    (
        "a label outside CORRECT/WRONG",
        lambda ls: _swap_row(ls, 3, "\t".join([*ls[3].split("\t")[:2], "correct", ls[3].split("\t")[3]])),
        "line 4: field label: expected CORRECT or WRONG, found 'correct'",
    ),
]


@pytest.mark.parametrize("case, edit, message", BAD, ids=[b[0] for b in BAD])
def test_a_broken_label_file_stops_with_one_line_exit_2_and_nothing_written(
    tmp_path: Path, case: str, edit: Edit, message: str
) -> None:
    name = "lean_t0r__heldout_conv-44__k3.tsv"
    root = _doctor(tmp_path, name, edit)
    out = tmp_path / "results" / "v3"
    out.mkdir(parents=True)
    (out / "kept.json").write_text("{}")
    env = {**os.environ, "ENGRAM_DATA_DIR": str(root)}
    run = subprocess.run(
        [sys.executable, "-m", "bench", "import-v3", "--out", str(out)], capture_output=True, text=True, env=env
    )
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert name in lines[0] and message in lines[0], lines[0]
    assert run.stdout == ""
    assert sorted(p.name for p in (tmp_path / "results").rglob("*")) == ["kept.json", "v3"]
