"""A grid driver killed mid-grid and started again with the same command runs only the units not yet written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.models.cache import LocalStore

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_a_killed_driver_started_again_runs_only_the_remaining_units(tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "ENGRAM_CACHE_DIR": str(cache), "ENGRAM_RUNS_DIR": str(tmp_path / "runs")}
    argv = [sys.executable, "-m", "bench", "grid", "--arm", "full-context", "--arm", "raw-turn-rag"]
    argv += ["--slice", "dev", "--workers", "1", "--out", str(out), "--quiet"]
    first = subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert first.stdout is not None
    finished = ""
    for line in first.stdout:
        if line.startswith(("✓ ", "✗ ")):
            finished = line
            break
    os.killpg(first.pid, signal.SIGKILL)  # the driver and its pool, as a Ctrl-C'd terminal would lose them
    first.wait(timeout=60)
    assert finished.startswith("✓ "), finished
    done_arm = finished.split()[1]
    written = sorted(p.name for p in (out / "offline" / "dev").glob("*.json"))
    assert len(written) == 1 and written[0].startswith(done_arm)
    assert len(LocalStore(cache)) > 0  # the finished unit's shard was merged before the kill

    second = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
    unit_lines = [line for line in second.stdout.splitlines() if line.startswith(("✓ ", "✗ "))]
    assert len(unit_lines) == 1 and done_arm not in unit_lines[0]  # only the remaining unit ran
    summary = (out / "grid-summary.md").read_text(encoding="utf-8")
    assert f"| {done_arm} on dev | skipped |" in summary and "| ran |" in summary
    assert len(list((out / "offline" / "dev").glob("*.json"))) == 2
