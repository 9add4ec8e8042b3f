"""The README's "add a new baseline" example works as written: one module + one TOML, run through the runner."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.run.runner import run_arm
from bench.systems import get_system
from bench.systems.base import SYSTEMS
from tests.bench.run_args import run_args

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "new_baseline"


@pytest.fixture
def example_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What dropping the file into bench/systems/ does: importing it runs its @register_system. The module and its
    registration last only for this test: left behind, the registry named a module missing from sys.modules, and
    `systems list` run later in the same worker process failed on it."""
    name = "bench.systems.recent_turns"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE / "recent_turns.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    yield
    SYSTEMS.remove("recent-turns")


def test_the_example_baseline_runs_on_the_dev_slice_from_one_module_and_one_toml(
    tmp_path: Path, example_registered: None
) -> None:
    assert get_system("recent-turns").name == "recent-turns"
    arms = tmp_path / "arms"
    arms.mkdir()
    shutil.copy(EXAMPLE / "recent-turns.toml", arms / "recent-turns.toml")

    written = run_arm(
        "recent-turns",
        "dev",
        *run_args(
            arms_dir=arms,
            results_root=tmp_path / "results",
            runs_root=tmp_path / "runs",
            cache_dir=tmp_path / "cache",
            progress=False,
        ),
    )

    assert [p.name for p in written] == ["recent-turns__k10.json"]
    result = json.loads(written[0].read_text())
    assert result["system"] == "recent-turns" and result["stack"] == "offline" and result["k"] == 10
    assert result["accuracy"]["n"] == 35
    assert all(a["lines_shown"] == 10 for a in result["answers"])
    # The last ten dev turns are session 4's: the newest line comes first.
    assert result["answers"][0]["lines"][0].startswith("[")
    assert result["costs"]["cost_per_1k"] == 0.0
