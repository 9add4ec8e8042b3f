"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

from bench.disk.writable import disk_refused, not_a_regular_file
from bench.errors import PathError

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where Linux reports it (changing it, even for an instant, would
    race with other threads creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def umask_mode(base: int = 0o666) -> int:
    """The mode a file (0o666) or folder (0o777) created now gets under the user's umask."""
    return base & ~current_umask()


def write_bytes(path: str | os.PathLike[str], data: bytes, what: str | None = None) -> Path:
    """Write `data` to `path` atomically. A new file gets the mode the user's umask gives any new file (mkstemp's
    temporary is private, 0600); a replaced file keeps its mode. The folder is fsynced, so the rename itself
    survives a crash. A disk that refuses the write (no space left, read-only, a file in the way) is one line
    naming the path and `what` was being written (default: its size), with the old file left as it was."""
    try:
        target = _write_bytes(Path(path), data)
    except OSError as exc:
        refused = disk_refused(exc, path, what or f"{len(data):,} bytes")
        if refused is None:
            raise
        raise refused from None
    written.append(target)
    return target


# Every file written through this module, in order: an interrupted command names what it kept (bench.cli.program).
written: list[Path] = []


def _write_bytes(target: Path, data: bytes) -> Path:
    found = not_a_regular_file(target)
    if found is not None:  # renaming over a device as root would replace it with an ordinary file
        raise PathError(f"{target}: expected a regular file to replace, found {found}; nothing was written")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = umask_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_directory(target.parent)
    return target


def fsync_directory(folder: Path) -> None:
    """Make a rename or a new entry in `folder` durable (POSIX: the folder's own metadata must be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # a platform that cannot open folders (Windows) has nothing to sync here
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a folder; the file itself was synced
    finally:
        os.close(fd)


def write_text(path: str | os.PathLike[str], text: str, what: str | None = None) -> Path:
    return write_bytes(path, text.encode("utf-8"), what)


def dumps_json(value: Any) -> str:
    """The one JSON layout for files we commit: sorted keys, two-space indent, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(path: str | os.PathLike[str], value: Any, what: str | None = None) -> Path:
    return write_text(path, dumps_json(value), what)
