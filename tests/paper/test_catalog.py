"""Tables and papers are registered parts: a paper is a record naming its tables, v1 and v3 go through the same
build, a table added at run time builds alone, and a wrong name is one line with exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli.program import app
from bench.errors import ConfigError, RegistryError
from bench.registry import registry_info
from bench.report.build import compute_paper, compute_tables
from bench.report.catalog import PAPERS, PAPERS_FILE, TABLES, PaperContext, load_papers
from bench.report.tables import Table, TableBuilder
from bench.vocab import APPENDIX_DIR, REPO_ROOT, RESULTS_DIR
from tests.cli_main import exit_code_of


def test_both_papers_are_records_naming_registered_tables() -> None:
    assert {"v1", "v3"} <= set(PAPERS.names())
    for name in ("v1", "v3"):
        spec = PAPERS.get(name)
        assert spec.tables and all(table in TABLES for table in spec.tables)


def test_v3_built_by_the_shared_build_carries_each_tables_registry_record() -> None:
    paper = compute_paper("v3", RESULTS_DIR)
    assert [t.name for t in paper.tables] == ["v3_table1", "v3_table2", "v3_table3"]
    origins = {registry_info(t).name for t in paper.tables}  # type: ignore[union-attr]
    assert origins == {"v3_table1", "v3_table2", "v3_table3"}
    assert [f.name for f in paper.figures] == ["v3_acc_vs_tokens"]


@pytest.fixture()
def dune_table() -> Iterator[str]:
    name = "dune-count-of-conversations"

    def build(ctx: PaperContext) -> list[Table]:
        files = ctx.results.heldout("engram", 3)
        ctx.numbers.add("dune.files", len(files), "int", [f.source for f in files])
        builder = TableBuilder(ctx.numbers, "dune", "Held-out files of engram k=3", ctx.results.label, ["files"])
        builder.row(builder.num("dune.files"))
        return [builder.table]

    TABLES.add(name, build)
    yield name
    TABLES.remove(name)


def test_a_table_registered_at_run_time_builds_alone_from_committed_results(dune_table: str, tmp_path: Path) -> None:
    paper = compute_tables([dune_table], RESULTS_DIR, "v1")
    assert [t.name for t in paper.tables] == ["dune"] and paper.figures == []
    assert paper.numbers["dune.files"].value == len(paper.results.heldout("engram", 3)) > 0
    result = CliRunner().invoke(app, ["paper", "table", dune_table, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "| files |" in (tmp_path / "tables" / "dune.md").read_text().replace("  ", " ")
    assert (tmp_path / "numbers.json").is_file() and not (tmp_path / "article.md").exists()


def _exit_and_stderr(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    return code, capsys.readouterr().err.strip()


def test_an_unknown_table_or_paper_is_one_line_listing_the_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(RegistryError, match="unknown table 'marsh'; known tables: .*heldout"):
        compute_tables(["marsh"], RESULTS_DIR, "v1")
    code, err = _exit_and_stderr(["paper", "table", "marsh", "--out", str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "unknown table 'marsh'" in err
    assert not any(tmp_path.iterdir())  # refused before anything was written
    code, err = _exit_and_stderr(["paper", "check", "--paper", "v9"], monkeypatch, capsys)
    assert code == 2 and "--paper: expected one of v1, v3, found 'v9'" in err


def test_a_build_with_out_writes_nothing_outside_that_directory(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in APPENDIX_DIR.iterdir()}
    result = CliRunner().invoke(app, ["paper", "build", "--out", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in APPENDIX_DIR.iterdir()} == before
    assert (tmp_path / "copy" / "tables" / "heldout.md").is_file()


def test_the_papers_file_is_data_and_a_mistyped_field_is_one_line(tmp_path: Path) -> None:
    (v1, v3) = load_papers()
    assert (v1.name, v3.name) == ("v1", "v3") and v1.writes_appendix and not v3.writes_appendix
    assert v3.out_dir == REPO_ROOT / "paper" / "v3" and v3.article_numbers == "article_numbers_v3.tsv"
    wrong = tmp_path / "papers.toml"
    wrong.write_text(PAPERS_FILE.read_text().replace('figures = "v3"', "figures = 3"))
    with pytest.raises(ConfigError, match=r"papers.toml: paper 'v3': field figures: expected a str, found 3"):
        load_papers(wrong)
    wrong.write_text(PAPERS_FILE.read_text().replace('figures = "v3"', 'figures = "v3"\ncolour = "teal"'))
    with pytest.raises(ConfigError, match=r"paper 'v3': expected only title, .*found 'colour'"):
        load_papers(wrong)
