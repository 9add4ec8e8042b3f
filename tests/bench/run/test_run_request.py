"""A run's request (what to run) and its services (what it is given) are two objects; the planner stamps the request
on every unit it plans, and the runner runs a unit with the services."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.run.request import RunRequest, RunServices
from bench.run.runner import check_request, plan_run


def names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_every_option_is_either_asked_for_or_given_never_both() -> None:
    asked, given = names(RunRequest), names(RunServices)
    assert not asked & given
    assert {"gateway_factory", "slice_loader", "embedder", "say", "progress", "cache_dir"} <= given
    assert {"stack", "ks", "limit", "replicates", "out", "concurrency", "mode"} <= asked


def test_each_planned_unit_carries_the_request_it_runs_under(tmp_path: Path) -> None:
    request = RunRequest(stack="offline", ks=(3, 11), concurrency=5, out=tmp_path / "elsewhere", run_id="asked-once")
    services = RunServices(runs_root=tmp_path / "scratch-runs", progress=False, say=print)
    [unit] = plan_run("raw-turn-rag", "dev", request, services).units
    assert unit.ks == (3, 11) and unit.request == request
    assert [t.parent for t in unit.targets] == [tmp_path / "elsewhere"] * 2


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (RunRequest(concurrency=0), "--concurrency: expected a positive integer"),
        (RunRequest(limit=2, update_committed=True), "--limit 2 with --update-committed"),
        (RunRequest(stack="no-such-stack"), "--stack: expected one of"),
    ],
)
def test_a_request_is_checked_on_its_own(request_: RunRequest, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_request(request_)
