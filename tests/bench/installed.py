"""Helpers for tests of parts that installed packages add: "install" a package folder the way pip leaves it, and
run the CLI in a subprocess that sees it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from bench.vocab import REPO_ROOT


def install_package(folder: Path, site: Path) -> None:
    """What `pip install folder` leaves in site-packages, from the folder's pyproject.toml: its modules or packages
    (with their files) and a dist-info with METADATA and entry_points.txt (no network, no build backend)."""
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())
    project, setuptools = pyproject["project"], pyproject["tool"]["setuptools"]
    site.mkdir(exist_ok=True)
    for module in setuptools.get("py-modules", []):
        shutil.copy(folder / f"{module}.py", site / f"{module}.py")
    for package in setuptools.get("packages", []):
        shutil.copytree(folder / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in project["entry-points"].items()
    )
    (info / "entry_points.txt").write_text(groups)


def bench_cli(
    args: list[str], site: Path, tmp_path: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m bench ARGS` from the checkout with `site` on PYTHONPATH, runs and caches under tmp_path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(site)]),
        "ENGRAM_RUNS_DIR": str(tmp_path / "runs"),
        "ENGRAM_CACHE_DIR": str(tmp_path / "cache"),
        **(extra_env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600
    )
