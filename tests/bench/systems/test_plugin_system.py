"""A system from an installed package runs as an arm, found by its `engram_bench.systems` entry point, and its
result names the package that provided it: the worked example docs/examples/system/ (one module, an arm file and
the package's pyproject.toml).

The package is "installed" the way pip leaves one: its module and a `*.dist-info` folder (METADATA,
entry_points.txt, both from its pyproject.toml) in a folder on PYTHONPATH. Nothing under bench/ names it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.errors import ResultError
from bench.results.schema import read_result
from bench.vocab import REPO_ROOT
from tests.bench.installed import bench_cli, install_package

EXAMPLE = REPO_ROOT / "docs" / "examples" / "system"


def install_plugin(site: Path) -> None:
    install_package(EXAMPLE, site)


@pytest.mark.slow
def test_an_installed_packages_system_runs_as_an_arm_and_its_result_names_the_package(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_plugin(site)
    arms = tmp_path / "arms"
    arms.mkdir()
    shutil.copy(EXAMPLE / "echo-recall.toml", arms / "echo-recall.toml")
    out = tmp_path / "out"

    ran = bench_cli(
        ["run", "echo-recall", "--slice", "dev", "--limit", "2", "--out", str(out), "--arms-dir", str(arms), "--quiet"],
        site,
        tmp_path,
    )

    assert ran.returncode == 0, ran.stderr[-2000:]
    (written,) = sorted(out.glob("echo-recall*.json"))
    result = json.loads(written.read_text())
    assert result["system"] == "echo-recall" and result["settings"] == {"window": 3}
    assert len(result["answers"]) == 2
    assert all(len(a["lines"]) <= 3 for a in result["answers"])
    assert result["provenance"]["plugins"] == [
        {
            "kind": "system",
            "name": "echo-recall",
            "params": {"window": 3},
            "distribution": "echo-recall-memory",
            "version": "0.7.2",
        }
    ]
    # The record is part of the schema: read back, and a damaged one refused with the field named.
    assert read_result(written).provenance.plugins[0]["distribution"] == "echo-recall-memory"  # type: ignore[index]
    result["provenance"]["plugins"][0]["version"] = 72
    written.write_text(json.dumps(result))
    with pytest.raises(ResultError, match=r"provenance\.plugins\[0\]\.version: expected a string or null, found 72"):
        read_result(written)


@pytest.mark.slow
def test_a_broken_plugin_is_one_line_when_an_arm_uses_it_and_never_breaks_help(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_plugin(site)
    (site / "echo_recall.py").write_text("import a_dependency_nobody_installed\n")
    arms = tmp_path / "arms"
    arms.mkdir()
    shutil.copy(EXAMPLE / "echo-recall.toml", arms / "echo-recall.toml")

    assert bench_cli(["--help"], site, tmp_path).returncode == 0
    listed = bench_cli(["systems", "list", "--json"], site, tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    (row,) = [r for r in json.loads(listed.stdout) if r["name"] == "echo-recall"]
    assert not row["runnable"] and "a_dependency_nobody_installed" in row["why_not"]
    ran = bench_cli(["run", "echo-recall", "--slice", "dev", "--arms-dir", str(arms)], site, tmp_path)

    assert ran.returncode == 2
    (line,) = ran.stderr.strip().splitlines()
    assert "echo-recall" in line and "echo-recall-memory 0.7.2" in line
    assert "ModuleNotFoundError: No module named 'a_dependency_nobody_installed'" in line
    assert not (tmp_path / "runs").exists()  # refused before anything was written
