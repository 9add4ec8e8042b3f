"""A reader brings a peer's published per-question LoCoMo results and pairs them with our arms:
`engram-bench import-results FILE --format eval-results`, then `compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.results.schema import read_result
from tests.bench.test_compare import run_cli
from tests.conftest import REPO_ROOT

PROBE = REPO_ROOT / "data" / "locomo-audit" / "ap-baseline-v2" / "ap_eval_results_scored.json"
FULL_CONTEXT = REPO_ROOT / "results" / "offline" / "locomo"


def _small_copy(tmp_path: Path, edit=None) -> Path:
    """The probe file cut to conversation 0's first dozen questions, its aggregates made to fit, then edited."""
    document = json.loads(PROBE.read_text(encoding="utf-8"))
    rows = document["detailed_results"]["locomo_exp_user_0"][:12]
    share = sum(sum(r["llm_judgments"].values()) / len(r["llm_judgments"]) for r in rows) / len(rows)
    small = {"total_questions": len(rows), "correct": round(share * len(rows)), "accuracy": share}
    small["detailed_results"] = {"locomo_exp_user_0": rows}
    if edit is not None:
        edit(small)
    path = tmp_path / "peer_eval_results.json"
    path.write_text(json.dumps(small), encoding="utf-8")
    return path


def test_the_audit_probe_file_imports_and_pairs_with_our_full_context_arm(tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "peer"
    code, text, err = run_cli(
        [
            "import-results",
            str(PROBE),
            "--format",
            "eval-results",
            "--name",
            "vague-probe",
            "--out",
            str(out),
            "--judge",
            "openai/gpt-4o-mini",
        ],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    stated = json.loads(PROBE.read_text(encoding="utf-8"))
    runs = [sorted(out.glob(f"locomo/*/vague-probe{suffix}.json")) for suffix in ("", "__r1", "__r2")]
    assert all(len(files) == 10 for files in runs)
    accuracies = []
    for files in runs:
        answers = [a for f in files for a in read_result(f).answers]
        assert len(answers) == stated["total_questions"]
        accuracies.append(sum(a.correct for a in answers) / len(answers))
    assert abs(sum(accuracies) / 3 - stated["accuracy"]) < 1e-9
    first = read_result(runs[0][0])
    assert first.stack == "imported" and first.extras["imported"]["judge"] == "openai/gpt-4o-mini"
    assert first.provenance.sources[0].sha256 == first.extras["imported"]["sha256"]

    code, text, err = run_cli(
        [
            "compare",
            str(out / "locomo" / "*" / "vague-probe*.json"),
            str(FULL_CONTEXT / "*" / "full-context.json"),
            "--json",
            "--draws",
            "50",
        ],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    (report,) = json.loads(text)
    assert report["overall"]["n"] == stated["total_questions"]
    assert report["replicates"]["a"] == pytest.approx(accuracies)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d.update(accuracy=d["accuracy"] + 0.01), "field accuracy"),
        (lambda d: d.update(total_questions=99), "field total_questions"),
        (
            lambda d: d["detailed_results"]["locomo_exp_user_0"][3].update(question_id="locomo_0_qa4000"),
            "no such question",
        ),
        (
            lambda d: d["detailed_results"]["locomo_exp_user_0"].append(d["detailed_results"]["locomo_exp_user_0"][0]),
            "expected each question once",
        ),
        (lambda d: d["detailed_results"]["locomo_exp_user_0"][1].update(category="5"), "expected LoCoMo's category"),
    ],
    ids=["accuracy", "total", "unknown id", "duplicate", "category"],
)
def test_a_file_whose_rows_disagree_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, edit, words) -> None:
    source = _small_copy(tmp_path, edit)
    out = tmp_path / "never"
    code, text, err = run_cli(
        ["import-results", str(source), "--format", "eval-results", "--out", str(out)], capsys, monkeypatch
    )
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and words in err and str(source) in err


def test_a_small_clean_copy_imports_and_a_format_without_a_reader_is_refused(tmp_path, capsys, monkeypatch) -> None:
    source = _small_copy(tmp_path)
    code, _, err = run_cli(
        ["import-results", str(source), "--format", "eval-results", "--out", str(tmp_path / "ok")], capsys, monkeypatch
    )
    assert code == 0, err
    assert len(read_result(tmp_path / "ok" / "locomo" / "conv-26" / "imported.json").answers) == 12
    code, _, err = run_cli(["import-results", str(source), "--format", "mem0"], capsys, monkeypatch)
    assert code == 2 and "--format mem0" in err
