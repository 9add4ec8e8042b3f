"""The article's 50 gold contradiction pairs (engram-eval v1, CC BY-NC 4.0): an old fact, a new message, the
relation and temporal status it should get. Read by `scripts/rules_contradiction_pairs.py` (no slice: nothing is
ingested); its categories are the pairs' tiers."""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset

CONTRADICTION_PAIRS = register_dataset(
    Dataset(
        name="contradiction-pairs",
        description="the article's 50 gold contradiction pairs, by tier",
        source="data/engram-eval-v1/contradiction_pairs.jsonl",
        categories=(
            Category("easy", description="the change is stated outright"),
            Category("medium", description="the change needs a step of reading"),
            Category("subtle", description="the change is implied"),
        ),
    )
)
