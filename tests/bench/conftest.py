"""Fixtures shared by the harness tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def tagged_repo(tmp_path: Path) -> Path:
    """A one-commit repository whose HEAD is tag `frozen-v1`, clean: what a held-out run needs to start."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "test@example.invalid")
    _git(repo, "config", "user.name", "test")
    (repo / "engram.py").write_text("FROZEN = True\n")
    _git(repo, "add", "engram.py")
    _git(repo, "commit", "-qm", "frozen configuration")
    _git(repo, "tag", "frozen-v1")
    return repo
