"""`paper build|check --paper v3`: write paper/v3/ from results/v3/, or recompute it and compare.

The check compares the recomputed numbers with the committed ``paper/v3/numbers.json`` (values, displays and the
hashes of the files they came from), every number the paper prints (``article_numbers_v3.tsv``) at its printed
precision, and the committed tables with a fresh render. No v3 number is drawn from a random bootstrap at print
precision, so there is no tolerance: a display must match exactly.
"""

from __future__ import annotations

from pathlib import Path

from bench.report.build import BuildReport, write
from bench.report.check import (
    CheckReport,
    compare_article,
    compare_committed,
    compare_rendered,
    read_article_numbers,
)
from bench.report.inputs import ResultView
from bench.report.numbers import load_numbers_json
from bench.report.v3.compute import ARTICLE_NUMBERS, compute_v3
from bench.vocab import PAPER_DIR, RESULTS_DIR

PAPER_V3_DIR = PAPER_DIR / "v3"


def build_v3(
    results_root: Path = RESULTS_DIR,
    out_dir: Path = PAPER_V3_DIR,
    only: str | None = None,
    view: ResultView | None = None,
) -> BuildReport:
    return write(compute_v3(results_root, view), out_dir, only=only)


def check_v3(results_root: Path = RESULTS_DIR, paper_dir: Path = PAPER_V3_DIR) -> CheckReport:
    paper = compute_v3(results_root)
    committed = load_numbers_json(paper_dir / "numbers.json")
    problems = compare_committed(paper, committed)
    article = read_article_numbers(paper.results.root / ARTICLE_NUMBERS)
    problems += compare_article(paper, article)
    problems += compare_rendered(paper, paper_dir)
    return CheckReport(problems, len(committed), len(article))
