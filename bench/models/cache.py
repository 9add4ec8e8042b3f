"""The call cache: request keys, checksummed entries, the local diskcache store and shipped subsets.

Why each choice:
- The key is the SHA-256 of canonical JSON of what identifies the call (provider, endpoint, model, the body as sent,
  replicate index). Headers, API keys, wall-clock values and request ids are never part of it, and non-JSON values
  (datetimes, objects) are refused instead of being stringified, so a `repr` with a memory address can never leak
  into a key and make it unrepeatable.
- Entries are stored as canonical JSON text with a checksum over everything else in the entry, so a damaged entry is
  reported (with its key and file) instead of being served.
- The local store is a `diskcache.Cache` with eviction turned off (entries never expire) and written only with
  `add()` (set-if-absent: the first writer wins), which is atomic across threads and processes.
- Shipped subsets are sorted JSON lines plus a manifest holding the entry count and the file's sha256: reviewable in
  git, byte-identical when re-exported from the same run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import diskcache

from bench.disk.atomic import write_json, write_text
from bench.disk.writable import check_folder, disk_refused
from bench.errors import CacheError, CorruptEntry, WriteFailed
from bench.vocab import CACHE_DIR, LOCAL_CACHE_NAME

ENTRY_FORMAT = 1
SUBSET_FORMAT = "engram-bench-call-subset/1"
SUBSET_ENTRIES_FILE = "calls.jsonl"
SUBSET_MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class LiveResponse:
    """What a live function returns. Unset cost is priced from the stack files (`bench.models.stacks.price_for`); unset latency is measured
    by the gateway around the live call."""

    body: Any
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None  # as the provider returned it
    cost_usd: float | None = None
    latency_ms: float | None = None


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no whitespace, no NaN, and no silent str() of unknown types."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


ENDPOINT_CALLER = "endpoint"
# The built-in stand-in provider's id (bench/models/providers/offline/, registered under it; the `offline/` of a model
# ref): the stand-ins tag the calls they put through the gateway with it. Not the zero-key stack's name, which is
# spelled the same (bench.models.stacks.OFFLINE_STACK). What a provider *is* (a stand-in, paid) is asked of its
# registered class (`bench.models.provider.is_standin`), never of this name.
OFFLINE_PROVIDER = "offline"


@dataclass(frozen=True)
class CallRequest:
    """One model call as it will be sent. `purpose` (the role) is recorded but is not part of the key, so the
    same prompt asked for two roles is one call."""

    provider: str  # "anthropic" | "jev" | "openai" | "offline"
    endpoint: str  # "messages" | "chat.completions" | "count_tokens" | "systemone" | "decide" | "extract" ...
    model: str
    body: Mapping[str, Any]  # the full request body as sent, every sampling parameter included
    purpose: str
    replicate: int = 0
    # Which server answers, for providers whose one name covers many servers (openai: OpenAI, vLLM, ollama...):
    # scheme://host:port/path of the base URL, never a key. Empty for the others, whose keys stay as they were.
    target: str = ""
    # Who asked, recorded but never keyed (like `purpose`): "" for the harness's own code, ENDPOINT_CALLER for a
    # foreign system's call through the gateway endpoint, whose prompts and reply formats are that system's own.
    caller: str = ""

    def key_material(self) -> dict[str, Any]:
        material = {
            "provider": self.provider,
            "endpoint": self.endpoint,
            "model": self.model,
            "body": self.body,
            "replicate": self.replicate,
        }
        if self.target:
            material["target"] = self.target
        return material

    def key(self) -> str:
        # Computed once per request: the tap, the lookup and the recording each ask for it, and a full-context
        # prompt is a whole transcript to serialise and hash. A request is frozen, so its key cannot change; it is
        # kept in the instance's own dict, as functools.cached_property would keep it, but without that property's
        # lock, which Python 3.11 shares between all requests (threads hashing transcripts waited on each other).
        key: str | None = self.__dict__.get("_key")
        if key is None:
            key = self.__dict__["_key"] = self._computed_key()
        return key

    def _computed_key(self) -> str:
        try:
            return sha256_hex(canonical_json(self.key_material()))
        except (TypeError, ValueError) as exc:
            raise CacheError(
                f"request body for {self.provider}/{self.endpoint} ({self.purpose}): expected plain JSON values "
                f"(str, number, bool, null, list, dict), found {exc}"
            ) from exc


@dataclass(frozen=True)
class CacheEntry:
    """What one call returned, as recorded: never the request's headers or keys."""

    key: str
    provider: str
    endpoint: str
    model: str  # the model as the provider returned it
    purpose: str  # the role of the call that first recorded it
    replicate: int
    body: Any  # the response body
    input_tokens: int
    output_tokens: int
    cost_usd: float  # nominal cost of the call when it was made
    latency_ms: float  # recorded latency: what the live call measured
    recorded_at: str  # ISO timestamp of the recording (metadata only, never part of a key)
    format: int = ENTRY_FORMAT
    checksum: str = field(default="")

    def content(self) -> dict[str, Any]:
        # A shallow read of the fields: dataclasses.asdict would deep-copy the response body on every lookup.
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "checksum"}

    def computed_checksum(self) -> str:
        return sha256_hex(canonical_json(self.content()))

    def sealed(self) -> CacheEntry:
        return CacheEntry(**{**self.content(), "checksum": self.computed_checksum()})

    def to_json_text(self) -> str:
        return canonical_json({**self.content(), "checksum": self.checksum or self.computed_checksum()})


