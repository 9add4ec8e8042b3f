"""`engram-bench grid`: how a grid expands to units, and the bad input it refuses before anything runs."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bench.cli.program import main
from bench.errors import ConfigError
from bench.run.grid import plan_grid, spec_from
from bench.run.grid.spec import result_relpath, unit_id
from bench.vocab import heldout_slices


def test_heldout_expands_to_one_unit_per_conversation_and_arm() -> None:
    plan = plan_grid(spec_from(None, {"arms": ("engram", "full-context"), "slices": ("heldout",)}))
    assert [(u.arm, u.slice_name) for u in plan.units] == [
        (arm, name) for arm in ("engram", "full-context") for name in heldout_slices()
    ]
    assert all(not u.after and not u.token_matched for u in plan.units)


def test_a_token_matched_arm_waits_for_its_sweep_and_reference_on_every_pooled_conversation() -> None:
    plan = plan_grid(spec_from(None, {"arms": ("mem0-token-matched",), "slices": ("heldout:conv-41",)}))
    matched = [u for u in plan.units if u.token_matched]
    readers = {u.id: u for u in plan.units if not u.token_matched}
    assert len(matched) == 1 and matched[0].named
    # mem0 and engram on all four conversations were added (not named) and come first
    assert {(u.arm, u.slice_name) for u in readers.values()} == {
        (arm, name) for arm in ("mem0", "engram") for name in heldout_slices()
    }
    assert not any(u.named for u in readers.values())
    assert set(matched[0].after) == set(readers)
    assert plan.units[-1] is matched[0]
    mem0 = readers[unit_id("mem0", "heldout:conv-30", 0)]
    assert {3, 4, 5, 6, 7, 8} <= set(mem0.ks)  # every candidate k of the matching is answered
    assert result_relpath("offline", "heldout:conv-30", "mem0", 5) in matched[0].reads


def test_replicates_are_separate_units_with_their_own_results_tree() -> None:
    plan = plan_grid(spec_from(None, {"arms": ("raw-turn-rag",), "slices": ("dev",), "replicates": 3}))
    assert [u.replicate for u in plan.units] == [0, 1, 2]
    assert len({u.id for u in plan.units}) == 3
    assert plan.units[0].relative_targets("offline") == ["offline/dev/raw-turn-rag__k20.json"]
    assert plan.units[2].relative_targets("offline") == ["replicates/r2/offline/dev/raw-turn-rag__k20.json"]


def test_command_line_options_replace_the_grid_files(tmp_path: Path) -> None:
    grid = tmp_path / "GRID.toml"
    grid.write_text('arms = ["mem0"]\nslices = ["dev"]\nout = "here"\nworkers = 3\n', encoding="utf-8")
    spec = spec_from(grid, {"arms": ("engram",), "slices": ()})
    assert spec.arms == ("engram",) and spec.slices == ("dev",) and spec.workers == 3
    assert spec.out == tmp_path / "here"  # relative to the grid file


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the block ends: nothing listens there


@pytest.mark.parametrize(
    ("grid_text", "extra", "fragment"),
    [
        ('arms = ["mem0", "no-such-arm"]\nslices = ["dev"]\n', [], "GRID.toml: arms: expected an arm in arms/"),
        ('arms = ["mem0"]\nslices = ["dev", "nowhere"]\n', [], "GRID.toml: slices: "),
        ('arms = ["mem0"]\nslices = ["dev"]\nexecutors = "ray"\n', [], "GRID.toml: executors: expected one of"),
        ('arms = ["mem0"]\nslices = ["dev"]\nreplicates = 0\n', [], "GRID.toml: replicates: expected an integer"),
        ('arms = "mem0"\nslices = ["dev"]\n', [], "GRID.toml: arms: expected a list of names"),
        (
            'arms = ["mem0"]\nslices = ["dev"]\nexecutor = "dask"\n',
            [],
            "GRID.toml: executor: unknown executor 'dask'; known executors: local, ray",
        ),
        ('arms = ["mem0"\n', [], "GRID.toml: expected a grid file in TOML"),
        ('arms = ["mem0"]\nslices = ["dev"]\n', ["--stack", "cloud"], "--stack: expected one of"),
        (
            'arms = ["raw-turn-rag"]\nslices = ["dev"]\nexecutor = "ray"\n',
            ["--address", "127.0.0.1:{port}"],
            "--address 127.0.0.1:{port}: expected a Ray cluster answering there",
        ),
    ],
)
def test_bad_grid_input_is_one_line_exit_2_and_nothing_run(
    grid_text: str,
    extra: list[str],
    fragment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = _closed_port()
    grid = tmp_path / "GRID.toml"
    grid.write_text(grid_text, encoding="utf-8")
    out = tmp_path / "out"
    cache = tmp_path / "cache"
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(cache))
    argv = [str(grid), "--out", str(out), *[a.format(port=port) for a in extra]]
    monkeypatch.setattr("sys.argv", ["engram-bench", "grid", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2
    assert fragment.format(port=port) in err
    assert len(err.splitlines()) == 1
    assert not out.exists() and not cache.exists()  # nothing written, nothing run


def test_an_arm_that_cannot_be_run_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="--arm: expected an arm in arms/"):
        plan_grid(spec_from(None, {"arms": ("engram", "no-such-arm"), "slices": ("dev",)}))


def test_the_shipped_heldout_grid_file_plans_twelve_units_on_ray() -> None:
    grid = Path(__file__).resolve().parents[3] / "docs" / "examples" / "heldout-grid.toml"
    plan = plan_grid(spec_from(grid, {}))
    assert plan.spec.executor == "ray" and plan.spec.stack == "offline"
    assert len(plan.units) == 12 and {u.slice_name for u in plan.units} == set(heldout_slices())
