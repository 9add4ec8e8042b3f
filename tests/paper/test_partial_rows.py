"""A paper table never shows a partial run's accuracy as a whole run's: no committed result is partial against its
slice, so the mark is tested on a made-up one: the held-out files of one conversation cut short by a question."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.analysis.categories import with_answers
from bench.report.heldout import register
from bench.report.inputs import ResultSet
from bench.report.numbers import Numbers
from bench.report.tables import Table
from bench.results.schema import read_result, write_result
from tests.conftest import REPO_ROOT

V1 = REPO_ROOT / "results" / "v1"


def _v1_with_conv30_cut_short(tmp_path: Path) -> Path:
    """results/v1 with the last scored answer of every heldout/conv-30 file gone (the same question on every arm,
    as a run stopped on its last question would leave it)."""
    root = tmp_path / "results"
    shutil.copytree(V1, root / "v1")
    for path in sorted((root / "v1" / "heldout" / "conv-30").glob("*.json")):
        result = read_result(path)
        last = max(i for i, a in enumerate(result.answers) if a.scored)
        write_result(path, with_answers(result, [a for i, a in enumerate(result.answers) if i != last]))
    return root


def _tables(results_root: Path) -> dict[str, Table]:
    _, tables = register(ResultSet(results_root, "v1"), Numbers())
    return {table.name: table for table in tables}


def test_a_partial_run_is_marked_in_the_heldout_tables_with_what_it_covers(tmp_path) -> None:
    whole = _tables(REPO_ROOT / "results")
    assert not any("PARTIAL" in cell for t in whole.values() for row in t.rows for cell in row)
    assert not any("PARTIAL" in note for t in whole.values() for note in t.notes)

    cut = _tables(_v1_with_conv30_cut_short(tmp_path))
    for name in ("heldout", "category"):
        table = cut[name]
        labels = [row[0] for row in table.rows]
        assert labels and all(label.endswith(" (PARTIAL)") for label in labels), labels
        notes = [note for note in table.notes if "PARTIAL run" in note]
        assert len(notes) == len(labels) and all("609 of 610" in note for note in notes), notes


def test_a_partial_longmemeval_run_is_marked_in_its_table(tmp_path, capsys, monkeypatch) -> None:
    from tests.bench.analysis.test_compare import run_cli

    root = tmp_path / "results"
    shutil.copytree(REPO_ROOT / "results" / "offline" / "longmemeval", root / "offline" / "longmemeval")
    [first, *_] = sorted((root / "offline" / "longmemeval").rglob("*.json"))
    result = read_result(first)
    write_result(first, with_answers(result, result.answers[1:]))
    out = tmp_path / "out"
    args = ["paper", "table", "longmemeval", "--stack", "offline", "--results", str(root), "--out", str(out)]
    code, _, err = run_cli(args, capsys, monkeypatch)
    assert code == 0, err
    table = (out / "tables" / "longmemeval.md").read_text(encoding="utf-8")
    whole = len(result.answers)
    assert f"| {result.arm} (PARTIAL) |" in table and f"PARTIAL run: {whole - 1} of {whole}" in table
    assert table.count("(PARTIAL)") == 1
