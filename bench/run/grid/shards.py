"""Cache shards: every grid worker records into its own diskcache; the driver merges each into the local cache.

Why: the local cache is one SQLite file, and workers on other machines cannot reach it at all. A unit's worker
reads the shipped subsets and the driver's cache (when it is on the same machine) and writes only to its shard,
`<shard root>/<unit id>/cache/`. A unit that dies is retried on the same shard, so everything it already recorded
replays and no paid call is made twice. After each unit the driver adds the shard's entries to the local cache
with diskcache's `add` (set-if-absent, in transactions): no entry is lost, and a key present in both keeps the one
entry the cache already had, so duplicates are identical by key.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from bench.models.cache import CacheEntry, LocalStore, parse_entry

SHARD_CACHE = "cache"
SHARD_LOCK = ".shard.lock"


def shard_cache(shard_dir: Path) -> Path:
    return Path(shard_dir) / SHARD_CACHE


def shard_lock(shard_dir: Path) -> FileLock:
    """One writer per shard: a retried attempt waits for a dying one (an OS lock: freed when its holder dies)."""
    Path(shard_dir).mkdir(parents=True, exist_ok=True)
    return FileLock(Path(shard_dir) / SHARD_LOCK)


def shard_entries(shard_dir: Path) -> Iterator[CacheEntry]:
    """Every entry a shard holds, each verified (a damaged one is a CacheError naming its key)."""
    folder = shard_cache(shard_dir)
    if not folder.is_dir():
        return iter(())
    store = LocalStore(folder)
    try:
        entries = [e for e in (store.get(key) for key in store.keys()) if e is not None]
    finally:
        store.close()
    return iter(entries)


def shard_texts(shard_dir: Path) -> list[str]:
    """A shard's entries as canonical JSON texts: what a worker on another machine sends back to the driver."""
    return [entry.to_json_text() for entry in shard_entries(shard_dir)]


def entries_from_texts(texts: Iterable[str]) -> Iterator[CacheEntry]:
    for text in texts:
        key = str(json.loads(text)["key"])
        yield parse_entry(text, key=key, where="a grid worker's shard")


@dataclass(frozen=True)
class Merged:
    entries: int  # entries the shard held
    added: int  # of them, new to the local cache


def merge_entries(entries: Iterable[CacheEntry], local_cache: Path) -> Merged:
    """Add entries to the local cache (set-if-absent, one transaction per chunk)."""
    batch = list(entries)
    store = LocalStore(local_cache)
    try:
        before = len(store)
        store.add_many(batch)
        added = len(store) - before
    finally:
        store.close()
    return Merged(entries=len(batch), added=added)


def merge_shard(shard_dir: Path, local_cache: Path, *, remove: bool = True) -> Merged:
    """Merge a shard on this machine into the local cache, then (by default) delete it."""
    merged = merge_entries(shard_entries(shard_dir), local_cache)
    if remove:
        shutil.rmtree(shard_cache(shard_dir), ignore_errors=True)
    return merged
