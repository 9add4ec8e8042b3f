"""A researcher's long LongMemEval run is interrupted and run again with the same command: it answers only the
questions still missing, and the result is the one an uninterrupted run writes. The slice is a small LongMemEval
file in the upstream layout (three questions, each its own haystack) on the offline stand-ins."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.data.slices import Slice, load_slice
from bench.run import runner
from bench.run.output import partial_folder
from bench.run.runner import run_arm
from tests.bench.data.test_longmemeval import published_s_split
from tests.bench.run_args import run_args

SLICE = "longmemeval:s"


@pytest.fixture
def three_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Slice:
    published_s_split(tmp_path, monkeypatch)
    return load_slice(SLICE)


def args(tmp_path: Path, name: str) -> Any:
    return run_args(
        stack="offline",
        out=tmp_path / name / "out",
        runs_root=tmp_path / name / "runs",
        cache_dir=tmp_path / name / "cache",
        subsets=(),
        progress=False,
        concurrency=1,  # parts one after another, so the interruption falls between two of them
        say=lambda line: None,
    )


def comparable(path: Path) -> dict[str, Any]:
    """A result without what differs between any two runs of the same command: wall time, and how much the call
    cache served (an interrupted part's calls are cached, so they replay as hits)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("timing")
    data["calls"].pop("hits", None)
    data["calls"].pop("misses", None)
    data["extras"].pop("seconds_per_question")
    return data


class Interrupted(BaseException):
    """What Ctrl-C is to the run: not an Exception, so nothing catches it on the way out."""


def test_an_interrupted_run_resumes_from_the_questions_done_and_writes_the_uninterrupted_result(
    three_questions: Slice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [uninterrupted] = run_arm("full-context", SLICE, *args(tmp_path, "whole"))

    ran: list[str] = []
    interrupted: list[str] = []
    real_run_part = runner._run_part

    def stop_at_the_third(unit: Any, part: Slice, *rest: Any) -> Any:
        if part.conversation == "q-days" and not interrupted:
            interrupted.append(part.conversation)
            raise Interrupted
        ran.append(part.conversation)
        return real_run_part(unit, part, *rest)

    monkeypatch.setattr(runner, "_run_part", stop_at_the_third)
    request, services = args(tmp_path, "broken")
    with pytest.raises(Interrupted):
        run_arm("full-context", SLICE, request, services)
    sidecar = partial_folder(services.runs_root, "offline", SLICE, "full-context")
    kept = sorted(p.name for p in sidecar.rglob("part-*.pickle"))
    assert kept == ["part-00000.pickle", "part-00001.pickle"]  # the two questions answered before the interruption
    assert not (request.out / "full-context.json").exists()  # no result: nothing half-written

    ran.clear()
    said: list[str] = []
    [resumed] = run_arm("full-context", SLICE, request, replace(services, say=said.append))
    assert ran == ["q-days"]  # only the question still missing ran
    assert any(line.startswith("resuming: 2 of 3 parts already done") for line in said)
    assert comparable(resumed) == comparable(uninterrupted)
    assert not sidecar.exists()  # the result landed: the finished parts are gone


def test_a_changed_command_does_not_read_the_other_commands_finished_parts(
    three_questions: Slice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run_part = runner._run_part

    def stop_at_the_second(unit: Any, part: Slice, *rest: Any) -> Any:
        if part.conversation == "q-move_abs":
            raise Interrupted
        return real_run_part(unit, part, *rest)

    monkeypatch.setattr(runner, "_run_part", stop_at_the_second)
    request, services = args(tmp_path, "k")
    with pytest.raises(Interrupted):
        run_arm("raw-turn-rag", SLICE, request, services)
    monkeypatch.setattr(runner, "_run_part", real_run_part)
    said: list[str] = []
    run_arm("raw-turn-rag", SLICE, replace(request, ks=(3,)), replace(services, say=said.append))
    assert not any(line.startswith("resuming") for line in said)  # another k: another run, started afresh
    # the other command's parts are not read, not removed, and named, so a stale one can be deleted
    [kept] = [line for line in said if line.startswith("kept: 1 unfinished run(s) of this arm and slice")]
    sidecar = partial_folder(services.runs_root, "offline", SLICE, "raw-turn-rag")
    [other] = [p for p in sidecar.iterdir() if p.is_dir()]
    assert other.name in kept and any(other.glob("part-*.pickle"))


def test_an_interrupted_pooled_run_counts_only_the_parts_that_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C cancels the parts not yet started, and a cancelled future's callbacks fire too: the bar jumped to 100%
    advanced: list[int] = []

    class Recorder:
        def add_task(self, description: str, total: int) -> int:
            return 0

        def advance(self, task: int) -> None:
            advanced.append(task)

    @contextmanager
    def recording(enabled: bool) -> Iterator[Recorder]:
        yield Recorder()

    monkeypatch.setattr(runner, "progress_bars", recording)
    returned: list[str] = []
    lock = threading.Lock()

    def one_part(part: str, services: Any) -> str:
        if part == "p1":
            raise Interrupted
        if part != "p0":
            time.sleep(0.05)  # the interruption is seen long before these could all run
        with lock:
            returned.append(part)
        return part

    parts = [f"p{i}" for i in range(20)]
    with pytest.raises(Interrupted):
        runner._each_part(parts, one_part, run_args(progress=True).services, 2)  # type: ignore[arg-type]
    assert len(returned) < len(parts) - 1  # most parts never started
    assert len(advanced) == len(returned)  # the interrupted part and the cancelled ones are not counted
