"""A reader checks that a comparison is like for like: which category numbering it uses, scores with and without
category 5, `--categories` filtering, each side's k and retrieved tokens, and `--match-tokens` over a k-sweep."""

from __future__ import annotations

import json
import statistics

from tests.bench.analysis.test_compare import run_cli, write_set
from tests.conftest import REPO_ROOT

CONV30 = REPO_ROOT / "results" / "offline" / "heldout" / "conv-30"


def test_categories_filter_keeps_only_the_named_codes_and_says_so(capsys, monkeypatch) -> None:
    a, b = str(CONV30 / "engram__k3.json"), str(CONV30 / "mem0__k3.json")
    code, out, _ = run_cli(["compare", a, b, "--categories", "2,4", "--json", "--draws", "50"], capsys, monkeypatch)
    assert code == 0
    (report,) = json.loads(out)
    assert {row["group"] for row in report["by_category"]} == {"temporal", "single-hop"}
    assert report["categories"] == ["single-hop", "temporal"]
    answers = json.loads((CONV30 / "engram__k3.json").read_text())["answers"]
    wanted = sum(1 for x in answers if x["scored"] and x["category"] in ("temporal", "single-hop"))
    assert report["overall"]["n"] == wanted


def test_an_unknown_category_code_is_one_line_and_exit_2(capsys, monkeypatch) -> None:
    a = str(CONV30 / "engram__k3.json")
    code, out, err = run_cli(["compare", a, a, "--categories", "1,9"], capsys, monkeypatch)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "'9'" in err


def test_the_report_names_the_numbering_and_shows_accuracy_with_and_without_category_5(
    tmp_path, capsys, monkeypatch
) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": False}, unscored={"c1:7": True})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": False}, unscored={"c1:7": False})
    code, out, _ = run_cli(["compare", str(a), str(b), "--draws", "50"], capsys, monkeypatch)
    assert code == 0
    assert "LoCoMo's numbering" in out and "1 multi-hop" in out and "5 adversarial" in out
    assert "A by category 5: without 5: 1/2 = 50.0%; with 5: 2/3 = 66.7%" in out


def test_unequal_budgets_are_warned_and_match_tokens_picks_the_closest_k(capsys, monkeypatch) -> None:
    reference = CONV30 / "engram__k3.json"
    sweep = sorted(CONV30.glob("mem0__k*.json"))
    code, out, _ = run_cli(
        ["compare", str(reference), str(CONV30 / "mem0__k20.json"), "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0 and "!! BUDGETS DIFFER" in out and "budget B: k=20" in out

    def mean_tokens(path) -> float:
        return statistics.fmean(x["retrieved_tokens"] for x in json.loads(path.read_text())["answers"])

    target = mean_tokens(reference)
    expected = min(sweep, key=lambda p: (abs(mean_tokens(p) - target), json.loads(p.read_text())["k"]))
    k = json.loads(expected.read_text())["k"]
    code, out, _ = run_cli(
        ["compare", str(reference), str(CONV30 / "mem0__k*.json"), "--match-tokens", "--draws", "50"],
        capsys,
        monkeypatch,
    )
    assert code == 0
    assert f"token matching: B at k={k} " in out and f"B: mem0 k={k} " in out


def test_rescore_with_categories_summarises_only_those_and_writes_nothing(tmp_path, capsys, monkeypatch) -> None:
    copy = tmp_path / "engram__k3.json"
    copy.write_bytes((CONV30 / "engram__k3.json").read_bytes())
    before = copy.read_bytes()
    code, out, _ = run_cli(["rescore", str(copy), "--categories", "multi-hop,3"], capsys, monkeypatch)
    assert code == 0 and copy.read_bytes() == before
    answers = json.loads(before)["answers"]
    n = sum(1 for x in answers if x["scored"] and x["category"] in ("multi-hop", "open-domain"))
    assert "categories 1 multi-hop, 3 open-domain" in out and f"official         n={n} " in out


def test_a_graded_comparison_states_both_budgets_too(capsys, monkeypatch) -> None:
    a, b = str(CONV30 / "engram__k3.json"), str(CONV30 / "mem0__k20.json")
    code, out, _ = run_cli(["compare", a, b, "--metric", "f1", "--draws", "50"], capsys, monkeypatch)
    assert code == 0
    assert "budget A: k=3," in out and "budget B: k=20," in out and out.count("BUDGETS DIFFER") == 1
