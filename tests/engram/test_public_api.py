"""engram's public surface is pinned: what a user may import, from where, and what it raises.

A change to any list below is a change of the library's API, made on purpose (and recorded in docs/interfaces.md).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import engram
import engram.deciders
import engram.questions
import engram.testing

REPO = Path(__file__).resolve().parents[2]

PINNED = {
    "engram": [
        "LLM",
        "Ask",
        "Completion",
        "Decision",
        "DecisionBackend",
        "DecisionError",
        "Embedder",
        "Engram",
        "EngramError",
        "Escalation",
        "Escalator",
        "ExtractedFact",
        "Extraction",
        "ExtractionContext",
        "Extractor",
        "Fact",
        "FactOutcome",
        "Flags",
        "HygieneReport",
        "InvalidInput",
        "LLMError",
        "Line",
        "MalformedAnswer",
        "Mem0PromptExtractor",
        "Mem0UpdateEscalator",
        "Message",
        "MiniLMEmbedder",
        "MissingInput",
        "Question",
        "RelationDecider",
        "Retrieval",
        "RulesExtractor",
        "Usage",
        "WriteReport",
        "config",
        "decision_from_answer",
        "validate_answer",
    ],
    "engram.deciders": [
        "LLMRelationDecider",
        "LOGPROB_BACKEND",
        "Raw",
        "RulesDecider",
        "RulesUpdateLLM",
        "ScriptedDecider",
        "logprob_decision",
        "logprob_prompt",
    ],
    "engram.testing": ["HashEmbedder"],
}
# Engram's public methods: a batched read (retrieve_many, search_many) was added on purpose for questions asked
# together at a checkpoint.
ENGRAM_METHODS = [
    "add",
    "add_many",
    "close",
    "explain",
    "facts",
    "hygiene",
    "offline",
    "retrieve",
    "retrieve_many",
    "same_as",
    "search",
    "search_many",
    "stats",
]
PUBLIC_MODULES = {"engram", "engram.config", "engram.questions", "engram.deciders", "engram.testing"}


@pytest.mark.parametrize("module", sorted(PINNED))
def test_the_public_names_are_pinned(module):
    assert sorted(importlib.import_module(module).__all__) == sorted(PINNED[module])


def test_the_methods_of_engram_are_pinned():
    assert sorted(n for n in vars(engram.Engram) if not n.startswith("_")) == ENGRAM_METHODS


def test_each_public_name_has_exactly_one_import_path():
    homes: dict[str, list[str]] = {}
    for module in ("engram", "engram.deciders", "engram.questions", "engram.testing"):
        for name in importlib.import_module(module).__all__:
            homes.setdefault(name, []).append(module)
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


def test_every_other_module_is_private():
    found = {m.name for m in pkgutil.walk_packages(engram.__path__, "engram.")}
    public = {name for name in found if not any(part.startswith("_") for part in name.split("."))}
    assert public | {"engram"} == PUBLIC_MODULES


def test_every_exception_engram_defines_is_an_engram_error():
    for name in engram.__all__:
        thing = getattr(engram, name)
        if inspect.isclass(thing) and issubclass(thing, BaseException):
            assert issubclass(thing, engram.EngramError), name
    for branch in (engram.DecisionError, engram.LLMError, engram.MalformedAnswer, engram.MissingInput):
        assert branch.__mro__[1] is engram.EngramError


def test_the_error_tree_in_the_docstring_names_every_exception():
    from engram import _exceptions

    for name, thing in vars(_exceptions).items():
        if inspect.isclass(thing) and issubclass(thing, BaseException) and thing.__module__ == _exceptions.__name__:
            assert name in (_exceptions.__doc__ or ""), f"{name} is missing from the tree in the module docstring"


def test_the_package_says_it_is_typed():
    assert (Path(engram.__file__).parent / "py.typed").is_file()


def _engram_imports(path: Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "engram":
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [a.name for a in node.names if a.name.split(".")[0] == "engram"]
    return modules


def test_the_harness_imports_only_public_names():
    private = {
        f"{path.relative_to(REPO)}: {module}"
        for path in sorted((REPO / "bench").rglob("*.py"))
        for module in _engram_imports(path)
        if module not in PUBLIC_MODULES
    }
    assert private == set()
