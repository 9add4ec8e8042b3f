"""A worked example of adding a paper table: what engram gains, per question category, when its retrieval budget
grows from k=3 to k=20 on the held-out conversations (the same questions answered twice, so the comparison is paired).

A table is one function `(PaperContext) -> list[Table]`. It reads result files through `ctx.results` (one stack
directory of results/), registers every number it prints in `ctx.numbers` (with the files it came from, so
numbers.json can cite them), and returns tables whose cells cite those numbers by id. The paired figures come from
`bench.analysis.pairing.Pairing`, the object `engram-bench compare` and the paper's own tables use.

Installed as a package (pyproject.toml beside this file, group `engram_bench.tables`), it builds with
`engram-bench paper table budget-gain --out DIR`; copied into bench/report/parts/ with
`@TABLES.register("budget-gain")` on the function (no list to edit: the catalog imports every module there), it is a
built-in table a paper's `PaperSpec.tables` can name.
"""

from __future__ import annotations

import pandas as pd

from bench.analysis.pairing import Pairing
from bench.report.catalog import PaperContext
from bench.report.inputs import Loaded
from bench.report.numbers import SourceFile
from bench.report.tables import Table, TableBuilder

ARM = "engram"
SMALL_K, LARGE_K = 3, 20


def _scored(files: list[Loaded], k: int) -> tuple[pd.Series, pd.Series]:
    """The judge label (0/1) and the category of every scored question, by question id, pooled over conversations."""
    answers = [a for f in files for a in f.result.scored_answers()]
    ids = [a.question_id for a in answers]
    correct = pd.Series([int(a.correct) for a in answers], index=ids, name=f"{ARM} k={k}")
    return correct, pd.Series([a.category for a in answers], index=ids)


def budget_gain(ctx: PaperContext) -> list[Table]:
    """Per category: n, accuracy at k=3 and k=20, and the paired gain (k=20 − k=3) with its 95% CI."""
    small_files, large_files = ctx.results.heldout(ARM, SMALL_K), ctx.results.heldout(ARM, LARGE_K)
    if not small_files or not large_files:
        return []  # a stack without both budgets (e.g. a partial offline run): no table rather than a wrong one
    large, categories = _scored(large_files, LARGE_K)
    small, _ = _scored(small_files, SMALL_K)
    rows = Pairing.join(large, small).judged_by(categories)
    sources: list[SourceFile] = [f.source for f in [*large_files, *small_files]]
    for row in rows.itertuples():
        stem = f"budget_gain.{row.group}"
        ctx.numbers.add(f"{stem}.n", int(row.n), "int", sources)
        ctx.numbers.add(f"{stem}.small", float(row.accuracy_b), "pct", sources)
        ctx.numbers.add(f"{stem}.large", float(row.accuracy_a), "pct", sources)
        ctx.numbers.add(f"{stem}.gain", float(row.delta), "pp", sources, note=f"k={LARGE_K} minus k={SMALL_K}")
        ctx.numbers.add(f"{stem}.ci_low", float(row.ci_low), "pp", sources)
        ctx.numbers.add(f"{stem}.ci_high", float(row.ci_high), "pp", sources)
    table = TableBuilder(
        ctx.numbers,
        "budget_gain",
        f"What {ARM} gains from k={SMALL_K} to k={LARGE_K}, per category (held-out, scored questions)",
        ctx.results.label,
        ["category", "n", f"k={SMALL_K}", f"k={LARGE_K}", "gain (points)", "95% CI"],
    )
    for group in rows["group"]:
        stem = f"budget_gain.{group}"
        table.row(
            str(group),
            *table.nums(stem, "n", "small", "large", "gain"),
            table.interval(f"{stem}.ci_low", f"{stem}.ci_high"),
        )
    table.note("Paired by question id: each question was answered at both budgets; per-question 95% CI.")
    return [table.table]
