"""The engram-eval v1 update sets (CC BY-NC 4.0): messages that change facts stated in LoCoMo's conv-26, each with
a question whose answer is the new value. Set 1 adds facts that later change (asked on `dev_updates`, beside the
dev slice's LoCoMo questions); set 2 adds chains of changes and point-in-time questions (`dev_updates2`)."""

from __future__ import annotations

from bench.data.datasets import Category, Dataset, register_dataset

UPDATE_SET_1 = register_dataset(
    Dataset(
        name="update-set-1",
        description="engram-eval v1 update set 1: facts that later change, on top of the dev slice",
        source="data/engram-eval-v1/ (update set 1)",
        categories=(Category("update", description="the current value of a fact that changed"),),
        slices=("dev_updates",),
        includes=("locomo",),
        build="bench.data.slices:build_update_set",
    )
)

UPDATE_SET_2 = register_dataset(
    Dataset(
        name="update-set-2",
        description="engram-eval v1 update set 2: chains of changes and point-in-time questions",
        source="data/engram-eval-v1/ (update set 2)",
        categories=(Category("update2", description="a value at a point in a chain of changes"),),
        slices=("dev_updates2",),
        includes=("locomo", "update-set-1"),
        build="bench.data.slices:build_update_set",
    )
)
