"""LoCoMo (Maharana et al., 2024): ten long two-person conversations, questions in five categories.

Numbering: LoCoMo's own code (`task_eval/evaluation.py` scores category 1 by comma-split parts, 2-4 by token F1 and
5 by "no information available"), the numbers `locomo10.json` carries. mem0's evaluation keeps those numbers and
skips 5 (`evaluation/evals.py`); the names mem0 gives them (mem0ai/mem0 issue #2609, a maintainer's answer of
2025-05-02) differ for three of the four, so reading mem0's per-category table needs the alias map below.
"""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset

LOCOMO = register_dataset(
    Dataset(
        name="locomo",
        description="LoCoMo: ten long conversations, questions in five categories",
        source="data/locomo/locomo10.json (snap-research/locomo, CC BY-NC 4.0)",
        categories=(
            Category("multi-hop", 1, description="needs facts from several sessions"),
            Category("temporal", 2, description="when something happened, from the session dates"),
            Category("open-domain", 3, description="the conversation plus world knowledge or inference"),
            Category("single-hop", 4, description="one fact from one session"),
            Category(
                "adversarial", 5, scored=False, description="asks about something never said; reported on its own"
            ),
        ),
        slices=("dev", "stress", "heldout:<conv>", "locomo:<conv>", "locomo"),
        numberings={"mem0": {1: "single-hop", 2: "temporal", 3: "multi-hop", 4: "open-domain"}},
        build="bench.data.slices:build_locomo",
    )
)
