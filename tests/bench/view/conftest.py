"""A small traced engram run for the viewer tests: Ana lives in Paris, then in Berlin; the question asks where."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from bench.data.slices import Slice, load_slice
from bench.run.runner import run_arm
from tests.bench.run_args import run_args


def moving_slice() -> Slice:
    dev = load_slice("dev")
    first = dev.messages[0]
    said = [
        ("T:1", "I live in Paris.", 0),
        ("T:2", "My sister visited me in Paris last week.", 2),
        ("T:3", "I started a new job at a bakery.", 30),
        ("T:4", "I live in Berlin now.", 31),
    ]
    messages = tuple(
        replace(first, id=mid, index=i, speaker="Ana", text=text, timestamp=first.timestamp + timedelta(days=days))
        for i, (mid, text, days) in enumerate(said)
    )
    questions = (
        replace(
            dev.questions[0],
            id="conv-26:900",
            question="Where does Ana live?",
            gold="Berlin",
            evidence=("T:4",),
            asked_at=(1,),
        ),
        replace(
            dev.questions[0],
            id="conv-26:901",
            question="Who visited Ana?",
            gold="her sister",
            evidence=("T:2",),
            asked_at=(1,),
        ),
    )
    return replace(dev, messages=messages, questions=questions, checkpoints=(1,))


@pytest.fixture(scope="session")
def traced_engram(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The result file of engram (E2 preset: one confident update closes a fact) on the moving slice, k=3."""
    root = tmp_path_factory.mktemp("traced")
    arms = root / "arms"
    arms.mkdir()
    (arms / "engram.toml").write_text('system = "engram"\nk = [3]\n\n[settings]\npreset = "E2"\n', encoding="utf-8")
    options = run_args(
        stack="offline",
        results_root=root / "results",
        runs_root=root / "runs",
        cache_dir=root / "cache",
        subsets=(),
        arms_dir=arms,
        progress=False,
        slice_loader=lambda name: moving_slice(),
    )
    return run_arm("engram", "dev", *options)[0]
