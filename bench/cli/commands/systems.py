"""`engram-bench systems list | install NAME | check NAME`: every memory system the harness can run, the
environments of adapters, and the contract each must pass (docs/memory-protocol.md)."""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from bench.errors import ConfigError, SystemFailed
from bench.models.stacks import OFFLINE_STACK
from bench.run.arms import load_arm
from bench.systems import get_system, system_names
from bench.systems.adapters import adapter_names, load_adapter
from bench.systems.adapters import install as build
from bench.systems.contract import context_builder, offline_gateway, run_contract
from bench.vocab import ARMS_DIR

GENERIC = {
    "http": "any server speaking the memory protocol (docs/memory-protocol.md): an arm with url, command or adapter",
    "mcp": "any MCP memory server (stdio command or streamable-HTTP url), tools found by name and schema",
}

app = typer.Typer(help="Memory systems: list them, install an adapter's environment, check the contract.")


def listing() -> list[dict[str, Any]]:
    """One row per system: in-process ones, the two generic out-of-process kinds, and every adapter."""
    rows: list[dict[str, Any]] = []
    for name in system_names():
        if name in GENERIC:
            reason = _generic_reason(name)
            rows.append(_row(name, name, reason, GENERIC[name], f'system = "{name}"'))
            continue
        try:
            cls = get_system(name)
        except ConfigError as exc:  # an installed package's entry point that fails to load: listed, not fatal
            rows.append(_row(name, "in-process", str(exc), "(its package does not load)", f'system = "{name}"'))
            continue
        module = sys.modules.get(cls.__module__)  # a part registered from a file outside any package may have none
        doc = (cls.__doc__ or (module.__doc__ if module else None) or cls.__module__).strip().splitlines()[0]
        rows.append(_row(name, "in-process", None, doc, f'system = "{name}"'))
    for name in adapter_names():
        try:
            adapter = load_adapter(name)
        except ConfigError as exc:
            rows.append(_row(name, "adapter", str(exc), "(unreadable adapter.toml)", ""))
            continue
        arm = f'system = "http", adapter = "{name}"' if adapter.protocol == "memory" else f"arms/{name}.toml"
        row = _row(name, "adapter", adapter.not_runnable_reason(), adapter.description, arm)
        row.update(library=adapter.library, store=adapter.store, environment=adapter.environment)
        rows.append(row)
    return rows


def _row(name: str, kind: str, reason: str | None, description: str, arm: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "runnable": reason is None,
        "why_not": reason,
        "description": description,
        "arm": arm,
    }


def _generic_reason(name: str) -> str | None:
    if name != "mcp":
        return None
    # found, not imported: the listing stays quick and the mcp SDK loads only for an mcp arm
    if importlib.util.find_spec("mcp") is None:
        return "the mcp package is not installed (pip install 'engram-bench[mcp]')"
    return None


@app.command("list")
def list_systems(as_json: bool = typer.Option(False, "--json", help="Print the listing as JSON.")) -> None:
    """Every system: in-process, the http and mcp kinds, and each adapter under systems/, with whether it can run
    here."""
    rows = listing()
    if as_json:
        typer.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    width = max([16, *(len(row["name"]) for row in rows)])  # a long name (mcp-server-qdrant) keeps the columns
    typer.echo(f"{'system':<{width}} {'kind':<11} {'runs here':<10} description")
    for row in rows:
        runs = "yes" if row["runnable"] else "no"
        typer.echo(f"{row['name']:<{width}} {row['kind']:<11} {runs:<10} {row['description']}")
        if row["why_not"]:
            typer.echo(f"{'':<{width + 23}}  ({row['why_not']})")
    runnable = sum(1 for row in rows if row["runnable"])
    typer.echo(f"{runnable} of {len(rows)} runnable here")


@app.command("install")
def install(name: str = typer.Argument(..., help="An adapter folder under systems/.")) -> None:
    """Build .venvs/NAME/ from systems/NAME/'s requirements file (the adapter's pins never meet the project's)."""
    adapter = load_adapter(name)
    if adapter.environment == "project":
        typer.echo(f"{name}: runs with the project's own python ({sys.executable}); nothing to install")
        return
    typer.echo(f"{name}: building {adapter.venv} from {adapter.folder / str(adapter.requirements)}")
    typer.echo(f"{name}: installed in {build(adapter)}")


@app.command("check")
def check(
    name: str = typer.Argument(None, help="An adapter (systems/NAME/) or an in-process system; or use --arm."),
    arm: str = typer.Option(None, "--arm", help="An arm in arms/ or a path to an arm file (e.g. an http/mcp arm)."),
    stack: str = typer.Option(OFFLINE_STACK, "--stack", help="The stack whose models the system uses."),
    mode: str = typer.Option(
        None, "--mode", help="Gateway mode for the system's model calls: live | replay | record (default from keys)."
    ),
    in_process: bool = typer.Option(
        False, "--in-process", help="NAME is the in-process system even where an adapter has the same name (mem0)."
    ),
) -> None:
    """Run the contract every memory system must pass (round trip, source ids, k, tokens, reset and namespace
    isolation, one-line errors); exit 2 if any check fails. A NAME that is both an adapter and an in-process system
    means the adapter unless --in-process."""
    system, settings, label = _resolve(name, arm, in_process)
    with tempfile.TemporaryDirectory(prefix="engram-check-") as scratch, offline_gateway(None, mode) as gateway:
        build = context_builder(system, settings, stack, gateway)
        outcomes = run_contract(build, Path(scratch), reuse_dir=system in GENERIC)
    for outcome in outcomes:
        typer.echo(f"{label}: {outcome.line()}")
    failed = [o for o in outcomes if not o.passed]
    if failed:
        raise SystemFailed(
            f"{label}: {len(failed)} of {len(outcomes)} contract checks failed, first: {failed[0].check}: "
            f"{failed[0].detail}"
        )
    typer.echo(f"{label}: all {len(outcomes)} contract checks passed")


def _resolve(name: str | None, arm: str | None, in_process: bool = False) -> tuple[str, dict[str, Any], str]:
    if (name is None) == (arm is None):
        raise ConfigError("systems check: expected a system NAME or --arm, found " + ("both" if name else "neither"))
    if arm is not None:
        path = Path(arm)
        loaded = load_arm(path.stem, path.parent) if path.suffix == ".toml" else load_arm(arm, ARMS_DIR)
        return loaded.system, dict(loaded.settings), f"arm {loaded.name!r}"
    assert name is not None
    if name in adapter_names() and not in_process:
        adapter = load_adapter(name)
        if adapter.protocol == "mcp":  # a third-party MCP server: its arm says how to start and call it
            reason = adapter.not_runnable_reason()
            if reason is not None:
                raise ConfigError(f"systems check: adapter {name!r} cannot run here: {reason}")
            loaded = load_arm(name, ARMS_DIR)
            return loaded.system, dict(loaded.settings), f"adapter {name!r}"
        return "http", {"adapter": name}, f"adapter {name!r}"
    if name in GENERIC:
        raise ConfigError(f"systems check: {name!r} needs a server to check: pass an arm with --arm")
    get_system(name)  # an unknown name is refused here, listing the known ones
    return name, {}, f"system {name!r}"


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="systems")