# How a damaged entry of the local cache is fixed (a shipped subset's is fixed by exporting the subset again).
REPAIR_HINT = (
    "remove it with `engram-bench cache delete KEY` (or `cache verify --repair`) or re-record it (--mode record)"
)
SUBSET_HINT = "export the subset again (`engram-bench cache export`)"


def parse_entry(text: str, *, key: str, where: str | Callable[[], str], hint: str = REPAIR_HINT) -> CacheEntry:
    """Read and verify one stored entry; any damage is a `CacheError` naming the key and where it lives
    (`where` may be a function: locating an entry costs a query, so it is only done when something is wrong)."""
    try:
        data = json.loads(text)
        entry = CacheEntry(**data)
    except (TypeError, ValueError) as exc:
        raise CorruptEntry(f"{_place(where)}: entry {key} is not a valid cache entry ({exc}); {hint}") from exc
    if entry.key != key:
        raise CorruptEntry(f"{_place(where)}: entry stored under {key} says its key is {entry.key}; {hint}")
    if entry.checksum != entry.computed_checksum():
        raise CorruptEntry(f"{_place(where)}: entry {key} fails its checksum (corrupt); {hint}")
    return entry


def _place(where: str | Callable[[], str]) -> str:
    return where if isinstance(where, str) else where()


def _damage_reported(method: Callable[..., Any]) -> Callable[..., Any]:
    """A damaged cache.db (a torn page, a file that is not a database) stops the run with one line naming the file
    and how to rebuild it, instead of an sqlite traceback. A busy database is not damage: that error passes on."""

    @functools.wraps(method)
    def guarded(self: LocalStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:  # diskcache writes a large value to its own file
            refused = disk_refused(exc, exc.filename or self.directory, "a call cache entry")
            if refused is None:
                raise
            raise refused from None
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            if isinstance(exc, sqlite3.OperationalError) and ("full" in str(exc) or "readonly" in str(exc)):
                raise WriteFailed(
                    f"{self.database}: could not write a call cache entry ({exc}); free some space or set "
                    f"$ENGRAM_CACHE_DIR to a writable folder; entries already stored are kept"
                ) from None
            raise CacheError(
                f"{self.database}: the local call cache is damaged ({exc}); expected a readable SQLite database. "
                f"Rebuild it by moving {self.directory} aside: stand-in calls are recomputed, paid calls replay "
                f"from the shipped subsets or are sent again"
            ) from None

    return guarded


class LocalStore:
    """The read-write diskcache under `cache/local/` (or $ENGRAM_CACHE_DIR). Safe for concurrent processes."""

    @_damage_reported
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        check_folder(self.directory, "local call cache ($ENGRAM_CACHE_DIR or cache/local/)")
        self.directory.mkdir(parents=True, exist_ok=True)
        # eviction_policy "none": diskcache's default culls least-recently-stored entries past 1 GB, which would
        # silently drop paid calls. Entries here never expire and are never culled.
        self._cache = diskcache.Cache(str(self.directory), eviction_policy="none", cull_limit=0)

    @property
    def database(self) -> Path:
        return self.directory / "cache.db"

    def _where(self, key: str) -> str:
        """The file that holds a key's value: a separate file for large values, else the SQLite database."""
        try:
            row = self._cache._sql("SELECT filename FROM Cache WHERE key = ? AND raw = 1", (key,)).fetchone()
        except Exception:  # the location is for the error message only; never mask the original problem
            row = None
        if row and row[0]:
            return str(self.directory / row[0])
        return str(self.database)

    @_damage_reported
    def get(self, key: str) -> CacheEntry | None:
        text = self._cache.get(key, default=None, retry=True)
        if text is None:
            return None
        if not isinstance(text, str):
            raise CorruptEntry(f"{self._where(key)}: entry {key} is not JSON text; {REPAIR_HINT}")
        return parse_entry(text, key=key, where=lambda: self._where(key))

    @_damage_reported
    def add(self, entry: CacheEntry) -> CacheEntry:
        """Store if absent (atomic; first writer wins) and return the entry the cache now holds."""
        sealed = entry.sealed()
        if self._cache.add(sealed.key, sealed.to_json_text(), retry=True):
            return sealed
        try:
            stored = self.get(sealed.key)
        except CorruptEntry:  # a re-recorded call replaces the damaged entry it was looked up past (record mode)
            self._cache.set(sealed.key, sealed.to_json_text(), retry=True)
            return sealed
        return stored if stored is not None else sealed

    @_damage_reported
    def delete(self, key: str) -> bool:
        """Remove one entry (`cache delete KEY`); False when the cache does not hold it."""
        return bool(self._cache.delete(key, retry=True))

    def verify(self) -> list[tuple[str, str]]:
        """(key, problem) for every entry that does not read back as a valid, checksummed cache entry."""
        problems: list[tuple[str, str]] = []
        for key in self.keys():
            try:
                self.get(key)
            except CorruptEntry as exc:
                problems.append((key, str(exc)))
        return problems

    def add_many(self, entries: Iterable[CacheEntry], chunk: int = 1000) -> None:
        """`add()` for many entries, one transaction per chunk (one commit instead of one per entry)."""
        batch: list[CacheEntry] = []
        for entry in entries:
            batch.append(entry.sealed())
            if len(batch) >= chunk:
                self._add_chunk(batch)
                batch = []
        if batch:
            self._add_chunk(batch)

    @_damage_reported
    def _add_chunk(self, batch: list[CacheEntry]) -> None:
        with self._cache.transact(retry=True):
            for entry in batch:
                self._cache.add(entry.key, entry.to_json_text(), retry=True)

    @_damage_reported
    def put_raw(self, key: str, text: str) -> None:
        """Overwrite a value verbatim. For tests that simulate damage and for repairs; never used by the gateway."""
        self._cache.set(key, text, retry=True)

    @_damage_reported
    def keys(self) -> Iterator[str]:
        return iter([k for k in self._cache.iterkeys() if isinstance(k, str)])

    @_damage_reported
    def __len__(self) -> int:
        return len(self._cache)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())

    def close(self) -> None:
        self._cache.close()


