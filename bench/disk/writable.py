"""Where the harness writes, checked before any work; a write the disk refuses, named in one line.

A folder is checked by creating (and at once removing) a probe file in it, or in its nearest existing parent when it
does not exist yet: permission bits alone would lie for root, who may write a 0555 folder, and say nothing about a
read-only file system. Nothing is created by a check that fails.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import tempfile
from pathlib import Path

from bench.errors import PathError, WriteFailed

# OSError numbers that mean "this place cannot take the write", as opposed to a bug in the caller.
DISK_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EEXIST, errno.EFBIG}
)
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _nearest_existing(path: Path) -> Path:
    """`path` itself, or the closest parent that exists (a file in the way counts as existing)."""
    current = path.absolute()
    while not (current.exists() or current.is_symlink()) and current != current.parent:
        if current.parent.is_file():
            return current.parent
        current = current.parent
    return current


def check_folder(path: str | os.PathLike[str], what: str) -> Path:
    """`path` is a folder this process can write, or could be created as one; PathError naming `what` otherwise."""
    folder = Path(path)
    found = not_a_regular_file(folder)
    if folder.is_file() or found not in (None, "a folder"):  # a FIFO, a device, a symlink loop
        raise PathError(f"{what} {folder}: expected a folder, found {found or 'a file'}")
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        raise PathError(f"{what} {folder}: expected a folder, found the file {existing} in its path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".engram-write-probe.", dir=existing)
    except OSError as exc:
        raise PathError(
            f"{what} {folder}: expected a folder this user can write, found {existing} not writable ({exc.strerror})"
        ) from None
    os.close(fd)
    os.unlink(probe)
    return folder


def not_a_regular_file(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file (a device, a FIFO, a socket, a folder), else None.
    An atomic write renames a new file over its target: done over /dev/null as root, that replaces the device with
    an ordinary file, so such a target is refused instead. A symlink is followed: a link to a regular file is fine."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None  # nothing there yet (or a file in its path, which the folder check names)
    except OSError as exc:  # a symlink loop (ELOOP), a name too long...
        return f"a path that cannot be followed ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "something that is not a regular file"


def check_name(name: str, what: str) -> str:
    """`name` as one file name inside the folder it is joined to: no separator, no `..`, nothing hidden or empty,
    so a path built from it never escapes that folder (`--name ../../x` would have)."""
    if not name or name.startswith(".") or any(c in "/\\" or not c.isprintable() for c in name):
        raise PathError(
            f"{what} {name!r}: expected a plain name (no '/' or '\\', no leading '.', no control character)"
        )
    return name


def check_file(path: str | os.PathLike[str], what: str) -> Path:
    """`path` can be written as a file: not a folder or device, in a folder this process can write (or create)."""
    target = Path(path)
    found = not_a_regular_file(target)
    if found is not None:
        raise PathError(f"{what} {target}: expected a file to write, found {found}")
    try:
        check_folder(target.parent, what)
    except PathError as exc:
        raise PathError(f"{what} {target}: cannot be written: {str(exc).split(': ', 1)[1]}") from None
    return target


def disk_refused(exc: OSError, path: str | os.PathLike[str], what: str) -> WriteFailed | None:
    """The one-line error for a write the disk refused (no space, quota, read-only, a file in the way), or None when
    `exc` is some other failure, which the caller lets pass."""
    if exc.errno not in DISK_ERRNOS:
        return None
    reason = exc.strerror or os.strerror(exc.errno or 0)
    hint = "free some space or write elsewhere" if exc.errno in _FULL else "expected a writable folder"
    return WriteFailed(f"{path}: could not write {what} ({reason}); {hint}; the file was not replaced")


def store_write_refused(exc: Exception, store: Path) -> WriteFailed | None:
    """A run's memory store that the disk refused (SQLite says "database or disk is full" and names no file), or
    None for any other failure."""
    if isinstance(exc, OSError):
        return disk_refused(exc, exc.filename or store, "the run's memory store")
    if isinstance(exc, sqlite3.OperationalError) and ("disk is full" in str(exc) or "readonly" in str(exc)):
        return WriteFailed(f"{store}: could not write the run's memory store ({exc}); free some space or use --out")
    return None
