"""The field's published per-question result files (data/peer-files.toml) and where each one is found.

Each entry names a real file its producer published (repository, path, commit, sha256, licence, what the producer
states of it). A file whose licence allows it is shipped in this repository at `shipped_as` (a path under data/,
listed in data/SOURCES.md with its notice beside it); a file that may not ship stays where each machine keeps its own
copy, `<peer root>/<repo>/<path>` (the peer root: $ENGRAM_PEER_FILES, default ~/.cache/engram-bench/peer-files). A
shipped file is always read from the repository, so a fresh clone holds every file that may be shipped.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.data.files import data_dir
from bench.errors import DataError

MANIFEST = "peer-files.toml"
_REQUIRED = ("repo", "path", "commit", "sha256", "licence", "shippable", "format", "system", "stated")


@dataclass(frozen=True)
class PeerFile:
    """One published file as the manifest names it."""

    repo: str
    path: str
    commit: str
    sha256: str
    licence: str
    shippable: bool
    shipped_as: str | None  # the path under data/ when it is shipped
    benchmark: str  # the benchmark the file answers ("locomo" unless the manifest says otherwise)
    format: str
    system: str
    stated: dict[str, Any]

    @property
    def source(self) -> str:
        """'<repo>@<commit, 10 digits>:<path>', the name a table row gives its source."""
        return f"{self.repo}@{self.commit[:10]}:{self.path}"

    @property
    def refused(self) -> bool:
        """The producer's file that the readers refuse on purpose (no judgments in it): no run to show."""
        return "refused" in self.stated


def peer_files() -> list[PeerFile]:
    """Every entry of data/peer-files.toml, each checked for the fields the readers and tests use."""
    manifest = data_dir() / MANIFEST
    try:
        entries = tomllib.loads(manifest.read_text(encoding="utf-8"))["file"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise DataError(f"{manifest}: expected a TOML list of [[file]] entries; found {type(exc).__name__}") from None
    return [_entry(manifest, position, entry) for position, entry in enumerate(entries)]


def _entry(manifest: Path, position: int, entry: dict[str, Any]) -> PeerFile:
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise DataError(f"{manifest}: file entry {position + 1}: expected field {missing[0]!r}; found none")
    shipped_as = entry.get("shipped_as")
    if bool(shipped_as) != entry["shippable"]:
        raise DataError(
            f"{manifest}: file entry {position + 1} ({entry['path']}): expected shipped_as exactly when shippable is "
            f"true; found shippable = {str(entry['shippable']).lower()}, shipped_as = {shipped_as!r}"
        )
    benchmark = entry.get("benchmark", "locomo")
    return PeerFile(**{key: entry[key] for key in _REQUIRED}, shipped_as=shipped_as, benchmark=benchmark)


def default_peer_root() -> Path:
    """Where the files that may not ship are looked for: $ENGRAM_PEER_FILES, else the user's cache folder."""
    told = os.environ.get("ENGRAM_PEER_FILES")
    return Path(told) if told else Path.home() / ".cache" / "engram-bench" / "peer-files"


def location(entry: PeerFile, peer_root: Path | None) -> Path | None:
    """The shipped copy of a shippable file; else `<peer_root>/<repo>/<path>` when peer_root is given. Where the file
    should be, present or not; None when a file that may not ship is not looked for."""
    if entry.shipped_as:
        return data_dir() / entry.shipped_as
    return None if peer_root is None else peer_root / entry.repo / entry.path


def is_the_named_file(path: Path, entry: PeerFile) -> bool:
    """The file is there and has the sha256 the manifest names."""
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == entry.sha256
