"""The ENGRAM_* variables are read once, at the command line's edge, into one Settings; a bad one is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import settings
from bench.errors import ConfigError
from bench.models.gateway import default_cache_dir, ledger_path
from bench.run.request import default_runs_root
from tests.cli_main import exit_code_of


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("ENGRAM_RUN_BUDGET_USD", "abc", "expected a number of USD, found 'abc'"),
        ("ENGRAM_TOTAL_BUDGET_USD", "-3", "expected a finite, non-negative USD amount, found '-3'"),
        ("ENGRAM_TORCH_THREADS", "two", "expected a whole number of threads from 1 to 256, found 'two'"),
        ("ENGRAM_ASSUME_YES", "sure", "expected 1 (on) or 0 (off), found 'sure'"),
        ("ENGRAM_DATA_DIR", "/nowhere/at/all/datasets", "expected an existing folder"),
        ("ENGRAM_STACKS_DIR", "/nowhere/my-stacks", "expected an existing folder"),
        ("ENGRAM_EMBED_THREADS", "zero", "expected a whole number of threads from 1 to 256, found 'zero'"),
        ("ENGRAM_EMBED_THREADS", "999999", "expected a whole number of threads from 1 to 256, found '999999'"),
        ("ENGRAM_TORCH_THREADS", "999999", "expected a whole number of threads from 1 to 256, found '999999'"),
    ],
)
def test_a_bad_variable_stops_any_command_in_one_line(
    variable: str,
    value: str,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(variable, value)
    code, err = run_cli(["cache", "stats"], monkeypatch, capsys)
    assert code == 2, err
    assert err.splitlines() == [err] and f"environment {variable}: {expected}" in err
    assert not (tmp_path / "cache").exists()  # refused before the command touched anything


def test_a_file_where_a_folder_is_expected_is_named(tmp_path: Path) -> None:
    afile = tmp_path / "not-a-folder.txt"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="environment ENGRAM_RUNS_DIR: expected a folder, found the file"):
        settings.Settings.from_env({"ENGRAM_RUNS_DIR": str(afile)})


def test_the_command_reads_the_environment_once_and_forgets_it_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[settings.Settings] = []
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "first-cache"))

    # `cache stats` resolves its folder through the installed settings: change the variable mid-command and the
    # command still uses the value read at its edge
    original = settings.install

    def spy(told: settings.Settings) -> None:
        original(told)
        seen.append(told)
        monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "changed-later"))

    monkeypatch.setattr(settings, "install", spy)
    code, err = run_cli(["cache", "stats"], monkeypatch, capsys)
    assert code == 0, err
    assert [s.cache_dir for s in seen] == [tmp_path / "first-cache"]
    assert not (tmp_path / "changed-later").exists()
    # after the command, nothing stays installed: a direct call reads the environment as it is now
    assert default_cache_dir() == tmp_path / "changed-later"


def test_settings_built_directly_reach_the_code_below(tmp_path: Path) -> None:
    chosen = settings.Settings(
        cache_dir=tmp_path / "calls", runs_dir=tmp_path / "all-runs", ledger=tmp_path / "l.jsonl"
    )
    with settings.installed(chosen):
        assert default_cache_dir() == tmp_path / "calls"
        assert default_runs_root() == tmp_path / "all-runs"
        assert ledger_path() == tmp_path / "l.jsonl"
    with settings.installed(settings.Settings(cache_dir=tmp_path / "elsewhere")):
        assert ledger_path() == tmp_path / "elsewhere" / "spend_ledger.jsonl"  # next to the cache by default


def test_an_empty_variable_counts_as_unset() -> None:
    told = settings.Settings.from_env({"ENGRAM_RUN_BUDGET_USD": "", "ENGRAM_DATA_DIR": "", "ENGRAM_ASSUME_YES": ""})
    assert told == settings.Settings()
