"""A run keeps at most the stack's `concurrency` live calls in flight to a provider, however many conversations of a
pooled slice ingest and answer at once (issue 22, item 3: one knob, `--concurrency` over it)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakeservers import FakeModelServer, schema_valid_responder

from bench.data.slices import Slice, load_slice, pooled
from bench.models.stacks import build_stack
from bench.run.inflight import InFlight
from bench.run.runner import run_arm
from engram.testing import HashEmbedder
from tests.bench.run_args import run_args


class Gauge:
    """How many calls are inside at once, and the most seen."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.now -= 1


def slow(gauge: Gauge, seconds: float) -> Callable[[Any], Any]:
    def live(missing: Any) -> Any:
        with gauge:
            time.sleep(seconds)
        return missing

    return live


def test_eight_threads_sending_to_a_server_of_concurrency_two_have_two_calls_out_at_most() -> None:
    local = build_stack("local")  # stacks/local.toml: its one provider, openai, declares concurrency = 2
    gauge = Gauge()
    send = InFlight(local).bounded("openai", slow(gauge, 0.02))
    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gauge.most == 2


def test_an_event_loop_and_threads_share_the_same_slots() -> None:
    gauge = Gauge()
    bound = InFlight(build_stack("local"), override=3)  # --concurrency 3 over the file's 2
    threaded = bound.bounded("openai", slow(gauge, 0.03))

    async def one(n: int) -> int:
        with gauge:
            await asyncio.sleep(0.03)
        return n

    async def many() -> list[int]:
        send = bound.abounded("openai", one)
        return list(await asyncio.gather(*(send(n) for n in range(6))))

    threads = [threading.Thread(target=threaded, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    assert asyncio.run(many()) == list(range(6))  # every call still answered, in its own order
    for thread in threads:
        thread.join()
    assert gauge.most == 3


def test_a_stand_in_computes_here_and_takes_no_slot() -> None:
    gauge = Gauge()
    send = InFlight(build_stack("offline"), override=1).bounded("offline", slow(gauge, 0.02))
    threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gauge.most > 1


# ------------------------------------------------------------------ a whole run against a slow local model server


def first_session(conversation: str) -> Slice:
    whole = load_slice(f"locomo:{conversation}")
    said = tuple(m for m in whole.messages if m.session == 1)[:6]
    asked = tuple(replace(q, asked_at=(1,)) for q in whole.questions if q.scored)[:3]
    return replace(whole, messages=said, questions=asked, checkpoints=(1,))


def three_conversations(_: str) -> Slice:
    return pooled("three-first-sessions", tuple(first_session(c) for c in ("conv-26", "conv-41", "conv-47")))


def test_three_conversations_ingesting_and_answering_keep_two_calls_at_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gauge = Gauge()

    def slow_model(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        with gauge:
            time.sleep(0.03)
        return schema_valid_responder(path, body)

    arms = tmp_path / "arms"
    arms.mkdir()
    (arms / "facts.toml").write_text('system = "engram"\nk = 4\n', encoding="utf-8")
    with FakeModelServer(slow_model) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        options = run_args(
            stack="local",
            mode="record",
            runs_root=tmp_path / "runs",
            cache_dir=tmp_path / "cache",
            subsets=(),
            out=tmp_path / "out",
            arms_dir=arms,
            progress=False,
            slice_loader=three_conversations,
            say=lambda _: None,
            embedder=HashEmbedder(),
            assume_yes=True,
        )
        run_arm("facts", "locomo", *options)
        sent = server.count()
    assert sent > 20  # the conversations' extractions and decisions and the nine answers all went out
    assert gauge.most == 2  # stacks/local.toml's concurrency, never more, and it was used
