"""The paper build reads in one direction: inputs -> numbers/tables/figures -> paper -> build -> appendix, check.

No module of bench.report imports, even lazily or for annotations only, a module that imports it back, so each
can be read (and changed) knowing only what lies below it.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import bench.report

REPORT = Path(bench.report.__path__[0])


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPORT.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def report_imports() -> dict[str, set[str]]:
    """Every bench.report module -> the bench.report modules it imports anywhere in its text."""
    modules = {_module_name(p): p for p in REPORT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        graph[name] = {m for m in found if m in modules and m != name and m != "bench.report"}
    return graph


def test_the_report_package_has_no_import_circle() -> None:
    graph = report_imports()
    assert "bench.report.build" in graph and graph["bench.report.build"]  # the scan sees real imports
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle


def test_the_building_blocks_do_not_reach_up_to_the_build() -> None:
    graph = report_imports()
    for low in ("paper", "article", "index", "inputs", "numbers", "tables", "figures"):
        assert "bench.report.build" not in graph[f"bench.report.{low}"], low
