"""Adapters: a third-party memory library wrapped in a small server that speaks the memory protocol.

Each lives in `systems/<name>/` (docs/memory-protocol.md, "Adapters"): `adapter.toml` (the manifest read here), the
server, and for `environment = "venv"` a requirements file that `engram-bench systems install NAME` turns into
`.venvs/<name>/`, so the library's pins never meet the project's (`environment = "npm"`: a package.json and its
package-lock.json, installed there by `npm ci`). An adapter with `protocol = "mcp"` is a third-party MCP server:
its folder only builds the environment, and the arm `arms/<name>.toml` (`system = "mcp"`) runs it from there.
`$ENGRAM_SYSTEMS_DIR` and `$ENGRAM_VENVS_DIR` point elsewhere (tests, or a researcher's own adapters).
"""

from __future__ import annotations

import json
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
from bench.systems.process import command_words, expand, project_python

SYSTEMS_DIR_ENV = settings.SYSTEMS
VENVS_DIR_ENV = settings.VENVS
MANIFEST = "adapter.toml"
ENVIRONMENTS = ("venv", "project", "npm")
PROTOCOLS = ("memory", "mcp")  # memory: the adapter serves docs/memory-protocol.md; mcp: arms/<name>.toml runs it
KEYS = (
    "description",
    "library",
    "store",
    "environment",
    "protocol",
    "command",
    "requirements",
    "python",
    "python_check",
    "setup",
    "roles",
    "config",
)
REQUIRED = ("description", "library", "store", "environment")
NPM_LOCK = "package-lock.json"
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
    python_check: str | None = None  # code the interpreter must run without error (e.g. a feature it needs)
    protocol: str = "memory"
    setup: tuple[str, ...] = ()  # a command run in the new environment once its packages are in
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
        if self.environment == "npm":
            return (self.venv / "node_modules").is_dir()
        return self.environment == "project" or self.python.exists()

    def installed_version(self) -> str | None:
        """The version of `library` installed in the adapter's environment (None: not installed there), so a
        result records what ran, not what the adapter says about itself."""
        if self.environment == "project":
            try:
                return metadata.version(self.library)
            except metadata.PackageNotFoundError:
                return None
        if self.environment == "npm":
            return _npm_version(self.venv / "node_modules" / self.library / "package.json")
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
    protocol = data.get("protocol", "memory")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"{path}: protocol: expected one of {list(PROTOCOLS)}, found {protocol!r}")
    missing = [key for key in (*REQUIRED, *(("command",) if protocol == "memory" else ())) if key not in data]
    if missing:
        raise ConfigError(f"{path}: {missing[0]}: expected a value, found none")
    if protocol == "mcp" and "command" in data:
        raise ConfigError(f"{path}: command: an adapter with protocol = 'mcp' is started by its arm, arms/{name}.toml")
    texts = {key: _text(path, data, key) for key in ("description", "library", "store", "environment")}
    if texts["environment"] not in ENVIRONMENTS:
        raise ConfigError(f"{path}: environment: expected one of {list(ENVIRONMENTS)}, found {texts['environment']!r}")
    requirements = _requirements(path, folder, data, texts["environment"])
    python_version = _python_version(path, data, texts["environment"])
    python_check = data.get("python_check")
    if python_check is not None and (python_version is None or not isinstance(python_check, str)):
        raise ConfigError(
            f"{path}: python_check: expected Python code (a string) beside python, found {python_check!r}"
        )
    setup = data.get("setup")
    if setup is not None and texts["environment"] == "project":
        raise ConfigError(f"{path}: setup: an adapter with environment = 'project' has no environment to set up")
    roles = data.get("roles", [])
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise ConfigError(f"{path}: roles: expected a list of role names, found {roles!r}")
    config = data.get("config", {})
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: config: expected a table, found {config!r}")
    return Adapter(
        name=name,
        folder=folder,
        command=tuple(command_words(data["command"], f"{path}: command")) if "command" in data else (),
        requirements=requirements,
        python_version=python_version,
        python_check=python_check,
        protocol=protocol,
        setup=tuple(command_words(setup, f"{path}: setup")) if setup is not None else (),
        roles=tuple(roles),
        config=config,
        **texts,
    )


