"""`paper check`: recompute numbers.json from results/ and compare it with the committed file and with the
article's printed numbers (``article_numbers.tsv``, copied into results/v1 by the import).

A problem names the id. Bootstrap intervals (ids containing ``bootstrap``) are recomputed with fresh draws, so
against the article they may differ by at most 1.0 point; every other display must match exactly. Against the
committed numbers.json each printed form must match exactly and each stored value within a relative 1e-9
(`bench.report.numbers.VALUE_RELATIVE_TOLERANCE`): other CPUs and BLAS builds move some values at 1e-11.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import ResultError
from bench.report.article import render_article
from bench.report.build import compute_paper
from bench.report.catalog import PAPERS
from bench.report.numbers import VALUE_RELATIVE_TOLERANCE, load_numbers_json, values_agree
from bench.report.paper import Paper
from bench.report.tables import render
from bench.vocab import DEFAULT_PAPER_STACK_DIR, PAPER_DIR, RESULTS_DIR

BOOTSTRAP_TOLERANCE_POINTS = 1.0


@dataclass(frozen=True)
class Problem:
    id: str
    message: str

    def __str__(self) -> str:
        return f"{self.id}: {self.message}"


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value))


def compare_committed(paper: Paper, committed: dict[str, dict[str, Any]]) -> list[Problem]:
    rebuilt = paper.numbers.to_json()
    problems: list[Problem] = []
    for number_id in sorted(set(rebuilt) | set(committed)):
        new, old = rebuilt.get(number_id), committed.get(number_id)
        if old is None:
            assert new is not None  # the id came from one of the two
            problems.append(
                Problem(
                    number_id,
                    f"computed from results/ ({new['display']}) but not in the committed "
                    "numbers.json: run `make paper` and commit",
                )
            )
        elif new is None:
            problems.append(
                Problem(
                    number_id,
                    f"in the committed numbers.json ({old.get('display')}) but no longer computed from results/",
                )
            )
        elif new["display"] != old.get("display") or not values_agree(_normal(new["value"]), old.get("value")):
            problems.append(
                Problem(
                    number_id,
                    f"committed {old.get('display')} (value {old.get('value')}), "
                    f"recomputed {new['display']} (value {new['value']}; values may differ by a relative "
                    f"{VALUE_RELATIVE_TOLERANCE:g}, the printed form not at all)",
                )
            )
        elif new["source"] != old.get("source") or new["sha256"] != old.get("sha256"):
            problems.append(
                Problem(
                    number_id,
                    "same value, but its result files changed (source or sha256 "
                    "differs from the committed numbers.json): rebuild and commit",
                )
            )
    return problems


def read_article_numbers(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise ResultError(
            f"{path}: expected the article's number list (copied by `engram-bench import-v1`), found no file"
        )
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or not {"id", "display"} <= set(rows[0]):
        raise ResultError(
            f"{path}: expected a TSV with columns id, display, meaning; found {list(rows[0]) if rows else 'no rows'}"
        )
    return {row["id"]: row["display"] for row in rows}


def _points(display: str) -> float:
    return float(display.replace("−", "-").replace("+", ""))


def compare_article(paper: Paper, article: dict[str, str]) -> list[Problem]:
    problems: list[Problem] = []
    for number_id, printed in article.items():
        if number_id not in paper.numbers:
            problems.append(Problem(number_id, f"the article prints {printed}; results/ produce no such number"))
            continue
        ours = paper.numbers[number_id].display
        if "bootstrap" in number_id:
            gap = abs(_points(ours) - _points(printed))
            if gap > BOOTSTRAP_TOLERANCE_POINTS:
                problems.append(
                    Problem(
                        number_id,
                        f"article {printed}, recomputed {ours}: bootstrap differs by "
                        f"{gap:.1f} points (tolerance {BOOTSTRAP_TOLERANCE_POINTS})",
                    )
                )
        elif ours != printed:
            problems.append(Problem(number_id, f"article prints {printed}, results/ give {ours}"))
    return problems


def compare_rendered(paper: Paper, paper_dir: Path) -> list[Problem]:
    """Committed tables and article text against a fresh render (figures are left to `make paper`: drawing them
    is most of a build's cost, and their plotted values are numbers checked above)."""
    expected = {f"tables/{t.name}.{kind}": render(t, kind) for t in paper.tables for kind in ("md", "tex")}
    if "article" in paper.entries():
        expected["article.md"] = render_article(paper)
    problems = []
    for relative, text in sorted(expected.items()):
        path = paper_dir / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            state = "missing" if not path.is_file() else "out of date"
            problems.append(Problem(f"file:{relative}", f"{state} against results/: run `make paper` and commit"))
    return problems


@dataclass
class CheckReport:
    problems: list[Problem]
    checked_committed: int
    checked_article: int


def check(
    results_root: Path = RESULTS_DIR,
    stack_dir: str = DEFAULT_PAPER_STACK_DIR,
    numbers_path: Path = PAPER_DIR / "numbers.json",
) -> CheckReport:
    """`paper check`: the v1 article recomputed from results/<stack_dir>/ against `numbers_path`."""
    return check_paper("v1", results_root, stack_dir, numbers_path)


def check_paper(
    name: str,
    results_root: Path = RESULTS_DIR,
    stack_dir: str | None = None,
    numbers_path: Path | None = None,
) -> CheckReport:
    """A registered paper recomputed and compared with its committed numbers.json (default: the paper's output
    directory), with every number its article prints, and with its committed tables (and article.md)."""
    spec = PAPERS.get(name, "paper")
    paper = compute_paper(name, results_root, stack_dir)
    numbers_path = numbers_path or spec.out_dir / "numbers.json"
    committed = load_numbers_json(numbers_path)
    problems = compare_committed(paper, committed)
    article = read_article_numbers(paper.results.root / spec.article_numbers)
    problems += compare_article(paper, article)
    problems += compare_rendered(paper, numbers_path.parent)
    return CheckReport(problems, len(committed), len(article))
