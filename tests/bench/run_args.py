"""Tests name a run's request and services in one breath, as a user does on the command line; this sorts each keyword
into the half it belongs to (bench.run.request), so `run_arm(arm, slice, *run_args(...))` reads like the command."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, NamedTuple

from bench.run.request import RunRequest, RunServices

ASKED = frozenset(f.name for f in fields(RunRequest))
GIVEN = frozenset(f.name for f in fields(RunServices))


class RunArgs(NamedTuple):
    request: RunRequest
    services: RunServices


def run_args(**given: Any) -> RunArgs:
    """A request and services from keywords of either (an unknown keyword is a TypeError, as in a constructor)."""
    return changed(RunArgs(RunRequest(), RunServices()), **given)


def changed(args: RunArgs, **changes: Any) -> RunArgs:
    """`args` with `changes` applied to whichever half names each field."""
    unknown = set(changes) - ASKED - GIVEN
    if unknown:
        raise TypeError(f"run_args: unknown field(s) {sorted(unknown)}")
    request = replace(args.request, **{k: v for k, v in changes.items() if k in ASKED})
    services = replace(args.services, **{k: v for k, v in changes.items() if k in GIVEN})
    return RunArgs(request, services)
