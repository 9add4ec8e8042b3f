"""How big is the analysis-only install (issue 34: at most 420 MB), built from this checkout two ways?

1. "pip's default": `python -m venv V && V/bin/pip install -c requirements.lock -e .` (pip, setuptools and every
   package's bytecode compiled at install time);
2. "lean" (`make analysis-env`): `python -m venv --without-pip V`, then the interpreter's own pip installs into it,
   `pip --python V/bin/python install --no-compile -c requirements.lock -e .`: no pip or setuptools inside, and no
   bytecode until a module is first imported. That size is measured as installed and again after `paper check` (v1
   and v3) and a `compare` have run in it with bytecode writing on, which is what the venv weighs once used.

Each venv is built in a fresh temporary folder and deleted afterwards; nothing in the checkout changes. The base
install needs the package registry (or pip's configured wheel folders). Sizes are the sum of file sizes (MB = 10^6
bytes), with the largest top-level entries of site-packages; the ratio is against pip's default, built in the same
run.

    .venv/bin/python scripts/measure_analysis_venv.py [--top 12]

About a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
COMPARED = ("results/offline/dev/engram-jev.json", "results/offline/dev/engram__k20.json")


def megabytes(folder: Path) -> float:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total / 1e6


def site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python3*/site-packages"))


def largest(venv: Path, top: int) -> list[tuple[str, float]]:
    entries = [(p.name, megabytes(p) if p.is_dir() else p.stat().st_size / 1e6) for p in site_packages(venv).iterdir()]
    return sorted(entries, key=lambda entry: -entry[1])[:top]


def run(argv: list[str], env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"measure_analysis_venv: {' '.join(argv[:4])} ... failed ({done.returncode}): {done.stderr[-800:]}")


def base_python() -> str:
    return getattr(sys, "_base_executable", sys.executable)


def build_default(venv: Path) -> None:
    run([base_python(), "-m", "venv", str(venv)])
    run([str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(LOCK), "-e", str(REPO)])


def build_lean(venv: Path) -> None:
    run([base_python(), "-m", "venv", "--without-pip", str(venv)])
    pip = [base_python(), "-m", "pip", "--python", str(venv / "bin" / "python")]
    run([*pip, "install", "--quiet", "--no-compile", "-c", str(LOCK), "-e", str(REPO)])


def use(venv: Path) -> None:
    """The analysis commands a reader runs, with bytecode written as Python does by default."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tool = str(venv / "bin" / "engram-bench")
    run([tool, "paper", "check"], env)
    run([tool, "paper", "check", "--paper", "v3"], env)
    run([tool, "compare", *COMPARED], env)


def cpu_name() -> str:
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")]
    return names[0] if names else "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="site-packages entries listed per venv")
    args = parser.parse_args()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {cpu_name()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="analysis-venv-") as scratch:
        default, lean = Path(scratch) / "default", Path(scratch) / "lean"
        started = time.perf_counter()
        build_default(default)
        default_s = time.perf_counter() - started
        started = time.perf_counter()
        build_lean(lean)
        lean_s = time.perf_counter() - started
        installed = megabytes(lean)
        use(lean)
        rows = [
            ("pip's default (bytecode compiled, pip inside)", megabytes(default), default_s),
            ("lean, as installed (make analysis-env)", installed, lean_s),
            ("lean, after paper check v1+v3 and compare", megabytes(lean), None),
        ]
        anchor = rows[0][1]
        for label, size, seconds in rows:
            took = f", built in {seconds:.0f} s" if seconds is not None else ""
            print(f"  {label:48} {size:6.0f} MB  ({size / anchor:.2f} x pip's default{took})")
        for name, venv in (("pip's default", default), ("lean, used", lean)):
            listed = ", ".join(f"{entry} {size:.0f}" for entry, size in largest(venv, args.top))
            print(f"  largest in {name} (MB): {listed}")


if __name__ == "__main__":
    main()