@dataclass(frozen=True)
class SubsetManifest:
    format: str
    entries: int
    sha256: str
    file: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ShippedSubset:
    """A committed, read-only subset `cache/<name>/` (sorted JSON lines + manifest).

    Opening checks the manifest, the file's sha256 and its number of entries, and indexes each line by its key; an
    entry is parsed and checked against its own checksum when it is first read. A run reads a few entries of each
    subset (none, for a run whose calls no subset holds), and parsing and checksumming every entry of every subset
    at start-up cost seconds per run once a subset held tens of thousands of calls."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.name = self.directory.name
        manifest_path = self.directory / SUBSET_MANIFEST_FILE
        try:
            manifest = SubsetManifest(**json.loads(manifest_path.read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise CacheError(f"{manifest_path}: expected a subset manifest, found no file") from exc
        except (TypeError, ValueError) as exc:
            raise CacheError(f"{manifest_path}: expected a subset manifest, found unreadable JSON ({exc})") from exc
        entries_path = self.directory / manifest.file
        try:
            raw = entries_path.read_bytes()
        except FileNotFoundError as exc:
            raise CacheError(f"{entries_path}: the manifest names this file but it does not exist") from exc
        digest = hashlib.sha256(raw).hexdigest()
        if digest != manifest.sha256:
            raise CacheError(f"{entries_path}: expected sha256 {manifest.sha256} (manifest), found {digest}")
        self._file = str(entries_path)
        self._lines: dict[str, tuple[int, str]] = {}  # key -> (line number, the entry's JSON text)
        for number, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
            self._lines[_line_key(line, where=f"{self._file}:{number}")] = (number, line)
        if len(self._lines) != manifest.entries:
            raise CacheError(f"{manifest_path}: expected {manifest.entries} entries, found {len(self._lines)}")
        self._entries: dict[str, CacheEntry] = {}  # the entries read so far, verified
        self.manifest = manifest

    @classmethod
    def open(cls, directory: Path) -> ShippedSubset:
        """A verified subset, read once per process while its files are unchanged (subsets are read-only, and
        verifying tens of thousands of entries for every gateway a test suite builds would be wasted work)."""
        directory = Path(directory).resolve()
        stamp = tuple(_file_stamp(directory / name) for name in (SUBSET_MANIFEST_FILE, SUBSET_ENTRIES_FILE))
        cached = _OPENED_SUBSETS.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        subset = cls(directory)
        _OPENED_SUBSETS[directory] = (stamp, subset)
        return subset

    def get(self, key: str) -> CacheEntry | None:
        entry = self._entries.get(key)
        if entry is None and key in self._lines:
            number, line = self._lines[key]
            entry = parse_entry(line, key=key, where=f"{self._file}:{number}", hint=SUBSET_HINT)
            self._entries[key] = entry  # two threads reading it at once both verify it and store the same entry
        return entry

    def verify(self) -> None:
        """Read every entry, so a damaged one is reported now rather than when a run first reads it."""
        for key in self._lines:
            self.get(key)

    def __len__(self) -> int:
        return len(self._lines)

    def keys(self) -> Iterable[str]:
        return self._lines.keys()


def _file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


_OPENED_SUBSETS: dict[Path, tuple[tuple[tuple[int, int] | None, ...], ShippedSubset]] = {}


# An exported line is canonical JSON (sorted keys), so the entry's own "key" is the last `"key":"` in it: every
# field after it (latency_ms ... replicate) is a number or a string, and a string's quotes are escaped. A line read
# so is still checked when its entry is read (parse_entry refuses an entry whose key is not the one it is indexed by).
_KEY_FIELD = '"key":"'
_HEX = frozenset("0123456789abcdef")


def _line_key(line: str, *, where: str) -> str:
    at = line.rfind(_KEY_FIELD)
    if at >= 0:
        start = at + len(_KEY_FIELD)
        key = line[start : start + 64]
        if line[start + 64 : start + 65] == '"' and len(key) == 64 and _HEX.issuperset(key):
            return key
    try:
        return str(json.loads(line)["key"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheError(f"{where}: expected one JSON cache entry per line, found {line[:60]!r}") from exc


def discover_subsets(root: Path = CACHE_DIR, exclude: Iterable[Path] = ()) -> list[Path]:
    """Every subfolder of the repo's `cache/` that holds a manifest, except `local/` and the local store."""
    if not root.is_dir():
        return []
    excluded = {Path(p).resolve() for p in exclude}
    found = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name == LOCAL_CACHE_NAME or child.resolve() in excluded:
            continue
        if (child / SUBSET_MANIFEST_FILE).exists() or (child / SUBSET_ENTRIES_FILE).exists():
            found.append(child)
    return found


