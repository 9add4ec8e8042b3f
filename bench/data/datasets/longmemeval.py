"""LongMemEval (Wu et al., 2024): one question per entry, each with its own history; read from
`$ENGRAM_LONGMEMEVAL_DIR` (not shipped), so a slice is built again on every load. Categories are its question
types, all scored; abstention questions are marked in each question's `extra`."""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset

PREFIX = "longmemeval:"  # `longmemeval:<file>`: `<file>.json` in the LongMemEval folder
LONGMEMEVAL = register_dataset(
    Dataset(
        name="longmemeval",
        description="LongMemEval: one question per entry, each with its own haystack of sessions",
        source="$ENGRAM_LONGMEMEVAL_DIR/<file>.json (github.com/xiaowu0162/LongMemEval)",
        # Its `question_type` field: the category of each question.
        categories=(
            Category("single-session-user", description="a fact the user said in one session"),
            Category("single-session-assistant", description="a fact the assistant said in one session"),
            Category("single-session-preference", description="a preference the user stated"),
            Category("multi-session", description="facts from several sessions"),
            Category("temporal-reasoning", description="when, or in which order"),
            Category("knowledge-update", description="the latest of changing values"),
        ),
        slices=(f"{PREFIX}<file>",),
        build="bench.data.longmemeval:load_longmemeval",
        reread=True,
    )
)
