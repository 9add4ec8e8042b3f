"""`engram-bench rescore`: the LLM-free metrics of committed result files are recomputed from their stored answers by
one command anyone can re-run; nothing else in a file moves, and a bad file stops the command before any write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.vocab import RESULTS_DIR
from tests.cli_main import exit_code_of

COMMITTED = RESULTS_DIR / "offline" / "dev" / "full-context.json"


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def stripped(raw: dict[str, Any]) -> dict[str, Any]:
    """A result as the harness wrote it before metric names: no metrics block, no per-answer scores, and the first
    harness's F1 (here a deliberately wrong value) in `f1`."""
    out = json.loads(json.dumps(raw))
    del out["metrics"]
    for answer in out["answers"]:
        answer.pop("scores", None)
        if answer["f1"] is not None:
            answer["f1"] = 0.5
    return out


def test_rescoring_a_stripped_file_gives_back_the_committed_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    committed = COMMITTED.read_bytes()
    target = tmp_path / "full-context.json"
    target.write_text(json.dumps(stripped(json.loads(committed)), indent=2, sort_keys=True) + "\n")

    code, out = run_cli(["rescore", str(target)], monkeypatch, capsys)

    assert code == 0 and "rescore: 1 of 1 file(s) rewritten in place" in out, out
    assert target.read_bytes() == committed  # every other field byte-identical; scores and metrics as committed


def test_rescoring_twice_changes_nothing_and_check_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "full-context.json"
    shutil.copy(COMMITTED, target)
    code, out = run_cli(["rescore", "--check", str(tmp_path)], monkeypatch, capsys)
    assert code == 0 and "0 of 1 file(s) would be rewritten in place" in out, out


def test_check_names_a_stale_file_exits_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "full-context.json"
    stale = json.dumps(stripped(json.loads(COMMITTED.read_bytes())), indent=2, sort_keys=True) + "\n"
    target.write_text(stale)
    code, out = run_cli(["rescore", "--check", str(target)], monkeypatch, capsys)
    assert code == 1 and f"would rewrite {target}" in out, out
    assert target.read_text() == stale


def test_a_bad_file_among_good_ones_stops_before_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "a-good.json"
    good_text = json.dumps(stripped(json.loads(COMMITTED.read_bytes())), indent=2, sort_keys=True) + "\n"
    good.write_text(good_text)
    bad = tmp_path / "b-bad.json"
    broken = json.loads(COMMITTED.read_bytes())
    del broken["answers"][3]["label"]
    bad.write_text(json.dumps(broken))

    code, err = run_cli(["rescore", str(good), str(bad)], monkeypatch, capsys)

    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(bad) in err and "answers[3].label" in err
    assert good.read_text() == good_text  # read first, written never


def test_a_spec_naming_no_file_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(["rescore", str(tmp_path / "nothing-*.json")], monkeypatch, capsys)
    assert code == 2 and "found no files" in err and len(err.strip().splitlines()) == 1, err
