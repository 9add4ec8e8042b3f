"""`engram-bench compare` and the paper build publish the same intervals for the same comparison."""

from __future__ import annotations

import math

import pytest

from bench.analysis.compare import comparison_report, load_result_set
from bench.report.paper import Paper
from bench.vocab import RESULTS_DIR

HELDOUT = RESULTS_DIR / "v1" / "heldout"


@pytest.mark.parametrize(
    "a, b, prefix",
    [
        ("engram__k3", "mem0__k6", "heldout.mem0-token-matched"),
        ("engram__k3", "mem0__k3", "heldout.mem0-k3"),
        ("engram__k20", "mem0__k20", "heldout.mem0-k20"),
    ],
)
def test_the_conversation_bootstrap_is_the_same_in_compare_and_in_the_paper(
    paper_v1: Paper, a: str, b: str, prefix: str
) -> None:
    report = comparison_report(
        load_result_set(str(HELDOUT / "*" / f"{a}.json")),
        load_result_set(str(HELDOUT / "*" / f"{b}.json")),
        include_unscored=False,
        draws=10_000,
        seed=None,
    )
    cluster = report["overall"].cluster
    assert math.isclose(cluster.low, paper_v1.numbers[f"{prefix}.bootstrap_low"].value, abs_tol=1e-12)
    assert math.isclose(cluster.high, paper_v1.numbers[f"{prefix}.bootstrap_high"].value, abs_tol=1e-12)
    # and the per-question interval too
    difference = report["overall"].difference
    assert math.isclose(difference.low, paper_v1.numbers[f"{prefix}.ci_low"].value, abs_tol=1e-12)


def test_every_pooled_heldout_comparison_has_its_per_conversation_rows(paper_v1: Paper) -> None:
    perconv = next(t for t in paper_v1.tables if t.name == "perconv")
    shown = {row[0] for row in perconv.rows}
    assert "engram, reranking off (k=3) − mem0, token-matched (k=6)" in shown
    for conv in ("conv-30", "conv-41", "conv-42", "conv-43"):
        assert f"compare.engram-reranking-off-k3_vs_mem0-token-matched.conv.{conv}.delta" in paper_v1.numbers
