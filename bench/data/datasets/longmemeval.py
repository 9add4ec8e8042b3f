"""LongMemEval (Wu et al., ICLR 2025): one question per entry, each with its own history. Its oracle split ships in
`data/longmemeval/`; its `s` and `m` splits are read from `$ENGRAM_LONGMEMEVAL_DIR` (checked against their published
sha256), so a slice is built again on every load. Categories are its question types, all scored; abstention
questions are marked in each question's `extra`."""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset

PREFIX = "longmemeval:"  # `longmemeval:<split>[/<subset>]` (bench.data.longmemeval)
LONGMEMEVAL = register_dataset(
    Dataset(
        name="longmemeval",
        description="LongMemEval: one question per entry, each with its own haystack of sessions",
        source="data/longmemeval/longmemeval_oracle.json; s and m from $ENGRAM_LONGMEMEVAL_DIR (github.com/xiaowu0162/LongMemEval, MIT)",
        # Its `question_type` field: the category of each question.
        categories=(
            Category("single-session-user", description="a fact the user said in one session"),
            Category("single-session-assistant", description="a fact the assistant said in one session"),
            Category("single-session-preference", description="a preference the user stated"),
            Category("multi-session", description="facts from several sessions"),
            Category("temporal-reasoning", description="when, or in which order"),
            Category("knowledge-update", description="the latest of changing values"),
        ),
        slices=(f"{PREFIX}oracle", f"{PREFIX}<split>[/<subset>]"),
        build="bench.data.longmemeval:load_longmemeval",
        reread=True,
    )
)
