"""The run handed to an adapter that runs in the project's own environment (`environment = "project"`).

Such an adapter (systems/mem0/) can use the harness's own model clients, offline stand-ins included, instead of an
OpenAI-compatible endpoint: it gets `$ENGRAM_BENCH_RUN` (JSON: the stack, its models and how the run's gateway is
set up) and opens a gateway of its own over the same local cache and shipped subsets, with the same mode, strictness,
labels and budget ledger, so its calls are keyed, cached, replayed and refused exactly as the in-process arm's.

Why not the endpoint: on the offline stack the endpoint has no stand-in for a foreign system's prompts, while the
in-process mem0 arm's stand-in answers mem0's prompt from the message being added. An adapter that imports the
harness can run that same stand-in; one in its own environment cannot, and must use the endpoint.

Known limit: the handed-over gateway keeps its spend in the local cache's ledger; a grid worker's remote budget
(bench.run.grid) is not handed over, so on a paid stack a grid's one budget does not see the adapter's calls.

The adapter reports the keys its calls used in each reply's `usage` (`cache_keys`, `cache_hits`, `cache_misses`),
so the result's key list and hit/miss counts include them as they would for an in-process system.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.errors import ConfigError
from bench.models.budget import Budget, Ledger, RunLabels, limits_from_env
from bench.models.gateway import Gateway, ledger_path
from bench.systems.base import SystemContext

RUN_ENV = "ENGRAM_BENCH_RUN"


def handoff_env(context: SystemContext) -> dict[str, str]:
    """The run as `$ENGRAM_BENCH_RUN` for a project-environment adapter."""
    gateway: Any = context.gateway
    local = getattr(gateway, "local", None)
    labels = getattr(gateway, "labels", None)
    if labels is None or not hasattr(gateway, "subsets"):
        raise ConfigError(
            "adapter environment 'project': expected the run's gateway to say where its cache is, found a "
            f"{type(gateway).__name__} that does not"
        )
    run = {
        "stack": context.stack,
        "models": dict(context.models),
        "cache_dir": str(local.directory) if local is not None else None,
        "subsets": [str(s.directory) for s in gateway.subsets],
        "read_through": [str(s.directory) for s in getattr(gateway, "read_through", ())],
        "mode": getattr(gateway, "_explicit_mode", None),
        "strict": bool(getattr(gateway, "strict", False)),
        "run_id": labels.run_id,
        "arm": labels.arm,
        "slice": labels.slice_name,
        "replicate": int(getattr(gateway, "replicate", 0)),
    }
    return {RUN_ENV: json.dumps(run)}


def run_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    text = (os.environ if environ is None else environ).get(RUN_ENV)
    if not text:
        raise ConfigError(f"environment {RUN_ENV}: expected the run the harness hands a project adapter, found none")
    return dict(json.loads(text))


def gateway_from_run(run: Mapping[str, Any]) -> Any:
    """A gateway configured as the run's own (same cache, subsets, mode, strictness, labels, ledger)."""
    labels = RunLabels(run_id=run["run_id"], arm=run.get("arm"), slice_name=run.get("slice"))
    local = Path(run["cache_dir"]) if run.get("cache_dir") else None
    budget = None
    if local is not None:
        run_limit, total_limit = limits_from_env()
        budget = Budget(Ledger(ledger_path(local)), labels, run_limit_usd=run_limit, total_limit_usd=total_limit)
    subsets: Sequence[Path] = [Path(p) for p in run.get("subsets", [])]
    return Gateway(
        local=local,
        subsets=subsets,
        mode=run.get("mode"),
        strict=bool(run.get("strict")),
        labels=labels,
        budget=budget,
        read_through=[Path(p) for p in run.get("read_through", [])],
        replicate=int(run.get("replicate", 0)),
    )
