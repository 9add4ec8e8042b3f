"""`engram-bench cache export|stats`: ship the calls a run read; see what the local cache holds and did."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from bench.disk.atomic import write_bytes
from bench.disk.writable import check_folder
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
from bench.run.retrievals import RETRIEVALS_DIR, records_of_arm

cache_app = typer.Typer(
    help="The call cache: export a run's calls as a shippable subset; show cache statistics.", no_args_is_help=True
)

CACHE_DIR_HELP = "Local cache folder (default: $ENGRAM_CACHE_DIR, else cache/local/)."


def export_run(run: str, out: Path, cache_dir: Path | None = None, subsets: list[Path] | None = None) -> SubsetManifest:
    """Export exactly the entries the run read (its key list) into `out` as sorted JSON lines + manifest; for a
    result file of an arm whose retrievals a replay compares (`http`, `mcp`), also its arm's retrieval records."""
    local_dir = cache_dir or default_cache_dir()
    keys_path = keys_file_for(run, cache_dir=local_dir)
    keys = read_keys_file(keys_path)
    subset_dirs = discover_subsets(exclude=[local_dir]) if subsets is None else subsets
    local = LocalStore(local_dir) if local_dir.exists() else None
    try:
        manifest = export_keys(
            keys, out, source=keys_path.name, subsets=[ShippedSubset.open(p) for p in subset_dirs], local=local
        )
    finally:
        if local is not None:
            local.close()
    if Path(run).suffix == ".json" and Path(run).is_file():
        export_retrieval_records(Path(run), out, [*subset_dirs, local_dir])
    return manifest


def export_retrieval_records(result: Path, out: Path, folders: list[Path]) -> list[Path]:
    """Copy the retrieval records of the result's arm (same settings and stack) from `folders` (subsets first, then
    the local cache; the first copy of a name wins) into `out/retrievals/`, so a replay from the subset alone still
    compares its retrievals with the recorded run's (bench.run.retrievals). Copied byte for byte."""
    try:
        data = json.loads(result.read_text(encoding="utf-8"))
        arm, settings, stack = data["arm"], data["settings"], data["stack"]
    except (ValueError, KeyError, TypeError):
        return []  # no arm named: its calls are all there is to export
    chosen: dict[str, Path] = {}
    for folder in folders:
        for path in records_of_arm(folder, arm, settings, stack):
            chosen.setdefault(path.name, path)
    written = []
    for name, path in sorted(chosen.items()):
        written.append(write_bytes(out / RETRIEVALS_DIR / name, path.read_bytes()))
    return written


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
    check_folder(out, "cache export --out")
    manifest = export_run(run, out, cache_dir)
    typer.echo(f"cache export: the {manifest.entries} calls listed in {manifest.source}")
    records = sorted((out / RETRIEVALS_DIR).glob("*.json")) if (out / RETRIEVALS_DIR).is_dir() else []
    if records:
        typer.echo(
            f"  wrote {len(records)} retrieval record(s) in {out / RETRIEVALS_DIR}/ (a replay compares with them)"
        )
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
    typer.echo(f"local cache   {stats['cache_dir']}: {stats['entries']:,} entries, {_human_bytes(stats['size_bytes'])}")
    for name, count in sorted(stats["subsets"].items()):
        typer.echo(f"subset        cache/{name}: {count:,} entries")
    last = stats["last_run"]
    if last is None:
        typer.echo("last run      none recorded in this cache")
        return
    # A gateway serve or a judge-probe records no arm or slice: said as such, not "arm None, slice None".
    what = ", ".join(f"{key} {last[key]}" for key in ("arm", "slice") if last.get(key) is not None)
    typer.echo(
        f"last run      {last['run_id']} ({what or 'no arm or slice: not a benchmark run'}): "
        f"{last['hits']:,} hits, {last['misses']:,} misses, ${last.get('spent_usd', 0.0):.4f} spent"
    )
    for provider, counts in sorted(last.get("by_provider", {}).items()):
        typer.echo(f"  {provider:<10} {counts['hits']:,} hits, {counts['misses']:,} misses")


def _open_local(cache_dir: Path | None, command: str) -> LocalStore:
    local_dir = cache_dir or default_cache_dir()
    if not (local_dir / "cache.db").is_file():
        raise CacheError(f"cache {command}: expected a local call cache at {local_dir}, found none")
    return LocalStore(local_dir)


@cache_app.command("delete")
def delete_command(
    key: str = typer.Argument(..., help="The key of the entry to remove (as an error message names it)."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help=CACHE_DIR_HELP),
) -> None:
    """Remove one entry from the local cache (e.g. a damaged one); the next run records or recomputes it."""
    store = _open_local(cache_dir, "delete")
    try:
        if not store.delete(key):
            raise CacheError(f"cache delete: expected a key the local cache {store.directory} holds, found {key!r}")
    finally:
        store.close()
    typer.echo(f"cache delete: removed {key} from {store.directory}")


@cache_app.command("verify")
def verify_command(
    repair: bool = typer.Option(False, "--repair", help="Remove every damaged entry (the next run re-records it)."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help=CACHE_DIR_HELP),
) -> None:
    """Read back every entry of the local cache and name the damaged ones; exit 1 if any is left in place."""
    store = _open_local(cache_dir, "verify")
    try:
        total, problems = len(store), store.verify()
        for key, problem in problems:
            typer.echo(f"damaged  {key}: {problem.split('; ')[0]}")
            if repair:
                store.delete(key)
    finally:
        store.close()
    if not problems:
        typer.echo(f"cache verify: all {total} entries of {store.directory} read back intact")
        return
    if repair:
        typer.echo(f"cache verify --repair: removed {len(problems)} damaged of {total} entries from {store.directory}")
        return
    typer.echo(f"cache verify: {len(problems)} damaged of {total} entries; remove them with `cache verify --repair`")
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
