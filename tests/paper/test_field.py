"""`engram-bench field` sets the field's LoCoMo runs side by side: from a fresh clone (the published files shipped
in data/, none from a peer-files folder) it builds for $0 in three forms, and the shipped table (docs/field.md,
docs/field.html) is what a fresh build gives; runs named on the command line join it, paired with a chosen reference
by exact McNemar; a partial run and a score above the audited ceiling are marked."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from bench.data.audit import load_errata
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

LOCOMO = json.loads((REPO_ROOT / "data" / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
SHIPPED = REPO_ROOT / "data" / "peer-files" / "dial481" / "locomo-audit" / "fc-baseline" / "results"
AUDIT_COT = SHIPPED / "gpt-4o-mini-cot" / "eval_results.json"


def _field(tmp_path: Path, capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("ENGRAM_PEER_FILES", str(tmp_path / "no-peer-files"))
    return run_cli(["field", *args], capsys, monkeypatch)


def test_from_a_fresh_clone_the_field_builds_in_all_three_forms(tmp_path, capsys, monkeypatch) -> None:
    code, text, err = _field(tmp_path, capsys, monkeypatch, "--as", "markdown", "--out", str(tmp_path / "field.md"))
    assert code == 0, err
    table = (tmp_path / "field.md").read_text(encoding="utf-8")
    shipped = json.loads(AUDIT_COT.read_text(encoding="utf-8"))
    [first] = [line for line in table.splitlines() if "gpt-4o-mini-cot" in line and line.startswith("|")]
    assert f"| {100 * shipped['accuracy']:.1f} [" in first and "all 1,540" in first and "| reference |" in first
    assert "getzep/zep-papers@4b7f26cc76:" in table and "memodb-io/memobase@358c16bbc6:" in table
    ours = [line for line in table.splitlines() if line.startswith("| results/v3/")]
    assert ours and all("778 of 1,540: conv-26, conv-30" in line and "PARTIAL" in line for line in ours)
    # the file that may not ship is named, with no folder of this machine in the words
    assert "not shipped: vectorize-io/agent-memory-benchmark@de83fa7816:outputs/locomo/" in table
    assert str(tmp_path) not in table

    code, page, err = _field(tmp_path, capsys, monkeypatch, "--as", "html")
    assert code == 0, err
    assert page.startswith("<!doctype html>") and page.count('<tr class="partial">') == len(ours) + len(
        [line for line in table.splitlines() if line.startswith("| results/v1/")]
    )
    code, terminal, err = _field(tmp_path, capsys, monkeypatch)
    assert (
        code == 0 and "[1] full context, CoT prompt (gpt-4o-mini)" in terminal and "vs reference: reference" in terminal
    )


def test_the_shipped_table_is_what_a_fresh_build_gives(tmp_path, capsys, monkeypatch) -> None:
    """docs/field.md and docs/field.html are built from what every clone holds: `field --check` rebuilds them and
    compares bytes, whatever this machine keeps in its peer-files folder."""
    monkeypatch.setenv("ENGRAM_PEER_FILES", str(tmp_path / "no-peer-files"))
    code, text, err = run_cli(["field", "--check"], capsys, monkeypatch)
    assert code == 0, err
    assert "docs/field.md and docs/field.html are current" in text
    shipped = (REPO_ROOT / "docs" / "field.md").read_text(encoding="utf-8")
    assert "| getzep/zep-papers@4b7f26cc76:kg_architecture_agent_memory/locomo_eval/data/zep_locomo_grades.json |" in (
        shipped
    )
    assert "commit 4b7f26cc76cca20743314ba9acb8c2cb6adc42f6, sha256 2ecb7010" in shipped  # each row's full source


def test_the_shipped_table_takes_no_other_runs_or_options(tmp_path, capsys, monkeypatch) -> None:
    for extra in (["--as", "html"], ["--shipped-only"], [str(tmp_path)], ["--build"]):
        code, _, err = run_cli(["field", "--check", *extra], capsys, monkeypatch)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "field" in err, extra


def test_a_stale_shipped_table_is_named_in_one_line(tmp_path, monkeypatch) -> None:
    from bench.report import field

    repo = tmp_path / "clone"
    (repo / "docs").mkdir(parents=True)
    for folder in ("results/v1", "results/v3"):
        (repo / folder).parent.mkdir(parents=True, exist_ok=True)
        (repo / folder).symlink_to(REPO_ROOT / folder)
    built = field.built_tables(repo)
    for relative, text in built.items():
        (repo / relative).write_text(text, encoding="utf-8")
    monkeypatch.setattr(field, "built_tables", lambda _: built)  # the same build; this test is about the comparison
    assert field.stale_tables(repo) == []
    page = repo / "docs" / "field.html"
    page.write_text(page.read_text(encoding="utf-8").replace("75.1 [", "84.0 ["), encoding="utf-8")
    (repo / "docs" / "field.md").unlink()
    assert field.stale_tables(repo) == [
        "docs/field.md: missing; expected the table `engram-bench field --build` writes",
        "docs/field.html: differs from a fresh build; run `engram-bench field --build`",
    ]


def _omb(tmp_path: Path, name: str, labels: dict[tuple[str, int], bool]) -> Path:
    """An Open Memory Benchmark output of our own answers on chosen (conversation, scored position) questions."""
    results = []
    for (sample, position), correct in labels.items():
        conversation = next(c for c in LOCOMO if c["sample_id"] == sample)
        qa = [q for q in conversation["qa"] if q["category"] != 5][position]
        results.append(
            {"query_id": f"{sample}_q{position}", "query": qa["question"], "answer": "ours", "correct": correct}
        )
    path = tmp_path / f"{name}.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"results": results}).encode()))
    return path


def _imported(tmp_path: Path, capsys, monkeypatch, name: str, labels: dict[tuple[str, int], bool]) -> str:
    out = tmp_path / "runs" / name
    code, _, err = run_cli(
        ["import-results", str(_omb(tmp_path, name, labels)), "--name", name, "--out", str(out)], capsys, monkeypatch
    )
    assert code == 0, err
    return str(out)


def _row(table: str, system: str) -> list[str]:
    [line] = [line for line in table.splitlines() if line.startswith("|") and f"| {system} |" in line]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_named_runs_are_paired_with_the_chosen_reference_by_exact_mcnemar(tmp_path, capsys, monkeypatch) -> None:
    questions = [("conv-30", i) for i in range(9)]
    reference = _imported(tmp_path, capsys, monkeypatch, "all-right", dict.fromkeys(questions, True))
    other = _imported(tmp_path, capsys, monkeypatch, "three-wrong", {q: q[1] not in (2, 5, 7) for q in questions})
    code, table, err = _field(
        tmp_path, capsys, monkeypatch, reference, other, "--reference", "all-right", "--as", "markdown"
    )
    assert code == 0, err
    row = _row(table, "three-wrong")
    # three questions only the reference got right, none the other way: exact two-sided p = 2 * 0.5**3
    assert row[-1] == "-33.3 pts (n 9, p 0.25)"
    assert (
        row[6]
        == "9 of 1,540: conv-26, conv-41, conv-42, conv-43, conv-44, conv-47, conv-48, conv-49, conv-50 missing (PARTIAL)"
    )
    assert row[7].startswith("66.7 [") and row[7].endswith("PARTIAL")
    assert _row(table, "all-right")[-1] == "reference"


def test_a_score_above_the_audited_ceiling_of_its_questions_is_flagged(tmp_path, capsys, monkeypatch) -> None:
    corrupting = sorted(load_errata().corrupting)
    sample, position = corrupting[0].split(":")
    conversation = next(c for c in LOCOMO if c["sample_id"] == sample)
    scored = [j for j, q in enumerate(conversation["qa"]) if q["category"] != 5]
    spot = scored.index(int(position))
    clean = [p for p in range(len(scored)) if f"{sample}:{scored[p]}" not in corrupting][:3]
    # four questions, one whose official gold is wrong: the ceiling is 75%; a run right on all four scores above it
    run = _imported(tmp_path, capsys, monkeypatch, "too-good", {(sample, p): True for p in [spot, *clean]})
    honest = _imported(tmp_path, capsys, monkeypatch, "honest", {(sample, p): p != spot for p in [spot, *clean]})
    code, table, err = _field(tmp_path, capsys, monkeypatch, run, honest, "--as", "markdown")
    assert code == 0, err
    assert _row(table, "too-good")[13] == "ABOVE AUDITED CEILING 75.0"
    assert _row(table, "honest")[13] == ""
    assert re.match(r"100\.0 \[", _row(table, "too-good")[8])  # audited-exclude drops the wrong-gold question


def test_an_unknown_reference_or_form_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    code, _, err = _field(tmp_path, capsys, monkeypatch, "--reference", "no such system anywhere")
    assert code == 2 and "--reference" in err and len(err.strip().splitlines()) == 1
    code, _, err = _field(tmp_path, capsys, monkeypatch, "--as", "pdf")
    assert code == 2 and "--as" in err and "pdf" in err
