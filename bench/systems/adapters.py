"""Adapters: a third-party memory library wrapped in a small server that speaks the memory protocol.

Each lives in `systems/<name>/` (docs/memory-protocol.md, "Adapters"): `adapter.toml` (the manifest read here), the
server, and for `environment = "venv"` a requirements file that `engram-bench systems install NAME` turns into
`.venvs/<name>/`, so the library's pins never meet the project's. `$ENGRAM_SYSTEMS_DIR` and `$ENGRAM_VENVS_DIR`
point elsewhere (tests, or a researcher's own adapters).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import settings
from bench.errors import ConfigError, SystemFailed
from bench.systems.process import command_words

SYSTEMS_DIR_ENV = settings.SYSTEMS
VENVS_DIR_ENV = settings.VENVS
MANIFEST = "adapter.toml"
ENVIRONMENTS = ("venv", "project")
KEYS = ("description", "library", "store", "environment", "command", "requirements", "python", "roles", "config")
REQUIRED = ("description", "library", "store", "environment", "command")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_VERSION = re.compile(r"3\.[0-9]{1,2}")
INSTALL_TIMEOUT_S = 1800
PYPI_INDEX = "https://pypi.org/simple"  # beside the torch index, for torch's own dependencies (as in the Makefile)


def systems_dir() -> Path:
    return settings.current().systems_dir


def venvs_dir() -> Path:
    return settings.current().venvs_dir


@dataclass(frozen=True)
class Adapter:
    """One `systems/<name>/adapter.toml`, validated."""

    name: str
    folder: Path
    description: str
    library: str
    store: str
    environment: str
    command: tuple[str, ...]
    requirements: str | None
    python_version: str | None = None  # `python = "3.12"`: the venv is built with that interpreter, not the harness's
    roles: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def venv(self) -> Path:
        return venvs_dir() / self.name

    @property
    def python(self) -> Path:
        """The interpreter `{python}` stands for: the adapter's own venv, or the harness's."""
        if self.environment == "project":
            return Path(sys.executable)
        return self.venv / "bin" / "python"

    def installed(self) -> bool:
        return self.environment == "project" or self.python.exists()

    def installed_version(self) -> str | None:
        """The version of `library` installed in the adapter's environment (None: not installed there), so a
        result records what ran, not what the adapter says about itself."""
        if self.environment == "project":
            try:
                return metadata.version(self.library)
            except metadata.PackageNotFoundError:
                return None
        code = f"import importlib.metadata as m; print(m.version({self.library!r}))"
        done = subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, timeout=120, check=False)
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None

    def not_runnable_reason(self) -> str | None:
        """Why the adapter cannot run here (None: it can)."""
        if not self.installed():
            return f"not installed: run `engram-bench systems install {self.name}` (builds {self.venv})"
        return None


def adapter_names(root: Path | None = None) -> list[str]:
    root = root or systems_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())


def load_adapter(name: str, root: Path | None = None) -> Adapter:
    """The adapter `name`; ConfigError naming the manifest and field when it is absent or malformed."""
    root = root or systems_dir()
    folder = root / name
    path = folder / MANIFEST
    if not _NAME.fullmatch(name) or not path.is_file():
        known = ", ".join(adapter_names(root)) or "(none)"
        raise ConfigError(
            f"adapter: expected one of the folders with an {MANIFEST} in {root} ({known}), found {name!r}"
        )
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: expected a TOML manifest, found {exc}") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: {unknown[0]}: unknown key; expected keys among {list(KEYS)}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ConfigError(f"{path}: {missing[0]}: expected a value, found none")
    texts = {key: _text(path, data, key) for key in ("description", "library", "store", "environment")}
    if texts["environment"] not in ENVIRONMENTS:
        raise ConfigError(f"{path}: environment: expected one of {list(ENVIRONMENTS)}, found {texts['environment']!r}")
    requirements = data.get("requirements")
    if texts["environment"] == "venv":
        if not isinstance(requirements, str) or not (folder / requirements).is_file():
            raise ConfigError(
                f"{path}: requirements: expected the name of a requirements file in {folder} "
                f"(environment = 'venv'), found {requirements!r}"
            )
    python_version = _python_version(path, data, texts["environment"])
    roles = data.get("roles", [])
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise ConfigError(f"{path}: roles: expected a list of role names, found {roles!r}")
    config = data.get("config", {})
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: config: expected a table, found {config!r}")
    return Adapter(
        name=name,
        folder=folder,
        command=tuple(command_words(data["command"], f"{path}: command")),
        requirements=requirements if isinstance(requirements, str) else None,
        python_version=python_version,
        roles=tuple(roles),
        config=config,
        **texts,
    )


def _text(path: Path, data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: {key}: expected a non-empty string, found {value!r}")
    return value


def _python_version(path: Path, data: dict[str, Any], environment: str) -> str | None:
    """The manifest's `python` ("3.12"), for a library that needs another Python than the harness's own."""
    value = data.get("python")
    if value is None:
        return None
    if environment != "venv":
        raise ConfigError(f"{path}: python: only an adapter with environment = 'venv' can choose its interpreter")
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        raise ConfigError(f'{path}: python: expected a Python version such as "3.12", found {value!r}')
    return value


def find_interpreter(version: str) -> str:
    """A working `python<version>`: the harness's own when it is that version, else one on PATH, else pyenv's newest
    matching build ($PYENV_ROOT, default ~/.pyenv). Each candidate is asked its version, because a pyenv shim on PATH
    exists whether or not it can run that version. SystemFailed in one line when none is found."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    builds = sorted(pyenv.glob(f"{version}.*/bin/python{version}"), key=_build_order, reverse=True)
    on_path = shutil.which(f"python{version}")
    for candidate in [*([on_path] if on_path else []), *map(str, builds)]:
        real = _runs_as(candidate, version)
        if real is not None:
            return real
    raise SystemFailed(
        f"python: the adapter needs Python {version}, found no working python{version} on PATH nor under {pyenv}; "
        f"install one (e.g. `pyenv install {version}`)"
    )


