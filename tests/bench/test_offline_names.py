""" "offline" names two different things, each spelled once: the stand-in provider's id (`bench.models.cache.
OFFLINE_PROVIDER`, the `offline/` of a model ref) and the zero-key stack's name (`bench.models.stacks.OFFLINE_STACK`).
Whether something is a stand-in or free is asked of its provider (`is_standin`, `is_paid`), never of the spelling:
no code of bench/ or scripts/ compares a string with "offline" (==, !=, in, startswith, ...), and no module of
bench/ spells "offline" outside those two definitions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench.models.cache import OFFLINE_PROVIDER
from bench.models.stacks import OFFLINE_STACK
from bench.vocab import REPO_ROOT

DEFINITIONS = {("bench/models/cache.py", "OFFLINE_PROVIDER"), ("bench/models/stacks.py", "OFFLINE_STACK")}
PREFIX_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix", "split", "partition", "find", "index"}


def _offline(node: ast.AST) -> bool:
    """A string constant that is "offline" or begins an `offline/...` model ref."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split("/")[0] == "offline"


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def string_tests(tree: ast.AST) -> list[int]:
    """Lines that compare something with an "offline" string: ==/!=/in/not in (also against a tuple, list or set of
    strings) and str methods such as startswith("offline/")."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            sides += [e for s in sides if isinstance(s, (ast.Tuple, ast.List, ast.Set)) for e in s.elts]
            if any(_offline(s) for s in sides):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PREFIX_METHODS:
            if any(_offline(a) for a in node.args):
                lines.append(node.lineno)
    return lines


def spellings(tree: ast.AST) -> list[tuple[int, str | None]]:
    """Every "offline" string constant outside docstrings, with the name it is assigned to (None: used in place)."""
    assigned = {
        id(node.value): target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    docstrings = _docstrings(tree)
    return [
        (node.lineno, assigned.get(id(node)))
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == "offline" and id(node) not in docstrings
    ]


def _modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO_ROOT / folder).rglob("*.py"))


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", _modules("bench", "scripts"), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_no_code_compares_a_string_with_offline(path: Path) -> None:
    found = string_tests(_tree(path))
    assert not found, (
        f"{path.relative_to(REPO_ROOT)}: line(s) {found} compare a string with 'offline': ask the provider "
        "(bench.models.provider.is_standin / is_paid) or compare with OFFLINE_PROVIDER / OFFLINE_STACK"
    )


def test_bench_spells_offline_only_in_its_two_definitions() -> None:
    found = {
        (path.relative_to(REPO_ROOT).as_posix(), name)
        for path in _modules("bench")
        for _, name in spellings(_tree(path))
    }
    assert found == DEFINITIONS
    assert OFFLINE_PROVIDER == OFFLINE_STACK == "offline"  # two names for two things; result files hold both strings


def test_the_scan_sees_each_kind_of_string_test() -> None:
    code = """
def f(provider, stack, ref):
    if provider == "offline" or stack in ("paper", "offline") or ref.startswith("offline/"):
        return "offline"
    return "offline" != provider
"""
    tree = ast.parse(code)
    assert sorted(string_tests(tree)) == [3, 3, 3, 5]
    assert sorted(line for line, _ in spellings(tree)) == [3, 3, 4, 5]  # "offline/" is a ref, not a spelling
    assert spellings(ast.parse('OFFLINE = "offline"\n')) == [(1, "OFFLINE")]
