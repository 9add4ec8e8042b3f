"""Each bad input the issue names ends in one line and exit 2, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.models.cache import LocalStore
from tests.cli_main import exit_code_of


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    return code, capsys.readouterr().err.strip()


def damaged_cache(directory: Path) -> Path:
    store = LocalStore(directory)
    for i in range(300):
        store.put_raw(f"key-{i}", "a cached reply " * 20)
    store.close()
    database = directory / "cache.db"
    with database.open("r+b") as handle:  # tear pages in the middle of the file, as a crash or a bad disk would
        handle.seek(4096 * 3)
        handle.write(os.urandom(4096 * 2))
    return database


def test_a_damaged_local_cache_names_the_file_and_how_to_rebuild_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    database = damaged_cache(tmp_path / "cache")
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"

    code, err = run_cli(
        ["run", "raw-turn-rag", "--slice", "dev", "--limit", "1", "--out", str(out)], monkeypatch, capsys
    )

    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{database}: the local call cache is damaged" in err and "Rebuild it by moving" in err
    assert not out.exists()


def test_cache_stats_on_a_damaged_cache_is_one_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged_cache(tmp_path / "cache")
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    code, err = run_cli(["cache", "stats"], monkeypatch, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "cache.db" in err, err


def test_a_misspelt_slice_in_k_by_slice_is_refused(tmp_path: Path) -> None:
    from bench.errors import ConfigError
    from bench.run.arms import load_arm

    (tmp_path / "typo.toml").write_text('system = "raw-turn-rag"\nk = 3\n[k_by_slice]\nstres = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key 'k_by_slice.stres'; expected a slice name: dev, stress"):
        load_arm("typo", tmp_path)
