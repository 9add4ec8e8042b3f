"""A pooled slice's conversations run side by side; how many at once changes no byte of what is written."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.data.slices import Slice, load_slice, pooled
from bench.models.stacks import build_stack
from bench.run.planner import ANSWER_CONCURRENCY, calls_in_flight
from bench.run.runner import run_arm
from engram.testing import HashEmbedder
from tests.bench.run_args import run_args

CONVERSATIONS = ("conv-30", "conv-44", "conv-49")


def opening_sessions(conversation: str, questions: int) -> Slice:
    """The first session of a LoCoMo conversation, with its first few scored questions asked after it."""
    whole = load_slice(f"locomo:{conversation}")
    messages = tuple(m for m in whole.messages if m.session == 1)
    asked = tuple(replace(q, asked_at=(1,)) for q in whole.questions if q.scored)[:questions]
    return replace(whole, messages=messages, questions=asked, checkpoints=(1,))


def three_openings(_: str) -> Slice:
    return pooled("three-openings", tuple(opening_sessions(c, 4) for c in CONVERSATIONS))


def run_at(tmp_path: Path, arms: Path, arm: str, concurrency: int, tag: str) -> Path:
    out = tmp_path / f"out-{tag}"
    options = run_args(
        runs_root=tmp_path / f"runs-{tag}",
        cache_dir=tmp_path / "cache",
        subsets=(),
        out=out,
        arms_dir=arms,
        progress=False,
        slice_loader=three_openings,
        say=lambda _: None,
        embedder=HashEmbedder(),
        concurrency=concurrency,
    )
    run_arm(arm, "locomo", *options)
    return out


def comparable(path: Path) -> bytes:
    """A file's bytes, with a result's `timing` (wall clock) left out: the one block two runs never share."""
    if path.suffix != ".json":
        return path.read_bytes()
    record: dict[str, Any] = json.loads(path.read_bytes())
    record.pop("timing", None)
    return json.dumps(record, sort_keys=False).encode()


@pytest.fixture()
def arms(tmp_path: Path) -> Path:
    folder = tmp_path / "arms"
    folder.mkdir()
    (folder / "turn-lookup.toml").write_text('system = "raw-turn-rag"\nk = [2, 6]\n', encoding="utf-8")
    (folder / "fact-memory.toml").write_text('system = "engram"\nk = 3\n', encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("arm", ["turn-lookup", "fact-memory"])
def test_one_at_a_time_and_eight_at_once_write_the_same_files(tmp_path: Path, arms: Path, arm: str) -> None:
    # A first run records every stand-in call (a stand-in's measured latency differs run to run, as a model's
    # does); the two compared runs replay those recordings, as two runs of the same cache always do.
    run_at(tmp_path, arms, arm, 4, "recording")
    alone = run_at(tmp_path, arms, arm, 1, "one")
    together = run_at(tmp_path, arms, arm, 8, "eight")

    names = sorted(p.name for p in alone.iterdir())
    assert names == sorted(p.name for p in together.iterdir())
    assert any(n.endswith(".calls.txt") for n in names) and any(n.endswith(".trace.json.gz") for n in names)
    for name in names:
        assert comparable(alone / name) == comparable(together / name), name
    result = json.loads(next(alone / n for n in names if n.endswith(".json")).read_bytes())
    seen = [a["conversation"] for a in result["answers"]]  # every conversation answered, in slice order
    assert seen == sorted(seen, key=CONVERSATIONS.index) and set(seen) == set(CONVERSATIONS)


def test_the_conversations_really_run_side_by_side(tmp_path: Path, arms: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.run import runner

    at_once: list[int] = []
    running = 0
    lock = threading.Lock()
    original = runner._run_part

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal running
        with lock:
            running += 1
            at_once.append(running)
        try:
            return original(*args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(runner, "_run_part", counted)
    run_at(tmp_path, arms, "turn-lookup", 3, "three")
    assert len(at_once) == len(CONVERSATIONS) and max(at_once) > 1
    monkeypatch.setattr(runner, "_run_part", counted)
    at_once.clear()
    run_at(tmp_path, arms, "turn-lookup", 1, "single")
    assert at_once == [1, 1, 1]


def test_the_bound_is_the_stack_files_concurrency_unless_overridden() -> None:
    local = build_stack("local")  # stacks/local.toml: concurrency = 2 for its one provider
    assert calls_in_flight(local) == 2
    assert calls_in_flight(local, 32) == 32
    assert calls_in_flight(build_stack("offline")) == ANSWER_CONCURRENCY  # declares none: six, as always
