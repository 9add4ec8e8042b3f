"""A researcher measures run-to-run spread: `run --replicates N` samples every model call N times (the replicate
index is part of each call's cache key), writes the results side by side (`__r<i>`), and `compare` reports the
mean and spread across replicates next to the paired statistics."""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer, default_responder, fake_message

from bench.cli.program import main
from bench.data.slices import Slice, load_slice
from bench.models.cache import CallRequest
from bench.models.gateway import Gateway
from bench.results.schema import read_result
from bench.run.runner import run_arm
from tests.bench.run_args import run_args


def tiny_slice() -> Slice:
    """The first 6 dev messages and 3 of its questions, asked after them (a test-only slice)."""
    dev = load_slice("dev")
    return replace(
        dev,
        messages=dev.messages[:6],
        questions=tuple(replace(q, asked_at=(1,)) for q in dev.questions[:3]),
        checkpoints=(1,),
    )


def test_each_replicate_is_its_own_sample_of_a_call_and_replays_its_own_recording(tmp_path: Path) -> None:
    request = CallRequest("offline", "judge", "m", {"question": "q"}, "judge")
    counter = itertools.count()
    gateways = []
    for replicate in (0, 1, 2, 1):
        gateways.append(Gateway(local=tmp_path / "cache", subsets=[], replicate=replicate))
    from bench.models.gateway import LiveResponse

    texts = [
        g.call(request, lambda r: LiveResponse({"n": next(counter), "replicate": r.replicate})).body for g in gateways
    ]
    for g in gateways:
        g.close()
    # three replicates: three live samples; the second replicate-1 call replays replicate 1's recording
    assert texts == [{"n": 0, "replicate": 0}, {"n": 1, "replicate": 1}, {"n": 2, "replicate": 2}, texts[1]]


def flaky_responder() -> Any:
    """An answerer that is right on every other call (a model sampled at temperature > 0), a judge that checks it."""
    calls = itertools.count()

    def respond(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        if path != MESSAGES:
            return default_responder(path, body)
        user = json.dumps(body["messages"])
        if "CORRECT" in user and "WRONG" in user:
            label = "CORRECT" if "right answer" in user else "WRONG"
            return 200, {}, fake_message(body, json.dumps({"label": label}))
        return 200, {}, fake_message(body, "the right answer" if next(calls) % 2 else "no idea")

    return respond


def test_replicates_write_side_by_side_files_and_compare_reports_their_spread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    options = run_args(
        stack="paper",
        results_root=tmp_path / "results",
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        slice_loader=lambda name: tiny_slice(),
        out=tmp_path / "out",
        mode="record",
        assume_yes=True,
        replicates=3,
    )
    with FakeModelServer(flaky_responder()) as anthropic:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
        written = run_arm("full-context", "dev", *options)
        answered = anthropic.count(MESSAGES)

    assert [p.name for p in written] == [f"full-context__r{i}.json" for i in range(3)]
    results = [read_result(p) for p in written]
    assert [r.extras.get("replicate") for r in results] == [None, 1, 2]  # replicate 0 is keyed as a plain run
    assert {r.extras["replicates"] for r in results} == {3}
    keys = [set(p.with_suffix(".calls.txt").read_text().split()) for p in written]
    assert not keys[0] & keys[1] and not keys[1] & keys[2]  # no call is shared between replicates
    assert answered == 3 * 2 * 3  # 3 replicates x (answer + judge) x 3 questions, every one sent
    accuracies = [r.accuracy.correct / r.accuracy.n for r in results]
    assert len(set(accuracies)) > 1  # the flaky answerer gives the replicates different accuracies

    capsys.readouterr()  # the runs' banners
    monkeypatch.setattr(sys, "argv", ["engram-bench", "compare", str(tmp_path / "out"), str(written[0]), "--json"])
    with pytest.raises(SystemExit):
        main()
    [report] = json.loads(capsys.readouterr().out)
    assert report["replicates"]["a"] == pytest.approx(accuracies)
    assert report["overall"]["n"] == 3  # paired on replicate r0's answers
    monkeypatch.setattr(sys, "argv", ["engram-bench", "compare", str(tmp_path / "out"), str(written[0])])
    with pytest.raises(SystemExit):
        main()
    text = capsys.readouterr().out
    mean = 100 * sum(accuracies) / 3
    assert f"A over 3 replicates: accuracy mean {mean:.1f}%" in text


def test_replicates_must_be_a_positive_count(tmp_path: Path) -> None:
    from bench.errors import ConfigError

    with pytest.raises(ConfigError, match="--replicates: expected a positive number of samples, found 0"):
        run_arm("full-context", "dev", *run_args(replicates=0, out=tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_grid_layout_of_replicates_is_read_too(tmp_path: Path) -> None:
    """A grid writes replicate 0 as a plain run and replicate i > 0 under replicates/r<i>/ with extras.replicate."""
    from bench.analysis.compare import load_result_set, replicate_accuracies
    from bench.results.schema import Answer, Provenance, Result, write_result

    def write(path: Path, labels: list[str], extras: dict[str, Any]) -> None:
        answers = [Answer(f"c:{i}", "c", "single-hop", True, "q?", "g", "a", label) for i, label in enumerate(labels)]
        result = Result.build(
            answers=answers,
            arm="mem0",
            system="mem0",
            stack="offline",
            slice="dev",
            k=20,
            arm_hash=None,
            settings={},
            models={},
            standins=[],
            provenance=Provenance(origin="test"),
            extras=extras,
        )
        write_result(path, result)

    write(tmp_path / "offline" / "dev" / "mem0__k20.json", ["CORRECT", "WRONG"], {})
    write(
        tmp_path / "replicates" / "r1" / "offline" / "dev" / "mem0__k20.json", ["CORRECT", "CORRECT"], {"replicate": 1}
    )
    side = load_result_set(str(tmp_path / "**" / "mem0__k20.json"))
    assert sorted(side.replicates) == [0, 1] and len(side.files) == 1  # paired on r0
    assert replicate_accuracies(side, include_unscored=False) == [0.5, 1.0]
