"""`engram-bench cache export|stats`: ship the calls a run read; see what the local cache holds and did."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from bench.errors import CacheError
from bench.models.cache import (
    SUBSET_MANIFEST_FILE,
    LocalStore,
    ShippedSubset,
    SubsetManifest,
    discover_subsets,
    export_keys,
    read_keys_file,
)
from bench.models.gateway import LAST_RUN_FILE, default_cache_dir, keys_file_for

cache_app = typer.Typer(
    help="The call cache: export a run's calls as a shippable subset; show cache statistics.", no_args_is_help=True
)

CACHE_DIR_HELP = "Local cache folder (default: $ENGRAM_CACHE_DIR, else cache/local/)."


def export_run(run: str, out: Path, cache_dir: Path | None = None, subsets: list[Path] | None = None) -> SubsetManifest:
    """Export exactly the entries the run read (its key list) into `out` as sorted JSON lines + manifest."""
    local_dir = cache_dir or default_cache_dir()
    keys_path = keys_file_for(run, cache_dir=local_dir)
    keys = read_keys_file(keys_path)
    subset_dirs = discover_subsets(exclude=[local_dir]) if subsets is None else subsets
    local = LocalStore(local_dir) if local_dir.exists() else None
    try:
        return export_keys(
            keys, out, source=keys_path.name, subsets=[ShippedSubset.open(p) for p in subset_dirs], local=local
        )
    finally:
        if local is not None:
            local.close()


def cache_stats(cache_dir: Path | None = None) -> dict:
    local_dir = cache_dir or default_cache_dir()
    stats: dict = {"cache_dir": str(local_dir), "entries": 0, "size_bytes": 0, "last_run": None, "subsets": {}}
    if local_dir.exists():
        store = LocalStore(local_dir)
        stats["entries"], stats["size_bytes"] = len(store), store.size_bytes()
        store.close()
        last = local_dir / LAST_RUN_FILE
        if last.exists():
            try:
                stats["last_run"] = json.loads(last.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise CacheError(f"{last}: expected the last run's counters as JSON, found unreadable text") from exc
    for path in discover_subsets(exclude=[local_dir]):
        stats["subsets"][path.name] = len(ShippedSubset.open(path))
    return stats


def _human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{size} B"
        value /= 1024
    return f"{size} B"


@cache_app.command("export")
def export_command(
    run: str = typer.Option(
        ...,
        "--run",
        help="A result file (reads <result>.calls.txt), a .calls.txt key list, "
        "or a run id recorded into <cache dir>/runs/.",
    ),
    out: Path = typer.Option(..., "--out", help="Subset folder to write, e.g. cache/dev/."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help=CACHE_DIR_HELP),
) -> None:
    """Write exactly the calls a run read as a committed, diff-friendly subset (byte-identical on re-export)."""
    manifest = export_run(run, out, cache_dir)
    typer.echo(f"cache export: the {manifest.entries} calls listed in {manifest.source}")
    typer.echo(f"  wrote {out / manifest.file}  ({manifest.entries} entries, sha256 {manifest.sha256})")
    typer.echo(f"  wrote {out / SUBSET_MANIFEST_FILE}  (format {manifest.format}; replay reads the subset through it)")


@cache_app.command("stats")
def stats_command(
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help=CACHE_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Entries and size on disk of the local cache, the shipped subsets, and the last run's hits and misses."""
    stats = cache_stats(cache_dir)
    if as_json:
        typer.echo(json.dumps(stats, indent=2, sort_keys=True))
        return
    typer.echo(f"local cache   {stats['cache_dir']}: {stats['entries']} entries, {_human_bytes(stats['size_bytes'])}")
    for name, count in sorted(stats["subsets"].items()):
        typer.echo(f"subset        cache/{name}: {count} entries")
    last = stats["last_run"]
    if last is None:
        typer.echo("last run      none recorded in this cache")
        return
    typer.echo(
        f"last run      {last['run_id']} (arm {last.get('arm')}, slice {last.get('slice')}): "
        f"{last['hits']} hits, {last['misses']} misses, ${last.get('spent_usd', 0.0):.4f} spent"
    )
    for provider, counts in sorted(last.get("by_provider", {}).items()):
        typer.echo(f"  {provider:<10} {counts['hits']} hits, {counts['misses']} misses")


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
