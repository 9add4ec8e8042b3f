"""Files the tools write are atomic, durable, and get the permissions the user's umask asks for."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.disk import atomic
from bench.disk.atomic import current_umask, write_json, write_text
from bench.disk.writable import check_file
from bench.errors import PathError


@pytest.fixture(params=[0o022, 0o002, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_mode_the_umask_gives_any_new_file(tmp_path: Path, umask: int) -> None:
    written = write_json(tmp_path / "results" / "r.json", {"a": 1})
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what the user's shell tools would create
    assert mode_of(written) == mode_of(plain) == 0o666 & ~umask
    assert current_umask() == umask


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    path = write_text(tmp_path / "shared.md", "first")
    path.chmod(0o640)
    write_text(path, "second")
    assert path.read_text() == "second" and mode_of(path) == 0o640


def test_the_folder_is_fsynced_after_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    write_text(tmp_path / "a.txt", "durable")
    assert synced == ["file", "dir"]


def test_no_temporary_file_is_left_behind_when_a_write_fails(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        write_json(tmp_path / "bad.json", {"not json": object()})
    assert list(tmp_path.iterdir()) == []


def test_a_device_named_as_the_output_is_refused_and_survives(tmp_path: Path) -> None:
    # A device node of our own making (never the real /dev/null): as root, renaming a file over it would replace the
    # device with an ordinary file, which is what `schema --out /dev/null` once did to the machine running the suite.
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(PathError, match="expected a regular file to replace, found a character device"):
        write_text(device, "schema")
    assert stat.S_ISCHR(device.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]  # no temporary left beside it


def test_a_fifo_named_as_the_output_is_refused_before_any_work(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(PathError, match="found a FIFO"):
        check_file(fifo, "schema --out")
    with pytest.raises(PathError, match="found a FIFO"):
        write_json(fifo, {"a": 1})
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_symlink_to_a_regular_file_is_accepted_as_the_output(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert check_file(link, "view --out") == link
