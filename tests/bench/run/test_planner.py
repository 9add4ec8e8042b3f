"""One planner: `run`, `plan` and `grid` expand a request into the same units, each with its targets, built once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.data.slices import load_slice
from bench.errors import ConfigError
from bench.run.grid.spec import GridSpec, plan_grid
from bench.run.plan import make_plans
from bench.run.planner import asked, is_asked, limit_questions
from bench.run.runner import plan_run
from bench.vocab import REPO_ROOT, heldout_slices
from tests.bench.run_args import RunArgs, run_args


def write_arms(folder: Path) -> Path:
    folder.mkdir()
    (folder / "wide-sweep.toml").write_text('system = "raw-turn-rag"\nk = [2, 4, 9]\n', encoding="utf-8")
    (folder / "yardstick.toml").write_text('system = "full-context"\n', encoding="utf-8")
    (folder / "budget-matched.toml").write_text(
        'extends = "wide-sweep"\n[token_match]\nsweep_arm = "wide-sweep"\nreference_arm = "yardstick"\n'
        "reference_k = 4\nks = [2, 4]\n",
        encoding="utf-8",
    )
    return folder


def run_options(tmp_path: Path, arms: Path) -> RunArgs:
    return run_args(
        runs_root=tmp_path / "runs",
        results_root=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        arms_dir=arms,
        run_id="planned-once",
        progress=False,
        say=lambda _: None,
    )


def test_run_and_grid_plan_a_token_matched_arm_from_the_same_expansion(tmp_path: Path) -> None:
    arms = write_arms(tmp_path / "arms")
    conversation = heldout_slices()[0]
    pooled = heldout_slices()  # a held-out slice pools its group's conversations when matching tokens

    run = plan_run("budget-matched", conversation, *run_options(tmp_path, arms))
    grid = plan_grid(GridSpec(arms=("budget-matched",), slices=(conversation,)), arms_dir=arms)

    expected = [("wide-sweep", name) for name in pooled] + [("yardstick", name) for name in pooled]
    assert sorted((u.arm.name, u.the_slice.name) for u in run.units[:-1]) == sorted(expected)
    assert [(u.arm, u.slice_name) for u in grid.units[:-1]] == [(u.arm.name, u.the_slice.name) for u in run.units[:-1]]
    last = run.units[-1]
    assert (last.arm.name, last.ks, last.named) == ("budget-matched", (2, 4), True)
    assert not any(u.named for u in run.units[:-1]) and not any(u.named for u in grid.units[:-1])
    # run answers a prerequisite only at the k's read; grid at its own k's too (one ingestion serves both)
    sweep_run = next(u for u in run.units if u.arm.name == "wide-sweep")
    sweep_grid = next(u for u in grid.units if u.arm == "wide-sweep")
    assert sweep_run.ks == (2, 4) and sweep_grid.ks == (2, 4, 9)
    # targets are part of the plan: one file per k, where this run writes
    folder = tmp_path / "runs" / "offline"
    assert all(str(t).startswith(str(folder)) for u in run.units for t in u.targets)
    assert [t.name for t in last.targets] == ["budget-matched__k2.json", "budget-matched__k4.json"]
    assert set(grid.units[-1].after) == {u.id for u in grid.units[:-1]}


def test_a_circle_of_token_matched_arms_is_refused_by_the_grid_too(tmp_path: Path) -> None:
    arms = tmp_path / "arms"
    arms.mkdir()
    (arms / "plain.toml").write_text('system = "raw-turn-rag"\nk = 2\n', encoding="utf-8")
    for me, other in (("tick", "tock"), ("tock", "tick")):
        (arms / f"{me}.toml").write_text(
            f'system = "raw-turn-rag"\n[token_match]\nsweep_arm = "{other}"\nreference_arm = "plain"\n'
            "reference_k = 2\nks = [2]\n",
            encoding="utf-8",
        )
    with pytest.raises(ConfigError, match="circle: tick -> tock -> tick"):
        plan_grid(GridSpec(arms=("tick",), slices=("dev",)), arms_dir=arms)


def test_the_questions_a_run_asks_come_from_one_place() -> None:
    stress = load_slice("stress")  # asks questions at three checkpoints
    asks = asked(stress, adversarial=False)
    assert len(asks) == sum(len(stress.questions_at(c)) for c in stress.checkpoints)
    assert [c for _, c, _ in asks] == sorted(c for _, c, _ in asks)  # checkpoint order, as the runner asks them
    first_five = limit_questions(stress, 5, adversarial=False)
    assert [q.id for q in first_five.questions] == [q.id for q in stress.questions if is_asked(q, False)][:5]


def test_the_plan_command_no_longer_reaches_into_the_runner() -> None:
    code = "import sys, bench.run.plan; print('bench.run.runner' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_plan_prices_every_unit_a_token_matched_run_takes(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.cli.program import main

    conversation = heldout_slices()[1]
    plans = make_plans("mem0-token-matched", conversation, "offline")

    units = [(p.arm, p.slice_name) for p in plans]
    assert units[-1] == ("mem0-token-matched", conversation)
    assert sorted(units[:-1]) == sorted([(a, s) for a in ("mem0", "engram") for s in heldout_slices()])
    asked_here = len(asked(load_slice(conversation), adversarial=False))
    matched = plans[-1]
    assert {r.role for r in matched.roles} == {"answer", "judge", "count_tokens"}  # it writes nothing itself
    assert next(r.calls for r in matched.roles if r.role == "answer") == asked_here  # once, at the one matched k
    sweep = next(p for p in plans if (p.arm, p.slice_name) == ("mem0", conversation))
    assert sweep.ks == (3, 4, 5, 6, 7, 8)

    import sys

    argv = sys.argv
    sys.argv = ["engram-bench", "plan", "mem0-token-matched", "--slice", conversation]
    try:
        with pytest.raises(SystemExit) as ended:
            main()
    finally:
        sys.argv = argv
    assert ended.value.code in (0, None)
    shown = capsys.readouterr().out
    assert shown.count("\nplan ") + shown.startswith("plan ") == len(plans)
    assert shown.strip().splitlines()[-1].startswith(f"estimate for all {len(plans)} units: up to $0.00")
