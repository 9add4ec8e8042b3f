"""The harness's public surface is pinned: what a baseline author or an analysis script may import, and where every
error the harness raises is defined.

A change to a list below is a change of the API, made on purpose (and recorded in docs/interfaces.md).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import bench.analysis.stats
import bench.errors
import bench.systems
from bench.errors import BenchError

BENCH = Path(bench.errors.__file__).resolve().parent

PINNED = {
    bench.systems: [
        "SYSTEMS",  # the registry (bench.registry): names, plug-ins from engram_bench.systems
        "AuditFact",
        "RetrievedLines",
        "Setting",
        "System",
        "SystemContext",
        "WriteUsage",
        "build_system",
        "get_system",
        "register_system",
        "system_names",
    ],
    bench.analysis.stats: [
        "ASSUMED_LLM_ERRORS",
        "DEFAULT_DRAWS",
        "DEFAULT_MARGIN",
        "THETAS",
        "Z_95",
        "Z_ONE_SIDED_95",
        "ACCURACY_INTERVAL_NAME",
        "ACCURACY_INTERVAL_NOTE",
        "DIFFERENCE_INTERVAL_METHOD",
        "DIFFERENCE_INTERVAL_NOTE",
        "SMALL_GROUP_N",
        "Adjusted",
        "BootstrapInterval",
        "CalibrationSummary",
        "ConversationBound",
        "DeclaredFamily",
        "Discordance",
        "Interval",
        "NonInferiority",
        "PairedComparison",
        "ProbabilityTable",
        "QuestionSetMismatch",
        "TokenMatch",
        "accuracy",
        "accuracy_interval",
        "brier_scores",
        "calibration_summary",
        "cluster_bootstrap",
        "cluster_bootstrap_draws",
        "compare_by_group",
        "compare_paired",
        "comparison_seed",
        "confidences",
        "conversation_bound",
        "correct",
        "cost_error_curve",
        "cross_fit_probs",
        "discordance",
        "expected_calibration_error",
        "fit_temperature",
        "holm",
        "item_bootstrap",
        "item_bootstrap_draws",
        "jev_alone_error",
        "mcnemar_exact_p",
        "minimum_detectable_effect",
        "nll_scores",
        "noninferiority",
        "noninferiority_from_differences",
        "observed_mde",
        "paired_differences",
        "paired_seed",
        "per_question_ci",
        "percentile_interval",
        "pooled_mean_tokens",
        "probability_matrix",
        "require_same_questions",
        "score_intervals",
        "token_matched_k",
        "wilson_interval",
        "with_temperature",
    ],
}


@pytest.mark.parametrize("module", list(PINNED), ids=lambda m: m.__name__)
def test_the_public_names_are_pinned_and_each_one_exists(module: object) -> None:
    assert sorted(module.__all__) == sorted(PINNED[module])  # type: ignore[attr-defined]
    missing = [name for name in module.__all__ if not hasattr(module, name)]  # type: ignore[attr-defined]
    assert missing == []


def _bench_error_names() -> set[str]:
    return {
        name for name, value in vars(bench.errors).items() if inspect.isclass(value) and issubclass(value, BenchError)
    }


def test_every_error_the_harness_defines_lives_in_bench_errors() -> None:
    """A class in any other bench module that derives from one of the harness's errors is a stray."""
    error_names = _bench_error_names()
    strays = []
    for path in sorted(BENCH.rglob("*.py")):
        if path.name == "errors.py" and path.parent == BENCH:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & error_names:
                    strays.append(f"{path.relative_to(BENCH.parent)}:{node.lineno} {node.name}")
    assert strays == []


def test_the_error_tree_in_the_docstring_names_every_error_and_its_parent() -> None:
    doc = bench.errors.__doc__ or ""
    tree = [line for line in doc.splitlines() if "──" in line or line.strip().startswith("BenchError")]
    drawn = {line.split("── ")[-1].split()[0] if "── " in line else line.split()[0] for line in tree}
    assert drawn == _bench_error_names()
    assert sorted(bench.errors.__all__) == sorted(_bench_error_names())
    # Each error sits under its parent: the nearest line above it drawn one level shallower.
    depth = {}
    for line in tree:
        name = line.split("── ")[-1].split()[0] if "── " in line else line.split()[0]
        level = (line.index("── ") if "── " in line else 0) // 4
        depth[level] = name
        cls = getattr(bench.errors, name)
        if level:
            assert depth[level - 1] in {base.__name__ for base in cls.__bases__}, name
