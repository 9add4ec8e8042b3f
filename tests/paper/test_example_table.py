"""The worked example of adding a table (docs/examples/table/): one module and a pyproject.toml, installed beside
engram-bench, is listed by `paper table` and built from the committed v1 result files; a broken one is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench.results.schema import read_result
from bench.vocab import REPO_ROOT, RESULTS_DIR
from tests.bench.installed import bench_cli, install_package

EXAMPLE = REPO_ROOT / "docs" / "examples" / "table"


def _multi_hop_accuracy(k: int) -> tuple[float, int]:
    """engram's accuracy on the held-out multi-hop questions at k, read straight from the result files."""
    labels = [
        a.correct
        for path in sorted((RESULTS_DIR / "v1" / "heldout").glob(f"*/engram__k{k}.json"))
        for a in read_result(path).answers
        if a.scored and a.category == "multi-hop"
    ]
    return sum(labels) / len(labels), len(labels)


def test_an_installed_table_is_listed_and_built_from_committed_results(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)

    listed = bench_cli(["paper", "table"], site, tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    (line,) = [ln for ln in listed.stdout.splitlines() if ln.startswith("budget-gain ")]
    assert "group engram_bench.tables" in line and "budget-gain-table 0.3.1" in line
    assert "heldout " in listed.stdout  # the built-in tables are listed beside it

    out = tmp_path / "built"
    built = bench_cli(["paper", "table", "budget-gain", "--out", str(out)], site, tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    markdown = (out / "tables" / "budget_gain.md").read_text()
    assert "What engram gains from k=3 to k=20" in markdown and "| multi-hop |" in markdown
    assert (out / "tables" / "budget_gain.tex").is_file() and not (out / "article.md").exists()

    numbers = json.loads((out / "numbers.json").read_text())
    small, n = _multi_hop_accuracy(3)
    large, n_large = _multi_hop_accuracy(20)
    assert n == n_large == numbers["budget_gain.multi-hop.n"]["value"]
    # the same questions at both budgets: the paired mean difference is the difference of the two accuracies
    assert abs(numbers["budget_gain.multi-hop.gain"]["value"] - (large - small)) < 1e-12
    assert any(s.endswith("engram__k20.json") for s in numbers["budget_gain.multi-hop.gain"]["source"])


def test_a_broken_table_package_leaves_help_working_and_fails_in_one_line_when_used(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(EXAMPLE, folder)
    module = folder / "budget_gain_table.py"
    module.write_text(module.read_text().replace("from bench.analysis.pairing import", "from bench.no_such import"))
    site = tmp_path / "site-packages"
    install_package(folder, site)

    helped = bench_cli(["paper", "--help"], site, tmp_path)
    assert helped.returncode == 0 and "table" in helped.stdout

    used = bench_cli(["paper", "table", "budget-gain", "--out", str(tmp_path / "o")], site, tmp_path)
    assert used.returncode == 2
    (line,) = used.stderr.strip().splitlines()
    assert "budget-gain" in line and "budget-gain-table" in line and "ModuleNotFoundError" in line
    assert not (tmp_path / "o").exists()