def _build_order(path: Path) -> tuple[int, ...]:
    """3.12.10 after 3.12.9 (a plain string sort puts it first)."""
    return tuple(int(part) if part.isdigit() else -1 for part in path.parent.parent.name.split("."))


def _runs_as(candidate: str, version: str) -> str | None:
    """The real interpreter behind `candidate` if it runs and is `version` (None otherwise)."""
    code = "import sys; print(f'{sys.version_info.major}.{sys.version_info.minor}', sys.executable)"
    try:
        done = subprocess.run([candidate, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    said = done.stdout.split(maxsplit=1) if done.returncode == 0 else []
    return said[1].strip() if len(said) == 2 and said[0] == version else None


def install(adapter: Adapter, *, python: str | None = None) -> Path:
    """Build `.venvs/<name>/` from the adapter's requirements file; the venv is built beside its final place and
    renamed into it only when pip succeeded, so a failed install leaves no half-built environment behind."""
    if adapter.environment == "project":
        return Path(sys.executable)
    assert adapter.requirements is not None
    if python is None and adapter.python_version is not None:
        try:  # before anything is built: a missing interpreter leaves everything as it was
            python = find_interpreter(adapter.python_version)
        except SystemFailed as exc:
            raise SystemFailed(f"adapter {adapter.name!r}: {adapter.folder / MANIFEST}: {exc}") from None
    target = adapter.venv
    building = target.with_name(f".{target.name}.building")
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove(building)
    requirements = adapter.folder / adapter.requirements
    pip = [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _step(adapter, building, [python or sys.executable, "-m", "venv", str(building)])
    torch = cpu_torch_pin(requirements)
    if torch is not None:
        _install_cpu_torch(adapter, building, pip, torch)
    _step(adapter, building, [*pip, "-r", str(requirements)])
    _remove(target)
    building.rename(target)
    # A venv records its own absolute path in its scripts; the rename leaves bin/python (a symlink) working, and
    # the adapter is always started as `{python} server.py`, never through a console script.
    return target


def cpu_torch_pin(requirements: Path) -> str | None:
    """The `torch==X+cpu` line of a requirements file, if any. PyPI's Linux torch is the CUDA build (several GB of
    nvidia wheels), so the CPU build is installed first, from where it can be found (`_install_cpu_torch`)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        if re.fullmatch(r"torch==[0-9][0-9.]*\+cpu", line.strip()):
            return line.strip()
    return None


def _install_cpu_torch(adapter: Adapter, building: Path, pip: list[str], torch: str) -> None:
    """torch's CPU build first, as the Makefile does: from PyTorch's CPU index when it answers, else from pip's own
    configuration (an index or find-links folder; machines of this project's kind keep the wheel on disk)."""
    index = settings.current().torch_index
    if _answers(index):
        _step(adapter, building, [*pip, "--index-url", index, "--extra-index-url", PYPI_INDEX, torch])
        return
    done = subprocess.run([*pip, torch], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        _remove(building)
        raise SystemFailed(
            f"adapter {adapter.name!r}: {torch} (the CPU build its requirements pin) is neither at {index} (no "
            f"answer) nor in pip's configured index or find-links; set {settings.TORCH_INDEX} to an index that has "
            f"it, or put its wheel in a folder named by PIP_FIND_LINKS"
        )


def _answers(index: str) -> bool:
    try:
        with urllib.request.urlopen(f"{index.rstrip('/')}/torch/", timeout=10):
            return True
    except (OSError, ValueError):
        return False


def _step(adapter: Adapter, building: Path, argv: list[str]) -> None:
    """One install command; on failure the half-built environment goes and the error is one line."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        _remove(building)
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemFailed(f"adapter {adapter.name!r}: install step `{' '.join(argv[:4])} ...` failed: {last}")


def _remove(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
