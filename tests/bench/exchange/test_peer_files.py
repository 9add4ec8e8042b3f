"""The readers meet the files the field actually published: each file of data/peer-files.toml, read from
$ENGRAM_PEER_FILES (the files are not in this repository; see the manifest), imports with the accuracy its producer
states, or is refused in one line saying why."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bench.report.field import default_peer_root
from bench.results.schema import read_result
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

MANIFEST = REPO_ROOT / "data" / "peer-files.toml"
ENTRIES: list[dict[str, Any]] = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["file"]


def _real_file(entry: dict[str, Any]) -> Path:
    root = default_peer_root()
    path = root / entry["repo"] / entry["path"]
    if not path.is_file():
        pytest.skip(
            f"{entry['repo']}/{entry['path']} is not under $ENGRAM_PEER_FILES ({root}); data/peer-files.toml says "
            "where to get it (repository, commit, sha256)"
        )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"{path} is not the manifest's file"
    return path


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e['repo'].split('/')[0]}:{Path(e['path']).name}" for e in ENTRIES])
def test_a_published_file_imports_as_its_producer_states_or_is_refused_in_one_line(
    entry, tmp_path, capsys, monkeypatch
) -> None:
    source = _real_file(entry)
    stated = entry["stated"]
    out = tmp_path / "peer"
    code, text, err = run_cli(["import-results", str(source), "--out", str(out)], capsys, monkeypatch)
    if "refused" in stated:
        assert code == 2 and not out.exists()
        assert len(err.strip().splitlines()) == 1 and stated["refused"] in err
        return
    assert code == 0, err
    first_runs = sorted(p for p in out.glob("locomo/*/*.json") if "__r" not in p.name)
    results = [read_result(p) for p in first_runs]
    imported = results[0].extras["imported"]
    assert imported["format"] == entry["format"]
    runs = int(imported["stated"].get("runs", "1"))
    labels = [
        a.correct
        for p in out.glob("locomo/*/*.json")
        for a in read_result(p).answers
        if a.scored  # every judgment run's labels
    ]
    questions = sum(len(r.answers) for r in results)
    assert questions == stated["questions"] == imported["coverage"]["questions"]
    if "accuracy" in stated:
        assert round(sum(labels) / len(labels), 4) == stated["accuracy"]
    if "correct" in stated:
        assert sum(labels) == stated["correct"] * runs
    if "correct_is" in stated:
        assert imported["stated"]["correct_is"] == stated["correct_is"]
    if "naming" in stated:
        assert imported["stated"]["naming"] == stated["naming"]
    assert imported["coverage"]["partial"] == ("partial" in stated)
    if "partial" in stated:
        assert stated["partial"] in imported["coverage"]["missing"] and "PARTIAL" in text


def test_the_manifest_names_every_file_fully() -> None:
    for entry in ENTRIES:
        assert len(entry["commit"]) == 40 and len(entry["sha256"]) == 64 and entry["licence"]
        assert isinstance(entry["shippable"], bool) and entry["stated"]


def test_the_field_table_shows_the_published_files_at_their_stated_accuracy(tmp_path, capsys, monkeypatch) -> None:
    wanted = {e["system"]: e for e in ENTRIES if "refused" not in e["stated"]}
    for entry in wanted.values():
        _real_file(entry)
    code, table, err = run_cli(["field", "--as", "markdown"], capsys, monkeypatch)
    assert code == 0, err
    rows = {
        cells[2]: cells
        for line in table.splitlines()
        if line.startswith("|") and "@" in line
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    for system, entry in wanted.items():
        stated = entry["stated"]
        accuracy = stated.get("accuracy", stated.get("correct", 0) / stated["questions"])
        shown = float(rows[system][7].split(" ")[0])  # one decimal; the manifest states four digits of a fraction
        assert abs(shown - 100 * accuracy) <= 0.051, (system, rows[system][7])
        assert ("PARTIAL" in rows[system][6]) == ("partial" in stated)
