"""Every third-party package the code imports is declared in pyproject.toml (and pinned in requirements.lock), so an
install from the README's commands never works only because something else happened to pull it in."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The packages themselves, test modules that import each other by name (pytest puts their folders on sys.path), the
# adapters' helper in systems/ (a test's memory service imports it as the adapters do), and the scripts, which import
# each other's parts by name (Python puts scripts/ on sys.path for a script run from it).
FIRST_PARTY = (
    {"bench", "engram", "tests"}
    | {p.stem for p in (REPO / "tests").rglob("*.py")}
    | {p.stem for p in (REPO / "systems").glob("*.py")}
    | {p.stem for p in (REPO / "scripts").glob("*.py")}
)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(extra: str | None = None) -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {_canonical(re.split(r"[ <>=!~;\[]", spec, maxsplit=1)[0]) for spec in specs}


def _imported_modules(folder: str) -> dict[str, str]:
    """Top-level module -> the first file importing it, for every absolute import under `folder`."""
    found: dict[str, str] = {}
    for path in sorted((REPO / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def _undeclared(folder: str, declared: set[str]) -> list[str]:
    distributions = metadata.packages_distributions()
    problems = []
    for module, where in sorted(_imported_modules(folder).items()):
        if module in sys.stdlib_module_names or module in FIRST_PARTY:
            continue
        owners = {_canonical(d) for d in distributions.get(module, [])}
        if not owners and _canonical(module) not in declared:  # an optional extra that is not installed here
            problems.append(f"{where}: imports {module!r}, which no installed distribution provides")
        elif owners and not owners & declared:
            problems.append(f"{where}: imports {module!r} from {sorted(owners)}, not declared in pyproject.toml")
    return problems


def _locked() -> set[str]:
    lines = (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines()
    return {_canonical(line.split("==")[0]) for line in lines if "==" in line}


def test_the_library_and_harness_declare_every_package_they_import() -> None:
    # The viewer's browser check imports playwright only when asked; the grid imports ray only for --executor ray;
    # the openai provider counts tokens with tiktoken only when it is installed.
    # The run layer's packages are the `run` extra, `export --hf`'s the `hf` extra (the base install is analysis only).
    declared = _declared() | _declared("run") | _declared("hf")
    declared |= _declared("browser") | _declared("ray") | _declared("tiktoken") | _declared("mcp")
    assert _undeclared("engram", declared) + _undeclared("bench", declared) == []


def test_tests_and_scripts_need_only_declared_packages_and_the_test_extra() -> None:
    declared = _declared() | _declared("run") | _declared("hf") | _declared("test")
    declared |= _declared("browser") | _declared("ray") | _declared("mcp")
    assert _undeclared("tests", declared) + _undeclared("scripts", declared) == []


def test_every_declared_package_is_pinned_in_the_lock() -> None:
    unpinned = sorted(
        (
            _declared()
            | _declared("run")
            | _declared("hf")
            | _declared("test")
            | _declared("ray")
            | _declared("local")
            | _declared("mcp")
        )
        - _locked()
    )
    assert unpinned == [], f"requirements.lock: expected a pin for {unpinned}"
