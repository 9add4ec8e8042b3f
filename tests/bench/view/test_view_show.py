"""A researcher looks at one question in the terminal: `engram-bench show RESULT QUESTION_ID`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.errors import ResultError
from tests.bench.analysis.test_compare import run_cli
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


def test_a_facts_decisions_fold_into_one_line_unless_all_are_asked_for(
    traced_engram: Path, capsys, monkeypatch
) -> None:
    _, folded, _ = run_cli(["show", str(traced_engram), "conv-26:900"], capsys, monkeypatch)
    _, spread, _ = run_cli(["show", str(traced_engram), "conv-26:900", "--all-decisions"], capsys, monkeypatch)
    decided = [line for line in folded.splitlines() if line.strip().startswith("decided: ")]
    assert decided and all(" · " in line or "=" in line for line in decided)
    assert len(spread.splitlines()) > len(folded.splitlines())
    assert "decided: " not in spread and "worth_remembering: *" in spread


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
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"engram-bench: {path}: expected one of its question ids (35: conv-26:0, conv-26:1, ")
    assert "conv-26:100), found 'conv-99:1'" in err  # every id of the 35, so the reader can pick one


def test_a_mistyped_id_of_a_large_result_lists_the_closest_ids_on_one_line() -> None:
    from bench.view.model import load_side
    from bench.view.show import matching_positions

    side = load_side(str(REPO_ROOT / "results" / "offline" / "locomo" / "conv-30" / "engram__k20.json"))
    with pytest.raises(ResultError) as refused:
        matching_positions(side, "conv-30:12x")
    message = str(refused.value)
    assert "\n" not in message and "closest conv-30:12" in message and message.count(",") < 60
