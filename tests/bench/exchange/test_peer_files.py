"""The readers meet the files the field actually published: each file of data/peer-files.toml imports with the
accuracy its producer states, or is refused in one line saying why. Every file whose licence allows it is shipped in
data/ (a fresh clone tests it); a file that may not ship is read from $ENGRAM_PEER_FILES and its test skips without it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.data.peer_files import PeerFile, default_peer_root, is_the_named_file, location, peer_files
from bench.results.schema import read_result
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

DATA = REPO_ROOT / "data"
ENTRIES = peer_files()
LOCOMO = [e for e in ENTRIES if e.benchmark == "locomo"]


def _real_file(entry: PeerFile) -> Path:
    path = location(entry, default_peer_root())
    assert path is not None
    if not entry.shippable and not path.is_file():
        pytest.skip(
            f"{entry.repo}/{entry.path} may not ship ({entry.licence}) and is not under $ENGRAM_PEER_FILES "
            f"({default_peer_root()}); data/peer-files.toml says where to get it (repository, commit, sha256)"
        )
    assert is_the_named_file(path, entry), f"{path} is not the file data/peer-files.toml names"
    return path


@pytest.mark.parametrize("entry", LOCOMO, ids=[f"{e.repo.split('/')[0]}:{Path(e.path).name}" for e in LOCOMO])
def test_a_published_file_imports_as_its_producer_states_or_is_refused_in_one_line(
    entry, tmp_path, capsys, monkeypatch
) -> None:
    source = _real_file(entry)
    stated = entry.stated
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
    assert imported["format"] == entry.format
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


def test_the_producers_headline_figures_are_what_the_shipped_files_give() -> None:
    """The two figures the issue names, pinned to the files a fresh clone holds (no skip can hide them)."""
    by_path = {e.path: e for e in ENTRIES}
    audit = by_path["fc-baseline/results/gpt-4o-mini-cot/eval_results.json"]
    zep = by_path["kg_architecture_agent_memory/locomo_eval/data/zep_locomo_grades.json"]
    assert audit.shippable and audit.stated["accuracy"] == 0.7989
    assert zep.shippable and (zep.stated["correct"], zep.stated["questions"]) == (1157, 1540)
    memobase = sorted(e.stated["accuracy"] for e in ENTRIES if e.repo == "memodb-io/memobase")
    assert memobase == [0.7091, 0.7578]


def test_the_manifest_names_every_file_fully() -> None:
    for entry in ENTRIES:
        assert len(entry.commit) == 40 and len(entry.sha256) == 64 and entry.licence
        assert entry.stated


def test_every_file_whose_licence_allows_it_is_shipped_with_its_licence_and_listed_in_sources() -> None:
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", sources, re.M))
    for entry in ENTRIES:
        if not entry.shippable:
            assert entry.shipped_as is None and "not shippable" in entry.licence
            continue
        assert entry.shipped_as is not None
        assert is_the_named_file(DATA / entry.shipped_as, entry), entry.shipped_as
        assert listed[entry.shipped_as] == entry.sha256
        # the licence text of the producer's repository ships in a folder above it, below data/
        folders = (DATA / entry.shipped_as).relative_to(DATA).parents[:-1]
        assert any((DATA / folder / "LICENSE").is_file() for folder in folders), entry.shipped_as
    readme = (DATA / "peer-files" / "README.md").read_text(encoding="utf-8")
    assert all(entry.repo in readme for entry in ENTRIES)


def test_a_manifest_entry_shippable_but_not_shipped_is_one_line(tmp_path, monkeypatch) -> None:
    manifest = (DATA / "peer-files.toml").read_text(encoding="utf-8")
    doctored = manifest.replace('shipped_as = "peer-files/getzep/zep-papers/', 'elsewhere = "', 1)
    assert doctored != manifest
    (tmp_path / "peer-files.toml").write_text(doctored, encoding="utf-8")
    monkeypatch.setenv("ENGRAM_DATA_DIR", str(tmp_path))
    from bench.errors import DataError

    with pytest.raises(DataError) as refused:
        peer_files()
    message = str(refused.value)
    assert "\n" not in message and "zep_locomo_grades.json" in message and "shipped_as" in message


def test_the_field_table_shows_the_published_files_at_their_stated_accuracy(tmp_path, capsys, monkeypatch) -> None:
    wanted = {}
    for entry in LOCOMO:
        present = entry.shippable or (location(entry, default_peer_root()) or Path()).is_file()
        if "refused" not in entry.stated and present:
            _real_file(entry)
            wanted[entry.system] = entry
    code, table, err = run_cli(["field", "--as", "markdown"], capsys, monkeypatch)
    assert code == 0, err
    rows = {
        cells[2]: cells
        for line in table.splitlines()
        if line.startswith("|") and "@" in line
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert {e.system for e in LOCOMO if e.shippable and "refused" not in e.stated} <= set(wanted)
    assert not any(e.system in rows for e in ENTRIES if e.benchmark != "locomo")  # LoCoMo's table only
    for system, entry in wanted.items():
        stated = entry.stated
        accuracy = stated.get("accuracy", stated.get("correct", 0) / stated["questions"])
        shown = float(rows[system][7].split(" ")[0])  # one decimal; the manifest states four digits of a fraction
        assert abs(shown - 100 * accuracy) <= 0.051, (system, rows[system][7])
        assert ("PARTIAL" in rows[system][6]) == ("partial" in stated)
        assert rows[system][0] == entry.source


def test_a_published_longmemeval_judged_log_gives_the_producers_per_type_figures(tmp_path, capsys, monkeypatch) -> None:
    """RobbyMD's LongMemEval-S judged log (GPT-4o judge), read onto the oracle split's 500 questions (the same ids and
    answers): overall, per type and abstention as its producer's README states them."""
    from bench.analysis.longmemeval import report

    (entry,) = [e for e in ENTRIES if e.benchmark == "longmemeval"]
    source = _real_file(entry)
    out = tmp_path / "lme"
    code, text, err = run_cli(["import-results", str(source), "--out", str(out)], capsys, monkeypatch)
    assert code == 0, err
    (path,) = out.glob("longmemeval/*.json")
    result = read_result(path)
    stated = entry.stated
    assert result.extras["imported"]["format"] == entry.format
    assert (result.accuracy.correct, result.accuracy.n) == (stated["correct"], stated["questions"])
    found = {name: [c.correct, c.n] for name, c in result.accuracy_by_category.items()}
    assert found == stated["by_type"]
    abstention = report(result.answers).abstention
    assert [abstention.correct, abstention.n] == stated["abstention"]
