"""A run's request (what to run) and its services (what it is given) are two objects; RunOptions joins them."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.run.request import RunRequest, RunServices
from bench.run.runner import RunOptions, check_options


def names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_every_option_is_either_asked_for_or_given_never_both() -> None:
    asked, given = names(RunRequest), names(RunServices)
    assert not asked & given
    assert names(RunOptions) == asked | given
    assert {"gateway_factory", "slice_loader", "embedder", "say", "progress", "cache_dir"} <= given
    assert {"stack", "ks", "limit", "replicates", "out", "concurrency", "mode"} <= asked


def test_joining_and_splitting_gives_back_the_same_two(tmp_path: Path) -> None:
    request = RunRequest(stack="offline", ks=(3, 11), limit=7, concurrency=5, out=tmp_path / "elsewhere")
    services = RunServices(runs_root=tmp_path / "scratch-runs", progress=False, say=print)
    options = RunOptions.of(request, services)
    assert options.request == request and options.services == services
    assert (options.ks, options.runs_root, options.say) == ((3, 11), tmp_path / "scratch-runs", print)


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
        check_options(request_)
