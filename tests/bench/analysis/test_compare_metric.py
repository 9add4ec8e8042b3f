"""A researcher compares two systems on the metric the field reports: `compare --metric f1|mem0-f1|bleu1|
evidence-recall` (the judge's labels stay the default, `--metric j`). Values are worked out by hand below."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.analysis.scoring import llm_free_scores
from bench.analysis.scoring.score import metrics_block
from bench.results.schema import Answer, Provenance, Result, write_result
from tests.cli_main import exit_code_of

JUDGE_NAME = "judge:lexical-judge-standin-v1:rules-v2"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    code = exit_code_of(args, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scored_file(
    path: Path, arm: str, rows: list[tuple[str, str, str, str, float | None]], with_metrics: bool = True
) -> Path:
    """rows: (question id, category, gold, answer, evidence recall); scores computed as the runner computes them."""
    answers = []
    for qid, category, gold, text, recall in rows:
        f1, scores = llm_free_scores(text, gold, category)
        answers.append(
            Answer(
                question_id=qid,
                conversation=qid.split(":")[0],
                category=category,
                scored=category != "adversarial",
                question="q?",
                gold=gold,
                answer=text,
                label="CORRECT" if f1 == 1.0 else "WRONG",
                f1=f1,
                scores=scores,
                evidence_recall=recall,
            )
        )
    result = Result.build(
        answers=answers,
        arm=arm,
        system=arm,
        stack="offline",
        slice="locomo",
        k=3,
        arm_hash=None,
        settings={},
        models={"judge": "offline/lexical-judge-standin-v1"},
        standins=["judge"],
        provenance=Provenance(origin="test"),
        metrics=metrics_block(JUDGE_NAME, "evidence-recall@3") if with_metrics else {},
    )
    return write_result(path, result)


GOLD = [
    ("c1:0", "single-hop", "Paris"),
    ("c1:1", "temporal", "7 May 2023"),
    ("c2:0", "multi-hop", "hiking, painting"),
    ("c2:1", "adversarial", "no information available"),
]


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    a_answers = ["Paris", "May 2023", "painting", "That is not mentioned anywhere."]
    b_answers = ["London", "on 7 May, 2023", "hiking, painting", "She went to Rome."]
    a = scored_file(
        tmp_path / "a.json", "alpha", [(q, c, g, t, r) for (q, c, g), t, r in zip(GOLD, a_answers, [1, 0, 0.5, None])]
    )
    b = scored_file(
        tmp_path / "b.json", "beta", [(q, c, g, t, r) for (q, c, g), t, r in zip(GOLD, b_answers, [1, 1, 1, None])]
    )
    return a, b


def test_f1_compares_locomos_per_question_scores(sides, capsys, monkeypatch) -> None:
    a, b = sides
    code, out, _ = run_cli(["compare", str(a), str(b), "--metric", "f1", "--json"], capsys, monkeypatch)
    assert code == 0
    [report] = json.loads(out)
    overall = report["overall"]
    # A: Paris 1; "may 2023" vs "7 may 2023": P 1, R 2/3 -> 0.8; category 1 gold parts hiking 0, painting 1 -> 0.5
    # B: London 0; "on 7 may 2023" vs "7 may 2023": P 3/4, R 1 -> 6/7; both gold parts matched -> 1
    assert overall["n"] == 3
    assert overall["mean_a"] == pytest.approx((1 + 0.8 + 0.5) / 3)
    assert overall["mean_b"] == pytest.approx((0 + 6 / 7 + 1) / 3)
    d = [1.0, 0.8 - 6 / 7, -0.5]
    mean = sum(d) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 2)
    assert overall["difference"]["estimate"] == pytest.approx(mean)
    assert overall["difference"]["high"] == pytest.approx(mean + 1.96 * sd / math.sqrt(3))
    assert overall["cluster"]["clusters"] == 2  # two conversations
    rows = {r["group"]: r for r in report["by_category"]}
    assert rows["multi-hop"]["mean_a"] == pytest.approx(0.5) and rows["multi-hop"]["mean_b"] == pytest.approx(1.0)
    assert "adversarial" not in rows  # unscored unless --all


def test_f1_with_all_scores_adversarial_questions_by_locomos_rule(sides, capsys, monkeypatch) -> None:
    a, b = sides
    code, out, _ = run_cli(["compare", str(a), str(b), "--metric", "f1", "--all", "--json"], capsys, monkeypatch)
    assert code == 0
    [report] = json.loads(out)
    rows = {r["group"]: r for r in report["by_category"]}
    # "not mentioned" in A's answer is LoCoMo's abstention; B's answer has neither phrase
    assert (rows["adversarial"]["mean_a"], rows["adversarial"]["mean_b"]) == (1.0, 0.0)
    assert report["overall"]["n"] == 4


def test_bleu1_and_mem0_f1_read_their_own_scores(sides, capsys, monkeypatch) -> None:
    a, b = sides
    code, out, _ = run_cli(["compare", str(a), str(b), "--metric", "mem0-f1", "--json"], capsys, monkeypatch)
    [report] = json.loads(out)
    rows = {r["group"]: r for r in report["by_category"]}
    # mem0's F1 uses word sets with no stemming: "on 7 may 2023" vs "7 may 2023" -> P 3/4, R 1 -> 6/7; and its
    # multi-hop answer is not split: {painting} vs {hiking, painting} -> P 1, R 1/2 -> 2/3
    assert rows["temporal"]["mean_b"] == pytest.approx(6 / 7)
    assert rows["multi-hop"]["mean_a"] == pytest.approx(2 / 3)
    code, out, _ = run_cli(["compare", str(a), str(b), "--metric", "bleu1", "--all", "--json"], capsys, monkeypatch)
    assert code == 0
    [report] = json.loads(out)
    rows = {r["group"]: r for r in report["by_category"]}
    # BLEU-1 of "paris" against "paris" is 1; "london" shares no word, and NLTK gives 0 when no unigram matches.
    # "on 7 may , 2023" (word_tokenize keeps the comma) against "7 may 2023": 3 of 5 words match, the answer is
    # longer than the gold so no brevity penalty: 0.6. Adversarial questions have no BLEU-1, even with --all
    # (mem0's evaluation skips category 5).
    assert rows["single-hop"]["mean_a"] == pytest.approx(1.0)
    assert rows["single-hop"]["mean_b"] == 0.0
    assert rows["temporal"]["mean_b"] == pytest.approx(0.6)
    assert "adversarial" not in rows


def test_evidence_recall_compares_the_share_of_evidence_shown(sides, capsys, monkeypatch) -> None:
    a, b = sides
    code, out, _ = run_cli(["compare", str(a), str(b), "--metric", "evidence-recall"], capsys, monkeypatch)
    assert code == 0
    assert "A: alpha k=3 [offline]  mean 0.500" in out and "B: beta k=3 [offline]  mean 1.000" in out
    assert "Δ (A − B) over 3 paired questions: -0.500" in out


def test_a_file_without_the_metric_is_one_line_naming_file_and_field(tmp_path, capsys, monkeypatch) -> None:
    a = scored_file(tmp_path / "a.json", "alpha", [("c1:0", "single-hop", "Paris", "Paris", 1.0)])
    bare = scored_file(tmp_path / "b.json", "beta", [("c1:0", "single-hop", "Paris", "Rome", 1.0)], with_metrics=False)
    code, _, err = run_cli(["compare", str(a), str(bare), "--metric", "bleu1"], capsys, monkeypatch)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{bare}: field metrics: expected the metric mem0-bleu1" in err and "rescore" in err
    code, _, err = run_cli(["compare", str(a), str(a), "--metric", "rouge-l"], capsys, monkeypatch)
    assert code == 2 and "known metrics: bleu1, evidence-recall, f1, j, mem0-f1" in err


def test_the_judge_stays_the_default_metric(sides, capsys, monkeypatch) -> None:
    a, b = sides
    _, default, _ = run_cli(["compare", str(a), str(b)], capsys, monkeypatch)
    _, named, _ = run_cli(["compare", str(a), str(b), "--metric", "j"], capsys, monkeypatch)
    assert default == named and "exact McNemar" in default
