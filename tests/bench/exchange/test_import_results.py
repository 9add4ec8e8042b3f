"""A reader brings a peer's published per-question LoCoMo results and pairs them with our arms:
`engram-bench import-results FILE --format eval-results`, then `compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.results.schema import read_result
from tests.bench.analysis.test_compare import run_cli
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
        (
            lambda d: d.update(detailed_results={"locomo_exp_user_0": []}, total_questions=0, correct=0, accuracy=0),
            "expected at least one question, found none",
        ),
    ],
    ids=["accuracy", "total", "unknown id", "duplicate", "category", "no rows"],
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
    code, _, err = run_cli(["import-results", str(source), "--format", "letta"], capsys, monkeypatch)
    assert code == 2 and "--format" in err and "letta" in err


@pytest.mark.parametrize("name", ["../../../escaped", "a/b", ".hidden", "", "tab\there"])
def test_an_arm_name_that_would_leave_the_out_folder_is_refused_before_reading(
    tmp_path, capsys, monkeypatch, name
) -> None:
    source = _small_copy(tmp_path)
    out = tmp_path / "deep" / "er" / "out"
    code, _, err = run_cli(
        ["import-results", str(source), "--format", "eval-results", "--out", str(out), "--name", name],
        capsys,
        monkeypatch,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--name" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["peer_eval_results.json"]  # nothing made, anywhere


def _mem0_file(tmp_path: Path, question_of=lambda q: q["question"]) -> tuple[Path, list[tuple[int, dict]]]:
    """mem0's evaluation output for conversation index 1's first six scored questions, every other one judged right."""
    conversation = json.loads((REPO_ROOT / "data" / "locomo" / "locomo10.json").read_text(encoding="utf-8"))[1]
    picked = [(j, qa) for j, qa in enumerate(conversation["qa"]) if qa["category"] != 5][:6]
    records = [
        {
            "question": question_of(qa),
            "answer": str(qa["answer"]),
            "response": f"reply {n}",
            "category": qa["category"],
            "bleu_score": 0.0,
            "f1_score": 0.0,
            "llm_score": n % 2,
        }
        for n, (_, qa) in enumerate(picked)
    ]
    path = tmp_path / "mem0_eval.json"
    path.write_text(json.dumps({"1": records}), encoding="utf-8")
    return path, picked


def test_mem0_evaluation_output_imports_by_conversation_and_question_text(tmp_path, capsys, monkeypatch) -> None:
    source, picked = _mem0_file(tmp_path)
    out = tmp_path / "m"
    code, _, err = run_cli(
        ["import-results", str(source), "--format", "mem0", "--name", "mem0-paper", "--out", str(out)],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    [written] = list(out.glob("locomo/*/mem0-paper.json"))
    result = read_result(written)
    sample = written.parent.name
    assert [a.question_id for a in result.answers] == [f"{sample}:{j}" for j, _ in picked]
    assert [a.label for a in result.answers] == ["WRONG", "CORRECT"] * 3
    assert result.answers[1].answer == "reply 1"


def test_a_mem0_question_that_locomo_lacks_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    source, _ = _mem0_file(tmp_path, question_of=lambda q: q["question"] + " (reworded)")
    code, _, err = run_cli(
        ["import-results", str(source), "--format", "mem0", "--out", str(tmp_path / "x")], capsys, monkeypatch
    )
    assert (
        code == 2 and not (tmp_path / "x").exists() and "field question" in err and len(err.strip().splitlines()) == 1
    )


def _locomo_output(tmp_path: Path, tamper: bool = False) -> Path:
    """LoCoMo's evaluation output for conv-26's first eight scored questions: half answered with the gold itself,
    half with something else, each F1 computed by the scorer (and one made up when `tamper`)."""
    from bench.analysis.scoring.locomo import locomo_f1

    sample = json.loads((REPO_ROOT / "data" / "locomo" / "locomo10.json").read_text(encoding="utf-8"))[0]
    qa = []
    for n, item in enumerate(x for x in sample["qa"] if x["category"] != 5):
        if n >= 8:
            break
        prediction = str(item["answer"]) if n % 2 == 0 else "a picnic by the river"
        f1 = locomo_f1(prediction, item["answer"], item["category"])
        qa.append({**item, "gpt-test_prediction": prediction, "gpt-test_f1": 0.77 if tamper and n == 3 else f1})
    path = tmp_path / "locomo_out.json"
    path.write_text(json.dumps([{"sample_id": sample["sample_id"], "qa": qa}]), encoding="utf-8")
    return path


def test_locomo_evaluation_output_imports_with_its_f1_checked(tmp_path, capsys, monkeypatch) -> None:
    code, _, err = run_cli(
        ["import-results", str(_locomo_output(tmp_path)), "--format", "locomo", "--out", str(tmp_path / "l")],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    result = read_result(tmp_path / "l" / "locomo" / "conv-26" / "imported.json")
    assert len(result.answers) == 8 and [a.label for a in result.answers][:2] == ["CORRECT", "WRONG"]
    assert "stand-in" in result.extras["imported"]["label_is"] and result.answers[0].f1 == 1.0


def test_a_locomo_output_whose_f1_is_not_locomos_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    source = _locomo_output(tmp_path, tamper=True)
    code, _, err = run_cli(
        ["import-results", str(source), "--format", "locomo", "--out", str(tmp_path / "l")], capsys, monkeypatch
    )
    assert code == 2 and not (tmp_path / "l").exists()
    assert "gpt-test_f1" in err and "0.77" in err and len(err.strip().splitlines()) == 1
