"""The grid runs a token-matched arm as a dependent unit: after its sweep and reference, with the file `run` writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.run.grid import GridSpec, run_grid
from bench.run.runner import run_arm
from tests.bench.run_args import run_args


@pytest.mark.slow
def test_a_token_matched_arm_runs_after_its_sweep_and_reference_and_writes_what_run_writes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lines: list[str] = []
    report = run_grid(
        GridSpec(arms=("mem0-token-matched",), slices=("dev",), workers=2, out=out),
        cache_dir=tmp_path / "cache",
        runs_root=tmp_path / "runs",
        progress=False,
        say=lines.append,
    )
    assert report.ok, [(r.unit.id, r.status, r.message) for r in report.units.values()]
    order = [line.split(":")[0] for line in lines if line.startswith("✓ ")]
    assert order[-1] == "✓ mem0-token-matched on dev" and len(order) == 3  # the sweep and reference first
    matched = sorted((out / "offline" / "dev").glob("mem0-token-matched__k*.json"))
    assert len(matched) == 1
    grid_result = json.loads(matched[0].read_text())
    assert grid_result["extras"]["token_match"]["sweep_arm"] == "mem0"

    # `run` of the same arm on a copy of the tree holding only its prerequisites writes the same file
    alone = tmp_path / "alone"
    shutil.copytree(out, alone, ignore=shutil.ignore_patterns("mem0-token-matched*", ".grid", "grid-summary.md"))
    written = run_arm(
        "mem0-token-matched",
        "dev",
        *run_args(
            results_root=alone,
            update_committed=True,
            runs_root=tmp_path / "runs",
            cache_dir=tmp_path / "cache",
            progress=False,
            say=lambda line: None,
        ),
    )
    assert [p.name for p in written] == [matched[0].name]
    theirs = json.loads(written[0].read_text())
    grid_result.pop("timing"), theirs.pop("timing")
    assert grid_result == theirs
