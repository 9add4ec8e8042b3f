"""A user shares results as a Hugging Face dataset: `engram-bench export --hf OUT_DIR [--push REPO_ID]`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import datasets
import pytest

from bench.cli.program import main
from bench.errors import BenchError
from bench.exchange.hfexport import push_export
from bench.results.schema import Answer, Provenance, Result, write_result
from tests.conftest import REPO_ROOT

CALIBRATION_SOURCE = REPO_ROOT / "data" / "engram-eval-v1" / "results" / "calibration_items.json"


def run_cli(args: list[str], capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["engram-bench", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code or 0, captured.out, captured.err


def _result(arm: str, stack: str, labels: dict[str, str]) -> Result:
    answers = [
        Answer(
            question_id=qid,
            conversation="conv-26",
            category="temporal",
            scored=True,
            question=f"when {qid}?",
            gold="May",
            answer="In May",
            label=label,
            lines=["[2023-05-01] a line"],
            lines_shown=1,
            retrieved_tokens=12,
        )
        for qid, label in labels.items()
    ]
    return Result.build(
        answers=answers,
        arm=arm,
        system=arm,
        stack=stack,
        slice="dev",
        k=3,
        arm_hash="abc123",
        settings={"k": 3},
        models={"answer": "answer-standin-v1" if stack == "offline" else "claude-sonnet-4-6"},
        standins=["answer", "judge"] if stack == "offline" else [],
        provenance=Provenance(origin="run"),
    )


@pytest.fixture()
def results_root(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_result(
        root / "offline" / "dev" / "engram__k3.json",
        _result("engram", "offline", {"conv-26:1": "CORRECT", "conv-26:2": "WRONG"}),
    )
    write_result(
        root / "paper" / "dev" / "mem0__k3.json", _result("mem0", "paper", {"conv-26:1": "WRONG", "conv-26:2": "WRONG"})
    )
    if CALIBRATION_SOURCE.is_file():
        (root / "v1" / "supplementary").mkdir(parents=True)
        shutil.copy(CALIBRATION_SOURCE, root / "v1" / "supplementary" / "calibration_items.json")
    (root / "MANIFEST.json").write_text('{"files": []}', encoding="utf-8")  # not a result: skipped
    return root


def test_export_round_trips_through_disk_offline(results_root, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "hf"
    code, stdout, _ = run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)
    assert code == 0 and "answers_paper 2" in stdout and "answers_offline 2" in stdout

    loaded = datasets.load_from_disk(str(out))
    offline = loaded["answers_offline"].to_pandas().set_index(["arm", "question_id"])
    paper = loaded["answers_paper"].to_pandas().set_index(["arm", "question_id"])
    assert offline.loc[("engram", "conv-26:1"), "label"] == "CORRECT"
    assert paper.loc[("mem0", "conv-26:1"), "label"] == "WRONG"
    assert list(offline.loc[("engram", "conv-26:2"), "standins"]) == ["answer", "judge"]
    assert offline.loc[("engram", "conv-26:2"), "stack"] == "offline"
    assert list(paper.loc[("mem0", "conv-26:2"), "lines"]) == ["[2023-05-01] a line"]
    assert loaded["runs_offline"].num_rows == 1 and loaded["runs_paper"].num_rows == 1
    assert loaded["contradiction_pairs"].num_rows == 50
    assert loaded["update_set1_items"].num_rows == 30
    assert loaded["update_set2_messages"].num_rows == 28
    questions = {row["id"]: row for row in loaded["update_set2_questions"]}
    assert questions["P01"]["chain"] is None  # absent in the source: null, not the text "NaN"
    assert questions["C01q1"]["chain"] == '["U2:C01.1", "U2:C01.2", "U2:C01.3"]'
    if CALIBRATION_SOURCE.is_file():
        calibration = loaded["calibration_items"].to_pandas()
        assert len(calibration) == 129 and set(calibration["label_set"].str[0]) == {"A", "B"}

    # The parquet copies load on their own, as the Hub would serve them.
    parquet = datasets.load_dataset(
        "parquet",
        data_files=str(out / "parquet" / "answers_offline.parquet"),
        split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    assert parquet.num_rows == 2

    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: cc-by-nc-4.0\n")
    assert "config_name: contradiction_pairs" in card and "config_name: answers_offline" in card
    prose = " ".join(card.split())
    assert "`answers_offline` and `runs_offline` hold the runs in which local offline stand-ins served" in prose
    assert "1 of the result files used stand-ins" in prose and "Stacks present: offline, paper" in prose
    assert "| `retrieved_tokens` | int32 |" in card


def test_no_stand_in_row_is_in_a_paper_split_and_no_paper_row_in_an_offline_one(
    results_root, tmp_path, capsys, monkeypatch
) -> None:
    out = tmp_path / "hf"
    assert run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)[0] == 0
    loaded = datasets.load_from_disk(str(out))
    for split in ("answers_paper", "runs_paper"):
        assert all(len(row["standins"]) == 0 and row["stack"] != "offline" for row in loaded[split]), split
    for split in ("answers_offline", "runs_offline"):
        assert all(len(row["standins"]) > 0 or row["stack"] == "offline" for row in loaded[split]), split


def test_the_card_documents_the_origin_values_the_rows_really_hold(results_root, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "hf"
    assert run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)[0] == 0
    loaded = datasets.load_from_disk(str(out))
    card = (out / "README.md").read_text(encoding="utf-8")
    origins = {row["origin"] for split in ("answers_paper", "answers_offline") for row in loaded[split]}
    assert origins == {"run"}
    for origin in origins:
        assert f'`origin = "{origin}"`' in card  # the exact value a filter must use
    assert "engram-eval v1 import" not in card  # the old card named a value no row held


def test_the_real_results_card_names_the_imported_origin_exactly(tmp_path) -> None:
    from bench.exchange.hfexport import build_dataset, dataset_card

    root = tmp_path / "results"
    shutil.copytree(REPO_ROOT / "results" / "v1" / "dev", root / "v1" / "dev")
    tables, facts = build_dataset(root)
    card = dataset_card(tables, facts)
    assert '`origin = "engram-eval-v1 import"`' in card
    assert {row["origin"] for row in tables["answers_paper"]} == {"engram-eval-v1 import"}


def test_every_row_carries_a_readable_arm_label(results_root, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "hf"
    assert run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)[0] == 0
    loaded = datasets.load_from_disk(str(out))
    labels = {row["arm"]: row["arm_label"] for row in loaded["answers_offline"]} | {
        row["arm"]: row["arm_label"] for row in loaded["runs_paper"]
    }
    assert labels == {
        "engram": "engram, the frozen held-out system, k=3",
        "mem0": "mem0 OSS 2.1.0, default configuration, k=3",
    }
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| offline | `engram` | 3 | engram, the frozen held-out system, k=3 |" in card


def test_re_export_replaces_the_previous_export_and_leaves_no_temp_folders(
    results_root, tmp_path, capsys, monkeypatch
) -> None:
    out = tmp_path / "hf"
    assert run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)[0] == 0
    (out / "stale.txt").write_text("from an older export", encoding="utf-8")
    assert run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)[0] == 0
    assert not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.name == "hf") == ["hf"]


def test_a_folder_that_is_not_an_export_is_not_replaced(results_root, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "mywork"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    code, _, err = run_cli(["export", "--hf", str(out), "--results", str(results_root)], capsys, monkeypatch)
    assert code == 2 and "not replaced" in err and err.count("\n") == 1
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mywork", "results"]


def test_no_results_is_a_clear_error(tmp_path, capsys, monkeypatch) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(
        ["export", "--hf", str(tmp_path / "hf"), "--results", str(tmp_path / "empty")], capsys, monkeypatch
    )
    assert code == 2 and "found none" in err
    assert not (tmp_path / "hf").exists()


def test_push_without_a_token_fails_clearly_after_a_complete_export(
    results_root, tmp_path, capsys, monkeypatch
) -> None:
    import huggingface_hub.constants

    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    out = tmp_path / "hf"
    code, _, err = run_cli(
        ["export", "--hf", str(out), "--results", str(results_root), "--push", "me/engram"], capsys, monkeypatch
    )
    assert code == 2
    assert "expected a Hugging Face token (HF_TOKEN or `hf auth login`), found none" in err
    assert "nothing was uploaded" in err and err.count("\n") == 1
    loaded = datasets.load_from_disk(str(out))
    assert loaded["answers_paper"].num_rows + loaded["answers_offline"].num_rows == 4


def test_push_with_a_token_but_offline_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BenchError, match="expected network access, found HF_HUB_OFFLINE=1"):
        push_export(tmp_path, "me/engram", token_source=lambda: "hf_fake")
