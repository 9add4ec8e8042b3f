"""An import inside a function says why it is there (issue 22, item 2).

A function-local import hides the module's real dependencies from the reader and from import-linter, so one is kept
only for a heavy or optional package that the analysis-only install lacks (or that `engram-bench --help` should not
pay for), or for a part loaded by name on demand. The reason is written as `# local import: <reason>` on the import's
first line or on the line directly above it; a reason above a run of consecutive import statements (blank lines may
separate them, as import sorting does, but nothing else) covers the run. Imports under `if TYPE_CHECKING:` are not run and are not counted.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("bench", "engram")
MARK = "# local import:"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _local_imports(tree: ast.AST, lines: list[str]) -> list[tuple[ast.Import | ast.ImportFrom, int]]:
    """Import statements that run when a function is called rather than when the module is imported, each with the
    first line of the run of consecutive imports it belongs to."""
    found: list[tuple[ast.Import | ast.ImportFrom, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        run_start, previous_end = 0, -1
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for orelse in child.orelse:
                    visit(orelse, in_function)
                continue
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                if previous_end < 0 or any(line.strip() for line in lines[previous_end : child.lineno - 1]):
                    run_start = child.lineno
                previous_end = child.end_lineno or child.lineno
                found.append((child, run_start))
            else:
                previous_end = -1
            visit(child, in_function or isinstance(child, _FUNCTIONS))

    visit(tree, False)
    return found


def _explained(lines: list[str], lineno: int, run_start: int) -> bool:
    """The import's first line, or the line above its run of imports, carries `# local import: <some reason>`."""
    for index in (lineno - 1, run_start - 2):
        if 0 <= index < len(lines) and MARK in lines[index]:
            reason = lines[index].split(MARK, 1)[1].strip()
            if reason:
                return True
    return False


def unexplained_local_imports(path: Path, shown_as: str | None = None) -> list[str]:
    """`file:line: import ...` for each function-local import of one file that gives no reason."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    name = shown_as or str(path)
    return [
        f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}"
        for node, run_start in _local_imports(ast.parse(source, filename=str(path)), lines)
        if not _explained(lines, node.lineno, run_start)
    ]


def _module(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sample.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_bare_import_inside_a_function_is_named_with_its_line(tmp_path: Path) -> None:
    sample = _module(
        tmp_path,
        """
        import json


        def load(text):
            import csv
            return json.loads(text), csv
        """,
    )

    assert unexplained_local_imports(sample, "sample.py") == ["sample.py:6: import csv"]


def test_methods_nested_functions_and_async_bodies_are_all_scanned(tmp_path: Path) -> None:
    sample = _module(
        tmp_path,
        """
        class Shelf:
            def count(self):
                def inner():
                    from collections import Counter
                    return Counter
                return inner


        async def fetch():
            if True:
                from urllib import parse
            return parse


        later = lambda: __import__("os")
        """,
    )

    found = unexplained_local_imports(sample, "s.py")

    assert found == ["s.py:5: from collections import Counter", "s.py:12: from urllib import parse"]


@pytest.mark.parametrize(
    "body",
    [
        "    # local import: torch is in the run extra only\n    import torch\n",
        "    import torch  # local import: torch is in the run extra only\n",
        "    # local import: a plug-in named by the user\n    from mem0 import (\n        Memory,\n    )\n",
    ],
    ids=["reason-above", "reason-on-the-line", "reason-above-a-wrapped-import"],
)
def test_a_reason_in_the_fixed_form_is_accepted(tmp_path: Path, body: str) -> None:
    sample = _module(tmp_path, "")
    sample.write_text("def embed():\n" + body + "    return 1\n", encoding="utf-8")

    assert unexplained_local_imports(sample) == []


@pytest.mark.parametrize(
    "comment",
    ["# lazy", "# local import:", "# local import:   ", "# noqa: PLC0415"],
    ids=["other-wording", "empty-reason", "blank-reason", "lint-suppression"],
)
def test_a_comment_that_gives_no_reason_does_not_count(tmp_path: Path, comment: str) -> None:
    sample = _module(tmp_path, "")
    sample.write_text(f"def embed():\n    {comment}\n    import torch\n    return torch\n", encoding="utf-8")

    assert unexplained_local_imports(sample, "m.py") == ["m.py:3: import torch"]


def test_a_reason_two_lines_above_is_too_far(tmp_path: Path) -> None:
    sample = _module(
        tmp_path,
        """
        def plot():
            # local import: matplotlib is slow to import

            import matplotlib
            return matplotlib
        """,
    )

    assert unexplained_local_imports(sample, "p.py") == ["p.py:5: import matplotlib"]


def test_one_reason_covers_a_run_of_imports_but_not_past_a_gap_or_code(tmp_path: Path) -> None:
    sample = _module(
        tmp_path,
        """
        def chart():
            # local import: the plotting stack is slow to import
            import matplotlib
            from matplotlib import (
                pyplot,
            )

            import numpy
            # (a note that is no reason)
            import pandas
            return matplotlib, pyplot, numpy, pandas


        def table():
            # local import: the plotting stack is slow to import
            import matplotlib
            size = 3
            import pandas
            return matplotlib, pandas, size
        """,
    )

    found = unexplained_local_imports(sample, "c.py")

    assert found == ["c.py:11: import pandas", "c.py:19: import pandas"]


def test_module_level_and_type_checking_imports_are_not_local(tmp_path: Path) -> None:
    sample = _module(
        tmp_path,
        """
        from typing import TYPE_CHECKING
        try:
            import tomllib
        except ImportError:
            tomllib = None
        if TYPE_CHECKING:
            import decimal


        def typed():
            if TYPE_CHECKING:
                from fractions import Fraction
            return 1
        """,
    )

    assert unexplained_local_imports(sample) == []


def test_every_function_local_import_in_bench_and_engram_says_why() -> None:
    files = sorted(path for package in SCANNED for path in (REPO / package).rglob("*.py"))
    assert len(files) > 50  # the scan found the packages

    unexplained = [line for path in files for line in unexplained_local_imports(path, str(path.relative_to(REPO)))]

    assert not unexplained, (
        f"{len(unexplained)} function-local imports without `{MARK} <reason>` (move each to the top of its module,"
        " or state the heavy/optional package or the plug-in it defers):\n" + "\n".join(unexplained)
    )
