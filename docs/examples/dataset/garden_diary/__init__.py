"""Garden-diary: a tiny dataset, the worked example of adding one (docs/examples/README.md).

One module declares the dataset (its slice, its categories with their numbering, which are scored) and builds the
slice from its data file, `garden_diary.toml` beside it. Copy this folder into `bench/data/datasets/` (its modules and
packages are discovered), or ship it as your own package with an entry point in group `engram_bench.datasets`
naming the `Dataset` object (../pyproject.toml). Then `engram-bench run ARM --slice garden-diary`.
"""

from __future__ import annotations

import hashlib
import tomllib
from datetime import datetime
from pathlib import Path

from bench.data.datasets import Category, Dataset, register_dataset
from bench.data.slices import Slice, SliceMessage, SliceQuestion
from bench.errors import DataError

DATA_FILE = Path(__file__).with_name("garden_diary.toml")


def build(name: str) -> Slice:
    """The slice `garden-diary`: every session written in order, every question asked after the last one."""
    raw = DATA_FILE.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))
    conversation = data["conversation"]
    messages = []
    for number, session in enumerate(data["sessions"], start=1):
        start = datetime.fromisoformat(session["date"])
        for index, (speaker, text) in enumerate(session["turns"]):
            messages.append(
                SliceMessage(
                    id=f"{conversation}:{number}:{index}",
                    conversation=conversation,
                    session=number,
                    index=index,
                    speaker=speaker,
                    text=text,
                    session_date=start.strftime("%d %B %Y"),
                    timestamp=start,
                )
            )
    last = len(data["sessions"])
    questions = []
    for row in data["questions"]:
        category = GARDEN_DIARY.category(row["category"], where=f"{DATA_FILE}: question {row['id']}.category")
        questions.append(
            SliceQuestion(
                id=row["id"],
                conversation=conversation,
                question=row["question"],
                gold=row["answer"],
                category=row["category"],
                category_name=category.name,
                evidence=tuple(row["evidence"]),
                scored=category.scored,
                asked_at=(last,),
            )
        )
    if not questions:
        raise DataError(f"{DATA_FILE}: expected at least one [[questions]] table, found none")
    return Slice(
        name=name,
        conversation=conversation,
        speakers=tuple(data["speakers"]),
        messages=tuple(messages),
        questions=tuple(questions),
        checkpoints=(last,),
        sources=(),  # the data lives outside data/: the file's own hash goes into the result's provenance
        notes={"file_sha256": hashlib.sha256(raw).hexdigest()},
    )


GARDEN_DIARY = register_dataset(
    Dataset(
        name="garden-diary",
        description="a tiny made-up garden conversation (docs/examples/dataset)",
        source="docs/examples/dataset/garden_diary.toml",
        categories=(
            Category("recall", 1, description="a fact said once"),
            Category("when", 2, description="the date something happened"),
            Category("unanswerable", 3, scored=False, description="never said; not scored"),
        ),
        slices=("garden-diary",),
        build=build,
        reread=True,  # read from its file on every load: no per-process cache of a file you are editing
    )
)
