"""The worked example of adding a dataset (docs/examples/dataset/): a package with one module and its data file,
installed beside engram-bench, gives a slice an existing arm runs on, and its own category names in the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.data.datasets import DATASETS
from bench.errors import ResultError
from bench.results.schema import read_result
from bench.vocab import REPO_ROOT
from tests.bench.installed import bench_cli, install_package

EXAMPLE = REPO_ROOT / "docs" / "examples" / "dataset"


@pytest.mark.slow  # a whole run in a subprocess, as the installed plugin system's run is
def test_an_installed_dataset_runs_under_an_existing_arm_with_its_own_categories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)
    out = tmp_path / "out"

    listed = bench_cli(["run", "full-context", "--slice", "garden-diary", "--out", str(out), "--quiet"], site, tmp_path)

    assert listed.returncode == 0, listed.stderr[-2000:]
    (written,) = sorted(out.glob("full-context*.json"))
    result = json.loads(written.read_text())
    assert result["slice"] == "garden-diary"
    # Three scored questions in the dataset's two scored categories; the unanswerable one is declared unscored.
    assert [(a["question_id"], a["category"]) for a in result["answers"]] == [
        ("gd-1", "recall"),
        ("gd-2", "recall"),
        ("gd-3", "when"),
    ]
    assert result["accuracy"]["n"] == 3

    sliced = bench_cli(["slices", "--json"], site, tmp_path)
    (garden,) = [s for s in json.loads(sliced.stdout) if s["name"] == "garden-diary"]
    assert garden["questions"] == 3 and garden["unscored"] == 1 and garden["messages"] == 6
    assert garden["by_category"] == {"recall": 2, "when": 1} and "garden" in garden["description"]

    listed = bench_cli(["datasets", "--json"], site, tmp_path)
    (diary,) = [d for d in json.loads(listed.stdout) if d["name"] == "garden-diary"]
    assert diary["package"] == "garden-diary-data 1.0.0" and diary["slices"] == ["garden-diary"]
    assert [(c["code"], c["name"], c["scored"]) for c in diary["categories"]] == [
        (1, "recall", True),
        (2, "when", True),
        (3, "unanswerable", False),
    ]

    # Reading the file back checks its categories against the registered datasets: here, only once the package
    # is on the path too.
    with pytest.raises(ResultError, match="expected a category a registered dataset declares"):
        read_result(written)
    monkeypatch.syspath_prepend(str(site))
    DATASETS.refresh_entry_points()
    try:
        assert read_result(written).accuracy.n == 3
        diary = DATASETS.get("garden-diary")
        assert diary.scored_categories == ("recall", "when")
        assert DATASETS.info("garden-diary").distribution == "garden-diary-data"
    finally:
        monkeypatch.undo()
        DATASETS.refresh_entry_points()


def test_a_question_with_a_category_the_dataset_does_not_declare_is_one_line(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)
    data = site / "garden_diary" / "garden_diary.toml"
    data.write_text(data.read_text().replace("category = 2", "category = 9"))

    ran = bench_cli(["run", "full-context", "--slice", "garden-diary", "--out", str(tmp_path / "o")], site, tmp_path)

    assert ran.returncode == 2
    (line,) = ran.stderr.strip().splitlines()
    assert (
        "question gd-3.category: expected a category of dataset garden-diary (1 recall, 2 when, 3 unanswerable)" in line
    )
    assert "found 9" in line
    assert not (tmp_path / "o").exists()
