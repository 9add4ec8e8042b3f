"""Tables say which stack they come from: offline stand-in results are never presented as the paper's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench.report.build import compute, write
from bench.results.schema import read_result, write_result


def test_an_offline_results_root_builds_labelled_tables_and_no_article(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "results" / "v1" / "dev"
    for path in sorted(source.glob("*.json")):
        result = read_result(path)
        # stand-ins cost nothing: ratios of $0 must print as undefined, not crash
        offline = replace(
            result,
            stack="offline",
            standins=["extract", "decide"],
            costs=replace(
                result.costs,
                cost_per_1k=0.0,
                decision_cost_per_1k=0.0 if result.costs.decision_cost_per_1k is not None else None,
            ),
            models={**result.models, "decide": "rules-standin-v1", "extract": "rules-extractor-standin-v1"},
        )
        write_result(tmp_path / "results" / "offline" / "dev" / path.name, offline)
    paper = compute(tmp_path / "results", "offline")
    assert [t.name for t in paper.tables] == ["dev"]
    assert "article" not in paper.entries()
    report = write(paper, tmp_path / "out")
    table = (tmp_path / "out" / "tables" / "dev.md").read_text()
    assert "offline stand-ins — not the paper's numbers" in table
    assert "paper v1" not in table
    assert "engram, Jev decision layer (decide: rules-standin-v1)" in table
    assert paper.numbers["dev.decision_cost_ratio"].display == "–"
    assert (tmp_path / "out" / "numbers.json") in report.written