def write_subset(entries: Iterable[CacheEntry], out_dir: Path, *, source: str) -> SubsetManifest:
    """Write a subset deterministically: one canonical JSON line per entry, sorted by key; then its manifest."""
    by_key = {entry.key: entry for entry in entries}
    lines = [by_key[key].to_json_text() for key in sorted(by_key)]
    text = "".join(line + "\n" for line in lines)
    out_dir = Path(out_dir)
    write_text(out_dir / SUBSET_ENTRIES_FILE, text)
    manifest = SubsetManifest(
        format=SUBSET_FORMAT,
        entries=len(lines),
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        file=SUBSET_ENTRIES_FILE,
        source=source,
    )
    write_json(out_dir / SUBSET_MANIFEST_FILE, manifest.to_json())
    return manifest


def read_keys_file(path: Path) -> list[str]:
    """A run's key list (one sha256 per line), as the gateway writes it in record mode."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise CacheError(f"{path}: expected the run's call-key list, found no file (record the run first)") from exc
    keys = [line.strip() for line in lines if line.strip()]
    for number, key in enumerate(keys, start=1):
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise CacheError(f"{path}:{number}: expected a sha256 hex key, found {key[:70]!r}")
    return keys


def write_keys_file(path: Path, keys: Iterable[str]) -> Path:
    """Sorted and de-duplicated, so two recordings of the same run write the same file."""
    return write_text(path, "".join(f"{key}\n" for key in sorted(set(keys))))


def find_entry(key: str, subsets: Sequence[ShippedSubset], local: LocalStore | None) -> CacheEntry | None:
    """The lookup order every reader uses: shipped subsets first (in order), then the local store."""
    for subset in subsets:
        entry = subset.get(key)
        if entry is not None:
            return entry
    return local.get(key) if local is not None else None


def export_keys(
    keys: Sequence[str], out_dir: Path, *, source: str, subsets: Sequence[ShippedSubset], local: LocalStore | None
) -> SubsetManifest:
    """Write exactly the entries a run read as a shippable subset; refuse if any of them is in no cache."""
    found: list[CacheEntry] = []
    missing: list[str] = []
    for key in keys:
        entry = find_entry(key, subsets, local)
        if entry is None:
            missing.append(key)
        else:
            found.append(entry)
    if missing:
        raise CacheError(
            f"{source}: expected every call the run read to be cached, found {len(missing)} of {len(keys)} missing "
            f"(first {missing[0]}); re-run it in record mode with the same cache"
        )
    return write_subset(found, out_dir, source=source)
