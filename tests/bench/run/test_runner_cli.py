"""`engram-bench run` refuses bad input with one line and exit code 2, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli.program import main


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "no-such-arm", "--slice", "dev", "--stack", "offline"], "arm 'no-such-arm'"),
        (
            ["run", "raw-turn-rag", "--slice", "dev", "--stack", "cloud"],
            "--stack: expected one of local, offline, openai, paper",
        ),
        (["run", "raw-turn-rag", "--slice", "nowhere", "--stack", "offline"], "slice 'nowhere'"),
        (["run", "raw-turn-rag", "--slice", "dev", "--stack", "offline", "--k", "x"], "--k: expected integers"),
    ],
)
def test_bad_run_input_exits_2_with_one_line(
    argv: list[str],
    fragment: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr("sys.argv", ["engram-bench", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2
    assert fragment in err
    assert len(err.splitlines()) == 1
