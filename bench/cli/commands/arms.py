"""`engram-bench arms`: every declared arm with its resolved settings and canonical hash."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from bench.errors import ConfigError
from bench.run.arms import Arm, load_arms_or_errors
from bench.systems.engram_system import PRESET_DESCRIPTIONS
from bench.vocab import ARMS_DIR


def arms(
    as_json: bool = typer.Option(False, "--json", help="Print the resolved arms as JSON (settings, models, k, hash)."),
    arms_dir: Path = typer.Option(ARMS_DIR, "--arms-dir", help="The folder of arm files."),
) -> None:
    """List the arms in arms/*.toml after inheritance, each with its hash (the hash goes into every result). A bad
    arm file is reported on stderr after the others are listed, and the exit code is 2."""
    loaded, errors = load_arms_or_errors(arms_dir)
    if as_json:
        typer.echo(json.dumps([_as_json(arm) for arm in loaded], indent=2, sort_keys=True))
    else:
        _print_table(loaded)
    for error in errors:
        print(f"engram-bench arms: {error}", file=sys.stderr)
    if errors:
        print(
            f"engram-bench arms: {len(errors)} of {len(loaded) + len(errors)} arm files could not be read (listed the "
            "others)",
            file=sys.stderr,
        )
        raise typer.Exit(ConfigError.exit_code)


def _as_json(arm: Arm) -> dict:
    return {
        **arm.resolved(),
        "hash": arm.hash,
        "description": arm.description,
        "extends": list(arm.lineage[1:]),
        "import_only": arm.import_only,
    }


def _print_table(loaded: list[Arm]) -> None:
    typer.echo(f"{'arm':<22} {'system':<13} {'k':<26} {'hash':<12}  description")
    for arm in loaded:
        if arm.token_match is not None:
            k = f"matched to {arm.token_match.reference_arm}@{arm.token_match.reference_k}"
        else:
            k = ",".join(map(str, arm.k)) if arm.k else "all"
            k += "".join(f" {name}:{','.join(map(str, ks))}" for name, ks in sorted(arm.k_by_slice.items()))
        note = "[import only] " if arm.import_only else ""
        typer.echo(f"{arm.name:<22} {arm.system:<13} {k:<26} {arm.hash[:12]}  {note}{arm.description}")
    presets = sorted({str(arm.settings["preset"]) for arm in loaded if "preset" in arm.settings})
    if presets:
        typer.echo("engram presets (settings.preset):")
        for preset in presets:
            typer.echo(f"  {preset:<16} {PRESET_DESCRIPTIONS.get(preset, '(not a known preset)')}")
    typer.echo("k: retrieval budget, the lines shown per question; a list is one ingestion answered at each k")


def register(app: typer.Typer) -> None:
    app.command("arms")(arms)
