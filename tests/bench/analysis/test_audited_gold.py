"""A reader who distrusts LoCoMo's gold looks at the same results under the audit's errata: `--gold official |
audited-exclude | audited` on compare and rescore, and the official gold's ceiling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.analysis.gold import under_gold
from bench.data.audit import load_errata, official_ceilings
from bench.results.schema import read_result
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

LOCOMO_RESULTS = REPO_ROOT / "results" / "offline" / "locomo"
ERRATA = REPO_ROOT / "data" / "locomo-audit" / "errors.json"


def _raw_errata() -> list[dict]:
    return json.loads(ERRATA.read_text(encoding="utf-8"))


def _our_id(audit_id: str) -> str:
    """The mapping, written out independently of the code: conversation index -> sample id in file order."""
    order = [c["sample_id"] for c in json.loads((REPO_ROOT / "data/locomo/locomo10.json").read_text())]
    _, index, position = audit_id.split("_")
    return f"{order[int(index)]}:{int(position[2:])}"


def test_the_official_ceiling_is_the_audits_headline_and_each_category_is_below_one() -> None:
    ceilings = {c.group: c for c in official_ceilings()}
    overall = ceilings["1-4"]
    assert overall.n == sum(ceilings[g].n for g in "1234")
    assert f"{100 * overall.value:.2f}" == "93.57"  # the audit's published headline, recomputed from its errata
    assert all(0.85 < ceilings[g].value < 1 for g in "1234")


@pytest.mark.slow
def test_audited_exclude_drops_exactly_the_score_corrupting_questions_of_a_conversation() -> None:
    result = read_result(LOCOMO_RESULTS / "conv-48" / "raw-turn-rag__k20.json")
    wrong_here = {
        _our_id(e["question_id"])
        for e in _raw_errata()
        if e["error_type"] != "WRONG_CITATION" and _our_id(e["question_id"]).startswith("conv-48:")
    }
    seen = under_gold(result, "audited-exclude")
    kept = {a.question_id for a in seen.answers}
    assert kept == {a.question_id for a in result.answers} - wrong_here and wrong_here
    assert seen.accuracy.n == result.accuracy.n - len(wrong_here)
    assert seen.extras["gold"]["dropped"] == len(wrong_here)


def test_audited_gold_swaps_the_answer_and_the_citation_and_leaves_labels_alone() -> None:
    result = read_result(LOCOMO_RESULTS / "conv-26" / "engram__k3.json")
    errata = load_errata()
    seen = {a.question_id: a for a in under_gold(result, "audited", errata).answers}
    before = {a.question_id: a for a in result.answers}
    corrected = next(e for e in errata.entries.values() if e.corrupts_score and e.question_id in before)
    cited = next(e for e in errata.entries.values() if not e.corrupts_score and e.question_id in before)
    assert seen[corrected.question_id].gold == corrected.correct_answer != before[corrected.question_id].gold
    assert seen[corrected.question_id].label == before[corrected.question_id].label
    assert seen[cited.question_id].evidence == list(cited.correct_evidence)
    assert seen[cited.question_id].gold == before[cited.question_id].gold
    untouched = next(q for q in before if errata.get(q) is None)
    assert seen[untouched] == before[untouched]


@pytest.mark.slow
def test_compare_states_its_gold_and_prints_official_and_audited_side_by_side(capsys, monkeypatch) -> None:
    a = str(LOCOMO_RESULTS / "conv-30" / "full-context.json")
    b = str(LOCOMO_RESULTS / "conv-30" / "raw-turn-rag__k20.json")
    code, out, _ = run_cli(
        ["compare", a, b, "--gold", "audited,official,audited-exclude", "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0
    assert "gold: audited (" in out and "judge labels are against the official gold" in out
    table = out[out.index("under each gold") :].splitlines()
    rows = {line.split()[0]: line.split() for line in table[2:5]}
    n_official, n_excluded = int(rows["official"][2]), int(rows["audited-exclude"][2])
    dropped = sum(
        1
        for e in _raw_errata()
        if e["error_type"] != "WRONG_CITATION" and _our_id(e["question_id"]).startswith("conv-30:")
    )
    assert n_official - n_excluded == dropped > 0


def test_rescore_under_the_audited_gold_writes_nothing_in_place(tmp_path, capsys, monkeypatch) -> None:
    source = LOCOMO_RESULTS / "conv-26" / "engram__k3.json"
    copy = tmp_path / "conv-26" / "engram__k3.json"
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    code, out, _ = run_cli(
        ["rescore", str(copy), "--gold", "audited", "--out", str(tmp_path / "views")], capsys, monkeypatch
    )
    assert code == 0 and copy.read_bytes() == source.read_bytes()
    assert "official " in out and "audited " in out
    view = read_result(tmp_path / "views" / "audited" / "conv-26" / "engram__k3.json")
    assert view.extras["gold"]["name"] == "audited" and view.extras["gold"]["labels"] == "official"


def _errata_file(tmp_path: Path, edit) -> Path:
    entries = _raw_errata()[:5]
    edit(entries)
    path = tmp_path / "errata.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda e: e[0].update(question_id="locomo_0_qa9999"), "expected a LoCoMo question"),
        (lambda e: e.append(dict(e[1])), "expected each question once"),
        (lambda e: e[2].update(category=5 if e[2]["category"] != 5 else 1), "expected LoCoMo's category"),
        (lambda e: e[3].update(question_id="conv-26:3"), "expected locomo_<i>_qa<j>"),
    ],
    ids=["unknown id", "duplicated id", "category disagrees", "malformed id"],
)
def test_a_bad_errata_file_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, edit, words) -> None:
    errata = _errata_file(tmp_path, edit)
    a = str(LOCOMO_RESULTS / "conv-30" / "full-context.json")
    code, out, err = run_cli(["compare", a, a, "--gold", "audited", "--errata", str(errata)], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err and str(errata) in err


def test_the_viewer_marks_audited_questions_and_states_its_gold(tmp_path, capsys, monkeypatch) -> None:
    result = REPO_ROOT / "results" / "offline" / "heldout" / "conv-30" / "engram__k3.json"
    page = tmp_path / "report.html"
    code, _, _ = run_cli(
        ["view", str(result), "--gold", "audited-exclude", "--categories", "1,2,3,4", "--out", str(page)],
        capsys,
        monkeypatch,
    )
    assert code == 0
    html = page.read_text(encoding="utf-8")
    assert "gold: audited-exclude" in html and "LoCoMo&#39;s numbering" in html
    citation = next(
        e
        for e in _raw_errata()
        if e["error_type"] == "WRONG_CITATION" and _our_id(e["question_id"]).startswith("conv-30:")
    )
    assert f"audited, WRONG_CITATION: {citation['correct_answer']}" in html
    dropped = next(
        e
        for e in _raw_errata()
        if e["error_type"] != "WRONG_CITATION" and _our_id(e["question_id"]).startswith("conv-30:")
    )
    assert f'data-key="{_our_id(dropped["question_id"])}"' not in html


@pytest.mark.slow
def test_rejudge_against_the_audited_gold_gives_labels_that_follow_it(tmp_path, capsys, monkeypatch) -> None:
    original = LOCOMO_RESULTS / "conv-47" / "raw-turn-rag__k20.json"
    code, out, err = run_cli(
        ["rejudge", str(original), "--judge", "lexical", "--gold", "audited", "--out", str(tmp_path / "rj")],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    assert "against the audited gold" in out
    [target] = (tmp_path / "rj" / "gold-audited").rglob("raw-turn-rag__k20.json")
    again = read_result(target)
    assert again.extras["labels_gold"] == "audited" and again.extras["gold"]["labels"] == "audited"
    fixed = {
        _our_id(e["question_id"]): e["correct_answer"]
        for e in _raw_errata()
        if e["error_type"] != "WRONG_CITATION" and _our_id(e["question_id"]).startswith("conv-47:")
    }
    assert fixed and all(a.gold == fixed[a.question_id] for a in again.answers if a.question_id in fixed)
    code, out, _ = run_cli(
        ["compare", str(target), str(target), "--gold", "audited", "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0 and "judge labels are against" not in out
    code, out, _ = run_cli(
        ["compare", str(target), str(original), "--gold", "audited", "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0 and "judge labels are against the official gold" in out
