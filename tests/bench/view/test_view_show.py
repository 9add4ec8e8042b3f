"""A researcher looks at one question in the terminal: `engram-bench show RESULT QUESTION_ID`."""

from __future__ import annotations

from pathlib import Path

from tests.bench.test_compare import run_cli
from tests.conftest import REPO_ROOT


def test_show_prints_each_line_with_its_turn_evidence_mark_and_engrams_decisions(
    traced_engram: Path, capsys, monkeypatch
) -> None:
    code, out, _ = run_cli(["show", str(traced_engram), "conv-26:900"], capsys, monkeypatch)
    assert code == 0
    assert "question: Where does Ana live?" in out and "gold:     Berlin" in out
    assert "source T:4 ✓ evidence Ana: I live in Berlin now." in out
    assert "source T:1 Ana: I live in Paris." in out  # shown, but not evidence
    paris = out[out.index("source T:1 ") :]
    assert "closed: superseded by" in paris.splitlines()[1]
    assert "relation_to_candidate" in out and "*update=" in out
    assert "no trace" not in out


def test_show_on_a_v1_import_says_what_was_not_published(capsys, monkeypatch) -> None:
    path = REPO_ROOT / "results" / "v1" / "heldout" / "conv-30" / "mem0__k6.json"
    code, out, _ = run_cli(["show", str(path), "conv-30:0"], capsys, monkeypatch)
    assert code == 0
    assert "answer:   (not published)" in out
    assert "lines: not recorded: the v1 release publishes only how many lines were shown (6)" in out


def test_a_question_the_result_does_not_have_is_one_line_exit_2(capsys, monkeypatch) -> None:
    path = REPO_ROOT / "results" / "offline" / "dev" / "mem0__k6.json"
    code, out, err = run_cli(["show", str(path), "conv-99:1"], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert (
        err.strip()
        == f"engram-bench: {path}: expected a question id of this result (e.g. conv-26:0), found 'conv-99:1'"
    )
