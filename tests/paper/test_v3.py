"""The v3 paper: `paper build --paper v3` writes paper/v3 from results/v3, and `paper check --paper v3` reproduces all
41 numbers the paper prints at their printed precision, failing (naming the number) when a result drifts."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli.program import app
from bench.errors import ResultError
from bench.report.build import compute_paper
from bench.report.catalog import PAPERS
from bench.report.check import check_paper, compare_article, read_article_numbers
from bench.report.formats import show
from bench.report.paper import Paper
from bench.results.schema import read_result, write_result
from bench.vocab import RESULTS_DIR

ARTICLE = RESULTS_DIR / "v3" / "article_numbers_v3.tsv"
PAPER_V3_DIR = PAPERS.get("v3").out_dir


@pytest.fixture(scope="module")
def paper_v3() -> Paper:
    return compute_paper("v3", RESULTS_DIR)


@pytest.fixture()
def v3_copy(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(RESULTS_DIR / "v3", root / "v3")
    return root


def test_paper_check_v3_passes_on_the_committed_files() -> None:
    result = CliRunner().invoke(app, ["paper", "check", "--paper", "v3"])
    assert result.exit_code == 0, result.output
    assert "all 41 printed numbers" in result.output


def test_all_41_printed_numbers_reproduce_at_their_printed_precision(paper_v3: Paper) -> None:
    article = read_article_numbers(ARTICLE)
    assert len(article) == 41
    assert compare_article(paper_v3, article) == []
    assert paper_v3.numbers["t1.judge.bound"].display == "-3.0"
    assert paper_v3.numbers["t2.S1.holm_p"].display == "1.9e-27"


def test_token_matching_picks_t0rs_k_for_each_comparator(paper_v3: Paper) -> None:
    matched = {
        comparator: paper_v3.numbers[f"v3.token_match.{comparator}-k3.t0r_k"].value
        for comparator in ("turns-cosine", "jev-mem", "mem0", "turns-llm-rerank", "engram-v2")
    }
    assert matched == {"turns-cosine": 3, "jev-mem": 4, "mem0": 3, "turns-llm-rerank": 3, "engram-v2": 6}


def test_longmemeval_rows_are_labelled_aggregate_inputs_everywhere(paper_v3: Paper) -> None:
    for test in ("S5", "S6", "S7"):
        number = paper_v3.numbers[f"t2.{test}.a"]
        assert number.sources == ("results/v3/supplementary/longmemeval_tests.json",)
        assert "aggregate input" in (number.note or "")
    table2 = (PAPER_V3_DIR / "tables" / "v3_table2.md").read_text()
    assert table2.count("LongMemEval (aggregate input)") == 3
    assert "aggregate input" in paper_v3.numbers["t1.write_cost_ratio"].note


def test_every_number_cites_result_files_with_their_hashes() -> None:
    committed = json.loads((PAPER_V3_DIR / "numbers.json").read_text())
    for number_id, entry in committed.items():
        assert entry["source"] and len(entry["source"]) == len(entry["sha256"]), number_id
        assert all(path.startswith("results/v3/") for path in entry["source"]), number_id
    assert len(committed["t2.S1.a"]["source"]) == 5  # one T0R file per held-out conversation


def test_a_flipped_label_makes_the_check_fail_naming_the_numbers_it_moved(v3_copy: Path) -> None:
    path = v3_copy / "v3" / "heldout" / "conv-44" / "turns-cosine__k3.json"
    result = read_result(path)
    flipped = [replace(a, label="CORRECT") if a.label == "WRONG" else a for a in result.answers]
    changed = replace(result, answers=flipped[:20] + result.answers[20:])
    write_result(path, type(result).build(**{**_fields(changed), "answers": changed.answers}))
    problems = {p.id: p.message for p in check_paper("v3", v3_copy).problems}
    assert "t2.S1.b" in problems and "t3.tight.L0" in problems
    assert problems["t2.S1.b"].startswith("article prints 59.9") or "59.9" in problems["t2.S1.b"]
    assert "t2.S3.a" not in {k for k, v in problems.items() if v.startswith("article")}


def _fields(result):  # type: ignore[no-untyped-def]
    names = [f for f in result.__dataclass_fields__ if f not in ("answers", "accuracy", "accuracy_by_category")]
    return {n: getattr(result, n) for n in names}


def test_inconsistent_longmemeval_aggregates_are_refused(v3_copy: Path) -> None:
    path = v3_copy / "v3" / "supplementary" / "longmemeval_tests.json"
    raw = json.loads(path.read_text())
    raw["S7"]["only_b"] = 28  # no longer matches acc_a − acc_b
    path.write_text(json.dumps(raw))
    with pytest.raises(ResultError, match=r"longmemeval_tests.json: field S7: expected acc_a − acc_b"):
        compute_paper("v3", v3_copy)


def test_a_number_the_paper_prints_that_results_do_not_produce_is_a_problem(v3_copy: Path) -> None:
    article = v3_copy / "v3" / "article_numbers_v3.tsv"
    article.write_text(article.read_text() + "t2.S8.a\t50.0\tan eighth test\n")
    problems = {p.id for p in check_paper("v3", v3_copy).problems}
    assert problems == {"t2.S8.a"}


def test_build_writes_numbers_tables_and_the_figure_for_both_budgets(tmp_path: Path) -> None:
    out = tmp_path / "v3"
    result = CliRunner().invoke(app, ["paper", "build", "--paper", "v3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "numbers.json").read_bytes() == (PAPER_V3_DIR / "numbers.json").read_bytes()
    for name in ("v3_table1", "v3_table2", "v3_table3"):
        for kind in ("md", "tex"):
            assert (out / "tables" / f"{name}.{kind}").read_text() == (
                PAPER_V3_DIR / "tables" / f"{name}.{kind}"
            ).read_text()
    svg = (out / "figures" / "v3_acc_vs_tokens.svg").read_text()
    assert "tight budget" in svg and "generous budget" in svg and "full context" in svg


def test_an_unknown_paper_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(app, ["paper", "check", "--paper", "v2"])
    assert result.exit_code != 0


@pytest.mark.parametrize(
    "value, kind, printed",
    [
        (0.7724935732647815, "pct_bare", "77.2"),
        (250.93573264781492, "round_int", "251"),
        (3060.947211237217, "round_int", "3,061"),
        (1.9245531591250677e-27, "p_short", "1.9e-27"),
        (0.00012799037402104994, "p_short", "1.3e-4"),
        (1.0, "p_short", "1.00"),
        (0.0128, "p_short", "0.01"),
    ],
)
def test_v3_display_kinds(value: float, kind: str, printed: str) -> None:
    assert show(value, kind) == printed
