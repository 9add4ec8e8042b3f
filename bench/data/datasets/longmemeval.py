"""LongMemEval (Wu et al., 2024): one question per entry, each with its own history; read from
`$ENGRAM_LONGMEMEVAL_DIR` (not shipped), so a slice is built again on every load. Categories are its question
types, all scored; abstention questions are marked in each question's `extra`."""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset
from bench.vocab import LONGMEMEVAL_TYPES

LONGMEMEVAL = register_dataset(
    Dataset(
        name="longmemeval",
        description="LongMemEval: one question per entry, each with its own haystack of sessions",
        source="$ENGRAM_LONGMEMEVAL_DIR/<file>.json (github.com/xiaowu0162/LongMemEval)",
        categories=tuple(Category(name) for name in LONGMEMEVAL_TYPES),
        slices=("longmemeval:<file>",),
        build="bench.data.longmemeval:load_longmemeval",
        reread=True,
    )
)
