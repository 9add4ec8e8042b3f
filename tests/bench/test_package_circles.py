"""No package of bench has an import circle among its modules, and no two top-level packages of bench import each
other round a circle, not even through imports made only for type checking or inside a function (import-linter's
contracts leave those out): each module can be read knowing only what lies below it. Found circles were models/
(provider <-> gateway, judge, stacks, budget), analysis/ (compare <-> parity), data/ (datasets <-> slices), and at the
top models -> results (atomic writes) -> models (the schema's stacks) and models -> systems (the endpoint's context)
-> models."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _name(path: Path, root: Path = BENCH.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every absolute module name `path` imports anywhere in its text (and each `from X import name` as X.name)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def children_graph(package: Path, root: Path = BENCH.parent) -> dict[str, set[str]]:
    """Each direct child of `package` (a module, or a sub-package with everything in it) -> the children it imports;
    `root` is the folder module names start from."""
    prefix = _name(package / "__init__.py", root)
    modules = {_name(p, root): p for p in package.rglob("*.py")}

    def child(module: str) -> str | None:
        if not module.startswith(prefix + "."):
            return None
        return f"{prefix}.{module[len(prefix) + 1 :].split('.')[0]}"

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = child(name)
        if here is None:
            continue
        edges = graph.setdefault(here, set())
        edges |= {c for m in _imports(path) if m in modules and (c := child(m)) is not None and c != here}
    return graph


PACKAGES = sorted(_name(p) for p in BENCH.rglob("__init__.py") if p.parent != BENCH)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_imports_itself_round_in_a_circle(package: str) -> None:
    graph = children_graph(BENCH.parent / package.replace(".", "/"))
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle


def test_no_two_top_level_packages_of_bench_import_each_other_round_a_circle() -> None:
    graph = children_graph(BENCH)
    assert {"bench.models", "bench.results", "bench.systems", "bench.disk"} <= set(graph)  # the scan sees them
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle


def test_the_scan_sees_a_circle_where_there_is_one(tmp_path: Path) -> None:
    package = tmp_path / "bench" / "loop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from bench.loop.b import g  # local import: for the test\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bench.loop import a\n")
    graph = children_graph(package, root=tmp_path)
    assert graph == {"bench.loop.a": {"bench.loop.b"}, "bench.loop.b": {"bench.loop.a"}}
