"""Appendix E lists one entry per table and figure with a command that works and the files it read."""

from __future__ import annotations

import json
from pathlib import Path

from bench.report.appendix import main as appendix_main
from bench.report.build import write
from bench.report.paper import Paper
from bench.vocab import APPENDIX_DIR


def test_the_committed_index_has_every_table_and_figure(paper_v1: Paper) -> None:
    entries = json.loads((APPENDIX_DIR / "entries.json").read_text())["entries"]
    names = [e["entry"] for e in entries]
    assert names == paper_v1.entries()
    assert {f"table:{t.name}" for t in paper_v1.tables} <= set(names)
    assert {f"figure:{f.name}" for f in paper_v1.figures} <= set(names)
    index = (APPENDIX_DIR / "INDEX.md").read_text()
    for e in entries:
        assert e["command"] == f"engram-bench paper build --only {e['entry']}"
        assert f"`{e['command']}`" in index
        assert e["reads"] and all(r.startswith("results/v1/") for r in e["reads"])


def test_every_entry_writes_exactly_its_outputs(paper_v1: Paper, tmp_path: Path) -> None:
    entries = json.loads((APPENDIX_DIR / "entries.json").read_text())["entries"]
    for e in entries:
        out = tmp_path / e["entry"].replace(":", "_") / "paper"
        report = write(paper_v1, out, only=e["entry"])
        written = sorted(p.relative_to(out.parent).as_posix() for p in report.written)
        assert written == sorted(e["outputs"]), e["entry"]
        assert all(p.stat().st_size > 0 for p in report.written)


def test_the_runner_re_executes_one_entry(tmp_path: Path, capsys) -> None:
    assert appendix_main(["table:heldout", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "tables" / "heldout.md").read_text() == (
        Path(APPENDIX_DIR.parent / "paper" / "tables" / "heldout.md").read_text()
    )
    assert appendix_main(["table:nope", "--out", str(tmp_path)]) == 2
    assert "expected an entry of appendix_e/INDEX.md (numbers, table:dev" in capsys.readouterr().err
