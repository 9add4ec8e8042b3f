"""A run of ours that holds fewer questions than its slice is marked partial wherever compare and view print its
accuracy, like an imported partial run; a whole run seen under the audited-exclude gold or one category dropped those
questions on purpose and is not."""

from __future__ import annotations

from pathlib import Path

from bench.analysis.categories import with_answers
from bench.analysis.coverage import is_partial, slice_coverage
from bench.results.schema import read_result, write_result
from bench.view.trust import side_under, trust_lines
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

WHOLE = REPO_ROOT / "results" / "v3" / "heldout" / "conv-44" / "mem0__k3.json"
OTHER = REPO_ROOT / "results" / "v3" / "heldout" / "conv-44" / "mem0__k20.json"


def _cut_short(tmp_path: Path, source: Path, dropped: int) -> Path:
    """Our committed run with its last `dropped` answers gone, as a run stopped before the end leaves it."""
    result = read_result(source)
    path = tmp_path / "cut" / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(path, with_answers(result, result.answers[:-dropped]))
    return path


def _accuracy_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith("accuracy ")]


def test_a_run_of_ours_cut_short_is_marked_partial_in_compare_and_view(tmp_path, capsys, monkeypatch) -> None:
    # compare pairs our runs on the same questions, so both sides are cut the same way
    cut, other = _cut_short(tmp_path, WHOLE, 3), _cut_short(tmp_path, OTHER, 3)
    whole = len(read_result(WHOLE).answers)
    code, text, err = run_cli(["compare", str(cut), str(other), "--draws", "50"], capsys, monkeypatch)
    assert code == 0, err
    assert [line.endswith(f"PARTIAL run: {whole - 3:,} of {whole:,}") for line in _accuracy_lines(text)] == [True] * 2
    code, text, err = run_cli(["compare", str(WHOLE), str(OTHER), "--draws", "50"], capsys, monkeypatch)
    assert code == 0 and len(_accuracy_lines(text)) == 2 and "PARTIAL" not in text, err
    [line] = [line for line in trust_lines([side_under(cut)]) if "accuracy" in line or "PARTIAL" in line]
    assert f"PARTIAL run: {whole - 3:,} of {whole:,}" in line
    assert not any("PARTIAL" in line for line in trust_lines([side_under(WHOLE)]))


def test_a_whole_run_seen_under_another_gold_or_one_category_is_not_partial(tmp_path, capsys, monkeypatch) -> None:
    for view in (["--gold", "audited-exclude"], ["--categories", "single-hop"]):
        code, text, err = run_cli(["compare", str(WHOLE), str(OTHER), "--draws", "50", *view], capsys, monkeypatch)
        assert code == 0, err
        assert "PARTIAL" not in text, view
    side = side_under(WHOLE, "audited-exclude", frozenset({"single-hop"}))
    assert not is_partial([side.result])


def test_a_slice_with_no_answer_at_all_is_named_missing() -> None:
    result = read_result(WHOLE)
    coverage = slice_coverage([with_answers(result, [])])
    assert coverage is not None and coverage["missing"] == ["heldout:conv-44"] and coverage["questions"] == 0
