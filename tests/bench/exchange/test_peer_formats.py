"""Each published format, written here in small made-up files of its real structure (LoCoMo's questions, our own
answers and judgments), imports without --format, records what the file states about itself and how much of LoCoMo
it covers, and refuses what does not fit in one line."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.results.schema import read_result
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

LOCOMO = json.loads((REPO_ROOT / "data" / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
MEM0_NAMES = {1: "single-hop", 2: "temporal", 3: "multi-hop", 4: "open-domain"}


def _scored(index: int) -> list[tuple[int, dict[str, Any]]]:
    return [(j, qa) for j, qa in enumerate(LOCOMO[index]["qa"]) if qa["category"] != 5]


def _write(tmp_path: Path, name: str, document: Any, zipped: bool = False) -> Path:
    path = tmp_path / name
    raw = json.dumps(document).encode()
    path.write_bytes(gzip.compress(raw) if zipped else raw)
    return path


def _import(tmp_path: Path, source: Path, capsys, monkeypatch, *extra: str) -> tuple[int, str, str, Path]:
    out = tmp_path / "out"
    code, text, err = run_cli(["import-results", str(source), "--out", str(out), *extra], capsys, monkeypatch)
    return code, text, err, out


def _eval_results(votes: list[list[bool]], correct: int, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    rows = [
        {
            "question_id": f"locomo_0_qa{j}",
            "question": qa["question"],
            "golden_answer": str(qa["answer"]),
            "generated_answer": f"my guess {n}",
            "llm_judgments": {f"judgment_{k + 1}": v for k, v in enumerate(vote)},
            "category": str(qa["category"]),
        }
        for n, ((j, qa), vote) in enumerate(zip(_scored(0), votes, strict=False))
    ]
    share = sum(sum(v) / len(v) for v in votes) / len(votes)
    document = {"total_questions": len(rows), "correct": correct, "accuracy": share}
    document["detailed_results"] = {"locomo_exp_user_0": rows}
    if metadata is not None:
        document["metadata"] = metadata
    return document


# Five questions judged three times: 2 of 3 true on four of them, none on the fifth. Majority: 4 questions; the
# shares sum to 4 x 2/3 = 2.67 questions: rounded 3, floored 2. Each convention gives a different count.
VOTES = [[True, True, False], [True, False, True], [False, True, True], [True, True, False], [False, False, False]]


@pytest.mark.parametrize(
    ("correct", "convention"),
    [
        (4, "a majority vote over the judgment runs"),
        (3, "the rounded mean over the judgment runs"),
        (2, "the floored mean over the judgment runs"),
    ],
)
def test_an_eval_results_file_counts_correct_by_any_convention_in_use_and_says_which(
    tmp_path, capsys, monkeypatch, correct, convention
) -> None:
    source = _write(tmp_path, "eval_results.json", _eval_results(VOTES, correct))
    code, text, err, out = _import(tmp_path, source, capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "locomo" / "conv-26" / "imported.json")
    assert result.extras["imported"]["stated"]["correct_is"] == convention and convention in text
    assert result.extras["imported"]["format"] == "eval-results"


def test_an_eval_results_correct_that_fits_no_convention_names_all_three(tmp_path, capsys, monkeypatch) -> None:
    source = _write(tmp_path, "eval_results.json", _eval_results(VOTES, 5))
    code, _, err, out = _import(tmp_path, source, capsys, monkeypatch)
    assert code == 2 and not out.exists() and len(err.strip().splitlines()) == 1
    assert "field correct" in err and "majority" in err and "floored" in err and "found 5" in err


def test_eval_results_metadata_names_the_models_and_its_run_scores_are_checked(tmp_path, capsys, monkeypatch) -> None:
    runs = [sum(v[k] for v in VOTES) / len(VOTES) for k in range(3)]
    metadata = {"answer_model": "acme-answerer-1", "judge_model": "acme-judge-2", "num_runs": 3, "run_scores": runs}
    source = _write(tmp_path, "eval_results.json", _eval_results(VOTES, 4, metadata))
    code, _, err, out = _import(tmp_path, source, capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "locomo" / "conv-26" / "imported.json")
    assert result.models == {"judge": "acme-judge-2", "answer": "acme-answerer-1"}
    assert result.extras["imported"]["stated"]["runs"] == "3"

    metadata["run_scores"] = [runs[0], runs[1], runs[2] + 0.2]
    tampered = _write(tmp_path, "eval_results_tampered.json", _eval_results(VOTES, 4, metadata))
    code, _, err, out = _import(tmp_path / "t", tampered, capsys, monkeypatch)
    assert code == 2 and "metadata.run_scores" in err and len(err.strip().splitlines()) == 1


def _mem0(index: int, key: Any, count: int, name_of=lambda code: str(code)) -> dict[str, Any]:
    records = [
        {"question": qa["question"], "answer": str(qa.get("answer")), "response": f"reply {n}",
         "category": name_of(qa["category"]), "llm_score": n % 2}
        for n, (_, qa) in enumerate(_scored(index)[:count])
    ]  # fmt: skip
    return {key: records}


def test_mem0_output_keyed_by_sample_id_with_mem0s_category_names_is_detected_and_recorded(
    tmp_path, capsys, monkeypatch
) -> None:
    source = _write(tmp_path, "evals.json", _mem0(2, "conv-41", 9, lambda code: MEM0_NAMES[code]))
    code, text, err, out = _import(tmp_path, source, capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "locomo" / "conv-41" / "imported.json")
    assert result.extras["imported"]["stated"]["naming"] == "mem0's names"
    assert [a.question_id for a in result.answers] == [f"conv-41:{j}" for j, _ in _scored(2)[:9]]
    assert "9 of 1,540" in text and "PARTIAL" in text


def test_a_named_category_contradicting_the_questions_code_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    document = _mem0(3, 3, 8, lambda code: MEM0_NAMES[code])
    document[3][5]["category"] = "temporal" if document[3][5]["category"] != "temporal" else "single-hop"
    code, _, err, out = _import(tmp_path, _write(tmp_path, "evals.json", document), capsys, monkeypatch)
    assert code == 2 and not out.exists() and len(err.strip().splitlines()) == 1
    assert "[3][5]" in err and "field category" in err and "mem0's name" in err


def test_repeated_question_texts_are_told_apart_by_position_not_text(tmp_path, capsys, monkeypatch) -> None:
    index, first, again = next(
        (i, scored[a][0], scored[b][0])
        for i in range(len(LOCOMO))
        for scored in [_scored(i)]
        for a in range(len(scored))
        for b in range(a + 1, len(scored))
        if scored[a][1]["question"].strip() == scored[b][1]["question"].strip()
    )
    positions = [j for j, _ in _scored(index)]
    document = _mem0(index, index, positions.index(again) + 1)
    code, _, err, out = _import(tmp_path, _write(tmp_path, "evals.json", document), capsys, monkeypatch)
    assert code == 0, err
    ids = [a.question_id for a in read_result(next(out.glob("locomo/*/imported.json"))).answers]
    sample = LOCOMO[index]["sample_id"]
    assert ids.count(f"{sample}:{first}") == 1 and ids[-1] == f"{sample}:{again}"

    swapped = _mem0(index, str(index), 4)
    swapped[str(index)][1], swapped[str(index)][2] = swapped[str(index)][2], swapped[str(index)][1]
    code, _, err, _ = _import(tmp_path / "s", _write(tmp_path, "swapped.json", swapped), capsys, monkeypatch)
    assert code == 2 and "field question" in err and "scored question 2" in err


def test_zep_grades_import_and_zep_responses_point_at_the_grades(tmp_path, capsys, monkeypatch) -> None:
    records = [
        {"question": qa["question"], "answer": f"zep says {n}", "golden_answer": str(qa["answer"]),
         "grade": n != 2, "category": qa["category"]}
        for n, (_, qa) in enumerate(_scored(1)[:5])
    ]  # fmt: skip
    grades = _write(tmp_path, "grades.json", {"locomo_experiment_user_1": records})
    code, _, err, out = _import(tmp_path, grades, capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "locomo" / "conv-30" / "imported.json")
    assert [a.label for a in result.answers] == ["CORRECT", "CORRECT", "WRONG", "CORRECT", "CORRECT"]
    assert result.extras["imported"]["format"] == "zep-grades"
    assert result.models == {} and result.extras["imported"]["judge"] == "not stated by the file"

    responses = [{k: r[k] for k in ("question", "answer", "golden_answer")} | {"duration_ms": 812.5} for r in records]
    source = _write(tmp_path, "responses.json", {"locomo_experiment_user_1": responses})
    code, _, err, out = _import(tmp_path / "r", source, capsys, monkeypatch)
    assert code == 2 and "grades" in err and len(err.strip().splitlines()) == 1


def _omb(count: int, correct_of=lambda n: n % 3 != 0) -> dict[str, Any]:
    results = [
        {"query_id": f"conv-26_q{n}", "query": qa["question"], "answer": f"omb {n}", "correct": correct_of(n),
         "context_tokens": 1000 + n, "retrieve_time_ms": 50.0 + n, "gold_answers": [str(qa["answer"])],
         "meta": {"sample_id": "conv-26", "category": MEM0_NAMES[qa["category"]]}}
        for n, (_, qa) in enumerate(_scored(0)[:count])
    ]  # fmt: skip
    right = sum(r["correct"] for r in results)
    return {"answer_llm": "acme:big", "judge_llm": "acme:small", "total_queries": count, "correct": right,
            "accuracy": right / count, "results": results}  # fmt: skip


def test_open_memory_benchmark_output_imports_gzipped_keeping_tokens_and_latency(tmp_path, capsys, monkeypatch) -> None:
    source = _write(tmp_path, "locomo10.json.gz", _omb(7), zipped=True)
    code, text, err, out = _import(tmp_path, source, capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "locomo" / "conv-26" / "imported.json")
    assert [a.retrieved_tokens for a in result.answers] == [1000 + n for n in range(7)]
    assert result.extras["imported"]["retrieve_ms"]["conv-26:" + str(_scored(0)[3][0])] == 53.0
    assert result.models == {"judge": "acme:small", "answer": "acme:big"}
    assert Counter(a.label for a in result.answers) == Counter(CORRECT=4, WRONG=3)
    assert "7 of 1,540: conv-30" in text


def test_open_memory_benchmark_totals_must_match_the_rows(tmp_path, capsys, monkeypatch) -> None:
    document = _omb(6)
    document["correct"] += 1
    code, _, err, out = _import(tmp_path, _write(tmp_path, "o.json.gz", document, zipped=True), capsys, monkeypatch)
    assert code == 2 and "field correct" in err and not out.exists()


def test_a_file_of_no_known_format_names_the_closest_and_its_first_misfit(tmp_path, capsys, monkeypatch) -> None:
    odd = {"results": [{"question": "Where?", "ok": True}], "total": 1}
    code, _, err, out = _import(tmp_path, _write(tmp_path, "odd.json", odd), capsys, monkeypatch)
    assert code == 2 and not out.exists() and len(err.strip().splitlines()) == 1
    assert "closest omb" in err and "results[0].query_id" in err


def test_a_partial_run_is_marked_partial_wherever_compare_and_view_print_its_accuracy(
    tmp_path, capsys, monkeypatch
) -> None:
    from bench.view.trust import side_under, trust_lines

    source = _write(tmp_path, "locomo10.json.gz", _omb(9), zipped=True)
    code, _, err, out = _import(tmp_path, source, capsys, monkeypatch, "--name", "omb-small")
    assert code == 0, err
    peer = out / "locomo" / "conv-26" / "omb-small.json"
    full = _write(tmp_path, "full.json", _eval_results([[True]] * 9, 9))
    code, _, err, whole = _import(tmp_path / "w", full, capsys, monkeypatch, "--name", "whole")
    assert code == 0, err
    code, text, err = run_cli(
        ["compare", str(peer), str(whole / "locomo" / "conv-26" / "whole.json"), "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0, err
    marked = [line for line in text.splitlines() if "PARTIAL run" in line]
    assert len(marked) == 2 and all("9 of 1,540: conv-30, conv-41" in line for line in marked)
    assert any("accuracy" in line for line in marked)
    lines = trust_lines([side_under(peer)])
    assert any("PARTIAL run: 9 of 1,540" in line for line in lines)


ORACLE = json.loads((REPO_ROOT / "data" / "longmemeval" / "longmemeval_oracle.json").read_text(encoding="utf-8"))


def _jsonl(tmp_path: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_longmemeval_judged_log_lands_on_the_longmemeval_questions(tmp_path, capsys, monkeypatch) -> None:
    second, first = ORACLE[7], ORACLE[0]
    log = [
        {
            "question_id": second["question_id"],
            "hypothesis": "a guess",
            "autoeval_label": {"model": "judge-x", "label": True},
        },
        {
            "question_id": first["question_id"],
            "hypothesis": "another",
            "autoeval_label": {"model": "judge-x", "label": False},
        },
    ]
    code, text, err, out = _import(tmp_path, _jsonl(tmp_path, "log.jsonl", log), capsys, monkeypatch)
    assert code == 0, err
    result = read_result(out / "longmemeval" / "imported.json")
    assert result.slice == "longmemeval:oracle" and result.models == {"judge": "judge-x"}
    assert [(a.question_id, a.category, a.label) for a in result.answers] == [
        (second["question_id"], second["question_type"], "CORRECT"),
        (first["question_id"], first["question_type"], "WRONG"),
    ]
    assert f"questions: 2 of {len(ORACLE)} (PARTIAL)" in text and result.answers[1].gold == str(first["answer"])
    written = str(out / "longmemeval" / "imported.json")
    code, text, err = run_cli(["compare", written, written, "--draws", "50"], capsys, monkeypatch)
    assert code == 0, err
    assert f"PARTIAL run: 2 of {len(ORACLE)}" in text


def test_longmemeval_hypotheses_without_judgments_or_unknown_ids_are_one_line(tmp_path, capsys, monkeypatch) -> None:
    ids = [e["question_id"] for e in ORACLE[:2]]
    hypotheses = [{"question_id": q, "hypothesis": "March"} for q in ids]
    code, _, err, out = _import(tmp_path, _jsonl(tmp_path, "hyp.jsonl", hypotheses), capsys, monkeypatch)
    assert code == 2 and "evaluate_qa.py" in err and len(err.strip().splitlines()) == 1 and not out.exists()
    stray = [
        {"question_id": q, "hypothesis": "x", "autoeval_label": {"model": "j", "label": True}}
        for q in (ids[0], "q-zzz")
    ]
    code, _, err, _ = _import(tmp_path / "b", _jsonl(tmp_path, "stray.jsonl", stray), capsys, monkeypatch)
    assert code == 2 and "line 2" in err and "q-zzz" in err
