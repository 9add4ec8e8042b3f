"""`engram-bench compare` on the imported v3 files reproduces the paper's LoCoMo tests S1-S4: both accuracies and the
discordant counts behind each exact McNemar test."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.analysis.compare import comparison_report, load_result_set
from bench.exchange.importv3 import V3_RESULTS_DIR

HELDOUT = V3_RESULTS_DIR / "heldout"

# (A, B, A correct, B correct, only A, only B): the paper's S1-S4 over the 778 held-out questions.
PAPER_TESTS = {
    "S1 T0R k3 vs L0 k3": ("turns-rerank__k3", "turns-cosine__k3", 601, 466, 152, 17),
    "S2 T0R k4 vs Jev-Mem k3": ("turns-rerank__k4", "jev-mem__k3", 599, 549, 98, 48),
    "S3 T0R k3 vs mem0 k3": ("turns-rerank__k3", "mem0__k3", 601, 533, 134, 66),
    "S4 T0R k3 vs T0R-LLM k3": ("turns-rerank__k3", "turns-llm-rerank__k3", 601, 604, 28, 31),
}


@pytest.mark.parametrize("name", PAPER_TESTS)
def test_compare_reproduces_the_papers_paired_tables(name: str) -> None:
    a_file, b_file, a_correct, b_correct, only_a, only_b = PAPER_TESTS[name]
    a = load_result_set(str(HELDOUT / "*" / f"{a_file}.json"))
    b = load_result_set(str(HELDOUT / "*" / f"{b_file}.json"))
    report = comparison_report(a, b, include_unscored=False, draws=200, seed=1)
    table = report["overall"].table
    assert (int(report["correct_a"].sum()), int(report["correct_b"].sum())) == (a_correct, b_correct)
    assert (table.only_a, table.only_b, table.n) == (only_a, only_b, 778)
    assert len(a.files) == len(b.files) == 5


@pytest.mark.slow
def test_the_command_prints_the_s1_counts_and_p_value() -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "compare",
            str(HELDOUT / "*" / "turns-rerank__k3.json"),
            str(HELDOUT / "*" / "turns-cosine__k3.json"),
            "--draws",
            "200",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "exact McNemar p = 2.7e-28  (A only 152, B only 17;" in run.stdout
    assert "601/778 = 77.2%" in run.stdout and "466/778 = 59.9%" in run.stdout
