"""`make paper-check`: the committed numbers and the article's printed numbers recompute from results/, and a
changed label in one result file makes the check fail naming the number it moved."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli.program import app
from bench.errors import ResultError
from bench.report.check import (
    check,
    compare_article,
    compare_committed,
    compare_rendered,
    read_article_numbers,
)
from bench.report.numbers import load_numbers_json
from bench.report.paper import Paper
from bench.results.schema import Result, read_result, write_result
from bench.vocab import PAPER_DIR

COMMITTED = PAPER_DIR / "numbers.json"
ENGRAM_K3_CONV30 = Path("v1/heldout/conv-30/engram__k3.json")


def test_committed_numbers_json_recomputes_exactly(paper_v1: Paper) -> None:
    problems = compare_committed(paper_v1, load_numbers_json(COMMITTED))
    assert problems == [], "\n".join(map(str, problems[:5]))


def test_every_article_number_is_reproduced_with_its_printed_display(paper_v1: Paper) -> None:
    article = read_article_numbers(paper_v1.results.article_numbers_path())
    assert len(article) >= 90
    assert compare_article(paper_v1, article) == []
    # the spot the reader checks first
    assert paper_v1.numbers["heldout.mem0-token-matched.delta"].display == article["heldout.mem0-token-matched.delta"]


def test_committed_tables_and_article_are_the_current_render(paper_v1: Paper, tmp_path: Path) -> None:
    assert compare_rendered(paper_v1, PAPER_DIR) == []
    stale = tmp_path / "paper"
    (stale / "tables").mkdir(parents=True)
    (stale / "tables" / "heldout.md").write_text("old table\n")
    problems = {p.id: p.message for p in compare_rendered(paper_v1, stale)}
    assert problems["file:tables/heldout.md"].startswith("out of date")
    assert problems["file:article.md"].startswith("missing")


def test_bootstrap_ids_get_one_point_of_tolerance_and_nothing_else_does(paper_v1: Paper) -> None:
    ours = paper_v1.numbers["heldout.mem0-token-matched.bootstrap_low"].value * 100
    near = {"heldout.mem0-token-matched.bootstrap_low": f"{ours + 0.9:+.1f}"}
    far = {"heldout.mem0-token-matched.bootstrap_low": f"{ours + 1.2:+.1f}"}
    assert compare_article(paper_v1, near) == []
    assert [p.id for p in compare_article(paper_v1, far)] == ["heldout.mem0-token-matched.bootstrap_low"]
    off_by_a_tenth = {"heldout.engram-k3.accuracy": "73.4%"}
    assert [p.id for p in compare_article(paper_v1, off_by_a_tenth)] == ["heldout.engram-k3.accuracy"]


def _flip_first_correct_scored_label(path: Path) -> None:
    """Rewrite the file through the schema so its summaries stay consistent: a tamper the schema cannot see."""
    result = read_result(path)
    index = next(i for i, a in enumerate(result.answers) if a.scored and a.correct)
    answers = list(result.answers)
    answers[index] = replace(answers[index], label="WRONG")
    fields = {
        f: getattr(result, f)
        for f in Result.__dataclass_fields__
        if f not in ("answers", "accuracy", "accuracy_by_category", "schema_version")
    }
    write_result(path, Result.build(answers=answers, **fields))


def test_one_flipped_label_fails_the_check_naming_the_number(results_copy: Path) -> None:
    _flip_first_correct_scored_label(results_copy / ENGRAM_K3_CONV30)
    report = check(results_copy, "v1", COMMITTED)
    failing = {p.id for p in report.problems}
    assert "heldout.engram-k3.accuracy" in failing
    assert "heldout.mem0-k3.delta" in failing
    message = next(str(p) for p in report.problems if p.id == "heldout.engram-k3.accuracy")
    assert "article prints 73.3%, results/ give 73.1%" in message or "committed 73.3%" in message

    outcome = CliRunner().invoke(app, ["paper", "check", "--results", str(results_copy)])
    assert outcome.exit_code == 1
    assert "paper check: heldout.engram-k3.accuracy:" in outcome.output


def test_a_label_flipped_behind_a_stale_summary_is_refused_naming_the_file(results_copy: Path) -> None:
    path = results_copy / ENGRAM_K3_CONV30
    data = json.loads(path.read_text())
    data["answers"][0]["label"] = "WRONG" if data["answers"][0]["label"] == "CORRECT" else "CORRECT"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"engram__k3\.json: field accuracy: expected \d+/81 as counted"):
        check(results_copy, "v1", COMMITTED)


def _moved(committed: dict, relative: float) -> dict:
    """The committed numbers with every float value moved by a relative amount, displays untouched."""

    def move(value):
        if isinstance(value, float):
            return value * (1 + relative)
        if isinstance(value, list):
            return [move(v) for v in value]
        return value

    return {key: {**entry, "value": move(entry["value"])} for key, entry in committed.items()}


def test_values_another_blas_build_moves_at_1e_11_still_check(paper_v1: Paper) -> None:
    committed = load_numbers_json(COMMITTED)
    assert compare_committed(paper_v1, _moved(committed, 1e-11)) == []
    moved = compare_committed(paper_v1, _moved(committed, 1e-6))
    assert moved and "values may differ by a relative 1e-09" in str(moved[0])


def test_a_printed_form_must_match_exactly(paper_v1: Paper) -> None:
    committed = load_numbers_json(COMMITTED)
    first = sorted(committed)[0]
    committed[first] = {**committed[first], "display": committed[first]["display"] + "0"}
    assert [p.id for p in compare_committed(paper_v1, committed)] == [first]


def test_rebuilding_numbers_json_on_another_machine_leaves_the_file_unchanged(paper_v1: Paper, tmp_path: Path) -> None:
    from bench.disk.atomic import write_json
    from bench.report.build import write

    # As if the committed file had been built where BLAS rounds a little differently.
    elsewhere = _moved(load_numbers_json(COMMITTED), 3e-12)
    path = write_json(tmp_path / "numbers.json", elsewhere)
    before = path.read_bytes()
    write(paper_v1, tmp_path, only="numbers")
    assert path.read_bytes() == before
    # A number that really changed is rewritten.
    some = sorted(k for k, v in elsewhere.items() if isinstance(v["value"], float))[0]
    write_json(path, {**elsewhere, some: {**elsewhere[some], "value": elsewhere[some]["value"] + 0.5}})
    write(paper_v1, tmp_path, only="numbers")
    assert json.loads(path.read_text())[some]["value"] == paper_v1.numbers.to_json()[some]["value"]
