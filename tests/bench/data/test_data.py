"""A missing, altered or malformed data file stops everything with one line and exit code 2."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.data import files as data
from bench.errors import DataError

LOCOMO_SHA256_FROM_THE_DATASET_RELEASE = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(data.REPO_ROOT / "data", copy)
    return copy


def _slices_cli(data_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENGRAM_DATA_DIR": str(data_root)}
    return subprocess.run([sys.executable, "-m", "bench", "slices", "--json"], capture_output=True, text=True, env=env)


def test_every_data_file_matches_the_sha256_in_sources() -> None:
    root = data.REPO_ROOT / "data"
    listed = data._expected_hashes(root)
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md"}
    assert set(listed) == on_disk
    for relative, expected in listed.items():
        assert hashlib.sha256((root / relative).read_bytes()).hexdigest() == expected, relative
    assert listed[data.LOCOMO] == LOCOMO_SHA256_FROM_THE_DATASET_RELEASE


def test_locomo_license_and_attribution_are_kept() -> None:
    root = data.REPO_ROOT / "data"
    assert "Attribution-NonCommercial 4.0" in (root / "locomo" / "LICENSE.txt").read_text()
    assert "CC BY-NC 4.0" in (root / "SOURCES.md").read_text()


def test_an_altered_file_fails_with_one_line_naming_it_and_exit_2(data_copy: Path) -> None:
    path = data_copy / data.LOCOMO
    path.write_bytes(path.read_bytes().replace(b"Caroline", b"Carolina", 1))
    result = _slices_cli(data_copy)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "locomo10.json" in lines[0] and "sha256 mismatch" in lines[0]
    assert LOCOMO_SHA256_FROM_THE_DATASET_RELEASE in lines[0]
    assert result.stdout == ""


def test_a_missing_file_fails_with_one_line(data_copy: Path) -> None:
    (data_copy / data.UPDATE_SET_1).unlink()
    result = _slices_cli(data_copy)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "updates_conv26.json: missing" in result.stderr


def test_malformed_json_is_reported_even_when_its_checksum_was_updated(data_copy: Path) -> None:
    path = data_copy / data.UPDATE_SET_2
    path.write_text('{"messages": [', encoding="utf-8")
    sources = data_copy / "SOURCES.md"
    old = data._expected_hashes(data.REPO_ROOT / "data")[data.UPDATE_SET_2]
    new = hashlib.sha256(path.read_bytes()).hexdigest()
    sources.write_text(sources.read_text().replace(old, new))
    result = _slices_cli(data_copy)
    assert result.returncode == 2
    assert "updates2_conv26.json: expected valid JSON" in result.stderr


def test_structurally_wrong_locomo_names_the_missing_fields(data_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = data_copy / data.LOCOMO
    path.write_text('[{"sample_id": "conv-26"}]', encoding="utf-8")
    sources = data_copy / "SOURCES.md"
    new = hashlib.sha256(path.read_bytes()).hexdigest()
    sources.write_text(sources.read_text().replace(LOCOMO_SHA256_FROM_THE_DATASET_RELEASE, new))
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(data_copy))
    with pytest.raises(DataError, match="expected each conversation to have 'sample_id', 'conversation' and 'qa'"):
        data.load_locomo()


def _doctor_locomo(data_copy: Path, change) -> None:  # type: ignore[no-untyped-def]
    path = data_copy / data.LOCOMO
    conversations = json.loads(path.read_text(encoding="utf-8"))
    change(conversations)
    path.write_text(json.dumps(conversations), encoding="utf-8")
    sources = data_copy / "SOURCES.md"
    new = hashlib.sha256(path.read_bytes()).hexdigest()
    sources.write_text(sources.read_text().replace(LOCOMO_SHA256_FROM_THE_DATASET_RELEASE, new))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda c: c[5]["conversation"]["session_3"][7].pop("text"), "conv-44.session_3[7].text"),
        (lambda c: c[0]["conversation"].pop("speaker_a"), "conv-26.conversation.speaker_a"),
        (lambda c: c[2]["conversation"].pop("session_2_date_time"), "conv-41.session_2_date_time"),
        (lambda c: c[9]["qa"][4].pop("answer"), "conv-50.qa[4].answer"),
        (lambda c: c[1]["qa"][0].update(category=7), "conv-30.qa[0].category"),
    ],
)
def test_a_locomo_file_missing_a_field_is_one_line_naming_it_and_exit_2(data_copy: Path, change, named) -> None:  # type: ignore[no-untyped-def]
    _doctor_locomo(data_copy, change)
    result = _slices_cli(data_copy)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "locomo10.json" in lines[0] and named in lines[0], lines
    assert result.stdout == ""
