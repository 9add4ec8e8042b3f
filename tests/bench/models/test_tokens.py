"""Retrieved-token counts: the block the answer prompt carries, net of the empty block (spec §6.2)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.errors import CacheMiss
from bench.models.gateway import Gateway
from bench.models.tokens import (
    EMPTY_BLOCK,
    CountOnce,
    LocalTokenCounter,
    lines_block,
    retrieved_tokens,
    wordpiece_count,
)


@pytest.fixture
def gateway(tmp_path: Path) -> Gateway:
    return Gateway(local=tmp_path / "cache", subsets=[])


class CountingCounter:
    """Counts characters, so the test can predict the figure exactly."""

    model = "chars"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        self.seen.append(text)
        return len(text)


def test_retrieved_tokens_count_the_lines_as_the_prompt_carries_them_minus_the_empty_block() -> None:
    counter = CountingCounter()
    lines = ["8 May, 2023: Caroline is single", "Melanie paints"]
    assert retrieved_tokens(counter, lines) == len(json.dumps(lines, indent=4)) - len("[]")
    assert counter.seen == [json.dumps(lines, indent=4), EMPTY_BLOCK]
    assert retrieved_tokens(counter, []) == 0


def test_local_counter_is_a_wordpiece_count_that_grows_with_the_context(gateway: Gateway) -> None:
    counter = LocalTokenCounter(gateway)
    assert isinstance(counter, LocalTokenCounter) and "standin" in counter.model
    one = retrieved_tokens(counter, ["Caroline went to an LGBTQ support group on 7 May 2023"])
    three = retrieved_tokens(counter, ["Caroline went to an LGBTQ support group on 7 May 2023"] * 3)
    assert 10 < one < three
    # Not truncated at the embedding model's 128-token window.
    long_block = lines_block(["a fairly long memory line about painting sunsets by the lake"] * 40)
    assert wordpiece_count(long_block) > 400


def test_local_counts_go_through_the_gateway_and_replay_strictly(gateway: Gateway, tmp_path: Path) -> None:
    counter = LocalTokenCounter(gateway)
    first = retrieved_tokens(counter, ["Melanie ran a charity race"])
    gateway.close()
    strict = Gateway(local=tmp_path / "cache", subsets=[], strict=True)
    assert retrieved_tokens(LocalTokenCounter(strict), ["Melanie ran a charity race"]) == first
    with pytest.raises(CacheMiss, match="count_tokens"):
        LocalTokenCounter(strict).count("never counted before")


def test_answer_threads_asking_for_the_same_blocks_count_each_one_once() -> None:
    computed: list[str] = []
    release = threading.Event()

    def slow_count(text: str) -> int:
        computed.append(text)
        release.wait(5)
        return len(text)

    count = CountOnce(slow_count)
    transcript = lines_block([f"[8 May, 2023] Caroline: turn {i}" for i in range(200)])
    with ThreadPoolExecutor(max_workers=8) as pool:
        asked = [pool.submit(count, transcript) for _ in range(8)] + [pool.submit(count, EMPTY_BLOCK)]
        release.set()
        counts = [future.result() for future in asked]
    assert counts == [len(transcript)] * 8 + [len(EMPTY_BLOCK)]
    assert sorted(computed, key=len) == [EMPTY_BLOCK, transcript]


def test_a_shared_count_still_goes_through_the_gateway_for_every_question(gateway: Gateway) -> None:
    counter = LocalTokenCounter(gateway)
    block = lines_block(["Melanie paints sunsets", "Caroline went to a support group"])
    first, again = counter.count(block), counter.count(block)
    assert first == again == wordpiece_count(block)
    assert gateway.counts()["offline"].misses == 1 and gateway.counts()["offline"].hits == 1