def _text(path: Path, data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: {key}: expected a non-empty string, found {value!r}")
    return value


def _requirements(path: Path, folder: Path, data: dict[str, Any], environment: str) -> str | None:
    """The file `systems install` builds from: a requirements file (venv), or a package.json with its
    package-lock.json beside it (npm: `npm ci` installs exactly the lock's versions)."""
    requirements = data.get("requirements")
    if environment == "project":
        return requirements if isinstance(requirements, str) else None
    if not isinstance(requirements, str) or not (folder / requirements).is_file():
        kind = "a requirements file" if environment == "venv" else "a package.json"
        raise ConfigError(
            f"{path}: requirements: expected the name of {kind} in {folder} (environment = '{environment}'), "
            f"found {requirements!r}"
        )
    if environment == "npm" and not (folder / NPM_LOCK).is_file():
        raise ConfigError(
            f"{path}: requirements: expected {NPM_LOCK} beside {requirements} in {folder} (npm ci installs exactly "
            "its versions), found none: run `npm install --package-lock-only` there"
        )
    return requirements


def _npm_version(package_json: Path) -> str | None:
    try:
        version = json.loads(package_json.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


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


def find_interpreter(version: str, check: str | None = None) -> str:
    """A working `python<version>`: the harness's own when it is that version, else one on PATH, else the system's
    (/usr/bin, /usr/local/bin), else pyenv's newest matching build ($PYENV_ROOT, default ~/.pyenv). Each candidate is
    asked its version, because a pyenv shim on PATH exists whether or not it can run that version, and must run
    `check` (the manifest's python_check) when given: pyenv's builds, for one, cannot load SQLite extensions.
    SystemFailed in one line when none is found."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    builds = sorted(pyenv.glob(f"{version}.*/bin/python{version}"), key=_build_order, reverse=True)
    on_path = shutil.which(f"python{version}")
    own = [sys.executable] if f"{sys.version_info.major}.{sys.version_info.minor}" == version else []
    system = [f"{folder}/python{version}" for folder in ("/usr/bin", "/usr/local/bin")]
    for candidate in [*own, *([on_path] if on_path else []), *system, *map(str, builds)]:
        real = _runs_as(candidate, version, check)
        if real is not None:
            return real
    also = f" that runs its python_check ({check})" if check else ""
    raise SystemFailed(
        f"python: the adapter needs Python {version}{also}, found none on PATH, in /usr/bin, /usr/local/bin nor under "
        f"{pyenv}; install one (e.g. `pyenv install {version}`, or the system's python{version})"
    )


def _build_order(path: Path) -> tuple[int, ...]:
    """3.12.10 after 3.12.9 (a plain string sort puts it first)."""
    return tuple(int(part) if part.isdigit() else -1 for part in path.parent.parent.name.split("."))


def _runs_as(candidate: str, version: str, check: str | None = None) -> str | None:
    """The real interpreter behind `candidate` if it runs, is `version` and runs `check` (None otherwise)."""
    code = "import sys; print(f'{sys.version_info.major}.{sys.version_info.minor}', sys.executable)"
    if check:
        code = f"{check}\n{code}"
    try:
        done = subprocess.run([candidate, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    said = done.stdout.split(maxsplit=1) if done.returncode == 0 else []
    return said[1].strip() if len(said) == 2 and said[0] == version else None


def install(adapter: Adapter, *, python: str | None = None) -> Path:
    """Build `.venvs/<name>/` from the adapter's requirements file (or package.json); the environment is built beside
    its final place and renamed into it only when every step succeeded, so a failed install leaves no half-built
    environment behind."""
    if adapter.environment == "project":
        return Path(sys.executable)
    assert adapter.requirements is not None
    if python is None and adapter.python_version is not None:
        try:  # before anything is built: a missing interpreter leaves everything as it was
            python = find_interpreter(adapter.python_version, adapter.python_check)
        except SystemFailed as exc:
            raise SystemFailed(f"adapter {adapter.name!r}: {adapter.folder / MANIFEST}: {exc}") from None
    target = adapter.venv
    building = target.with_name(f".{target.name}.building")
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove(building)
    if adapter.environment == "npm":
        _install_npm(adapter, building)
    else:
        _install_venv(adapter, building, python)
    if adapter.setup:
        # {python}: the new environment's interpreter (the harness's for npm); {project_python}: the harness's, which
        # can read the project's own packages (the shipped MiniLM); {venv}: where the environment is being built
        own = building / "bin" / "python" if adapter.environment == "venv" else Path(project_python())
        values = {
            "python": str(own),
            "project_python": project_python(),
            "dir": str(adapter.folder),
            "venv": str(building),
        }
        _step(adapter, building, expand(adapter.setup, values, f"{adapter.folder / MANIFEST}: setup"))
    _remove(target)
    building.rename(target)
    _repoint_scripts(building, target)
    return target


def _repoint_scripts(building: Path, target: Path) -> None:
    """A venv's console scripts name their interpreter by absolute path (`#!<building>/bin/python`); after the
    rename they point at the final place again, so an MCP server's arm can start `{venvs}/NAME/bin/its-command` as
    a user would. bin/python itself is a symlink to the base interpreter and needs nothing."""
    old, new = f"#!{building}/".encode(), f"#!{target}/".encode()
    for script in (target / "bin").glob("*") if (target / "bin").is_dir() else ():
        if script.is_symlink() or not script.is_file():
            continue
        with script.open("rb") as handle:
            if handle.read(len(old)) != old:
                continue
        script.write_bytes(new + script.read_bytes()[len(old) :])


def _install_venv(adapter: Adapter, building: Path, python: str | None) -> None:
    assert adapter.requirements is not None
    requirements = adapter.folder / adapter.requirements
    pip = [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _step(adapter, building, [python or sys.executable, "-m", "venv", str(building)])
    torch = cpu_torch_pin(requirements)
    if torch is not None:
        _install_cpu_torch(adapter, building, pip, torch)
    _step(adapter, building, [*pip, "-r", str(requirements)])


def _install_npm(adapter: Adapter, building: Path) -> None:
    """`npm ci` in the building folder from the adapter's package.json and package-lock.json: exactly the locked
    versions, from the registry npm is configured with."""
    assert adapter.requirements is not None
    npm = shutil.which("npm")
    if npm is None:
        raise SystemFailed(
            f"adapter {adapter.name!r}: environment = 'npm' needs npm (and node) on PATH, found none; install Node.js"
        )
    building.mkdir(parents=True)
    shutil.copyfile(adapter.folder / adapter.requirements, building / "package.json")
    shutil.copyfile(adapter.folder / NPM_LOCK, building / NPM_LOCK)
    _step(adapter, building, [npm, "ci", "--prefix", str(building), "--no-audit", "--no-fund", "--omit=dev"])


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
