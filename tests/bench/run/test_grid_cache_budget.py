"""The grid's shared state: cache shards merged into the local cache, and one budget for every worker."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer

from bench.errors import BudgetExceeded
from bench.models.budget import Ledger, RunLabels
from bench.models.cache import CacheEntry, CallRequest, LocalStore
from bench.models.gateway import Gateway, LiveResponse
from bench.run.grid import GridSpec, run_grid
from bench.run.grid.budget import BudgetService, RemoteBudget
from bench.run.grid.shards import merge_shard, shard_cache
from tests.bench.models.test_paper_stack_e2e import plausible_responder, six_message_slice


def entry(key: str, text: str) -> CacheEntry:
    return CacheEntry(
        key=key,
        provider="offline",
        endpoint="answer",
        model="standin",
        purpose="answer",
        replicate=0,
        body={"text": text},
        input_tokens=3,
        output_tokens=1,
        cost_usd=0.0,
        latency_ms=1.5,
        recorded_at="2026-12-03T00:00:00+00:00",
    )


def test_shards_merge_without_losing_an_entry_and_a_shared_key_keeps_one_entry(tmp_path: Path) -> None:
    local = tmp_path / "local"
    LocalStore(local).add(entry("a" * 64, "already in the local cache"))
    shards = [tmp_path / "shard-1", tmp_path / "shard-2"]
    for number, shard in enumerate(shards, start=1):
        store = LocalStore(shard_cache(shard))
        for i in range(50):
            store.add(entry(f"{number}{i:063d}", f"shard {number} entry {i}"))
        store.add(entry("b" * 64, f"computed by both, first by shard {number}"))
        store.add(entry("a" * 64, f"shard {number}'s copy of the local entry"))
        store.close()

    merged = [merge_shard(shard, local) for shard in shards]

    store = LocalStore(local)
    assert len(store) == 1 + 50 + 50 + 1  # every entry of both shards, each shared key once
    assert [m.entries for m in merged] == [52, 52] and [m.added for m in merged] == [51, 50]
    assert store.get("a" * 64).body == {"text": "already in the local cache"}  # first writer wins
    assert store.get("b" * 64).body == {"text": "computed by both, first by shard 1"}
    assert all(store.get(f"2{i:063d}") is not None for i in range(50))
    assert not any(shard_cache(shard).exists() for shard in shards)  # merged shards are removed


def test_a_worker_gateway_reads_the_driver_cache_records_into_its_shard_and_keys_replicates_apart(
    tmp_path: Path,
) -> None:
    driver = LocalStore(tmp_path / "driver")
    known = CallRequest("offline", "answer", "standin", {"q": "known"}, "answer")
    driver.add(entry(known.key(), "from the driver"))
    driver.close()
    computed: list[str] = []

    def live(request: CallRequest) -> LiveResponse:
        computed.append(request.key())
        return LiveResponse(body={"text": "computed"})

    fresh = CallRequest("offline", "answer", "standin", {"q": "new"}, "answer")
    with Gateway(local=tmp_path / "shard", subsets=[], read_through=[tmp_path / "driver"]) as gateway:
        assert gateway.call(known, live).cached and gateway.call(known, live).body == {"text": "from the driver"}
        assert not gateway.call(fresh, live).cached
    with Gateway(local=tmp_path / "shard-r1", subsets=[], read_through=[tmp_path / "driver"], replicate=1) as other:
        assert not other.call(known, live).cached  # replicate 1 keys the same request afresh
    assert computed == [fresh.key(), replace(known, replicate=1).key()]
    assert len(LocalStore(tmp_path / "driver")) == 1  # read through, never written
    assert fresh.key() in set(LocalStore(tmp_path / "shard").keys())


def test_one_budget_service_never_lets_concurrent_workers_pass_its_limit(tmp_path: Path) -> None:
    ledger = tmp_path / "spend_ledger.jsonl"
    service = BudgetService(str(ledger), "grid-test", limit_usd=1.0, total_limit_usd=100.0)
    request = CallRequest("anthropic", "messages", "claude-sonnet-4-6", {"max_tokens": 10}, "answer")
    sent: list[int] = []
    refused: list[str] = []

    start = threading.Barrier(4)  # all four reserve against the same limit at once

    def worker(me: int) -> None:
        budget = RemoteBudget(lambda method, *args: getattr(service, method)(*args), RunLabels(f"w{me}"), f"u{me}")
        start.wait()
        for i in range(40):
            try:
                reservation = budget.reserve(request, 0.05)
            except BudgetExceeded as exc:
                refused.append(str(exc))
                return
            sent.append(me)
            budget.settle(reservation, request, 0.04, f"{me}-{i}")

    threads = [threading.Thread(target=worker, args=(me,)) for me in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(refused) == 4 and all("grid grid-test (limit $1.00" in r for r in refused)
    spent = Ledger(ledger).total_usd()
    assert spent <= 1.0 and spent == pytest.approx(0.04 * len(sent))
    assert spent > 1.0 - 0.05 - 0.04  # stopped at the limit, not far below it
    assert service.held_usd() == 0.0
    # Which workers got a call in before the limit is the scheduler's choice (one may win them all); every spend is
    # labelled with the worker that made it.
    assert {r["run_id"] for r in Ledger(ledger).records()} <= {f"w{me}" for me in range(4)}


def costly(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    status, headers, reply = plausible_responder(path, body)
    if path == MESSAGES:
        reply["usage"] = {"input_tokens": 2_000, "output_tokens": 200}
    return status, headers, reply


@pytest.mark.slow
def test_two_workers_share_one_grid_budget_the_rest_is_refused_not_overspent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 0.16  # one unit of mem0 on six messages costs about $0.054 here (calls held at up to $0.022): two fit
    cache = tmp_path / "cache"
    with FakeModelServer(costly) as anthropic:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
        spec = GridSpec(
            arms=("mem0",), slices=("dev",), replicates=4, stack="paper", workers=2, budget_usd=budget,
            out=tmp_path / "out",
        )  # fmt: skip
        report = run_grid(
            spec,
            slice_loader=lambda name: six_message_slice(),
            cache_dir=cache,
            runs_root=tmp_path / "runs",
            mode="live",
            assume_yes=True,
            progress=False,
            say=lambda line: None,
        )
        answered = anthropic.count(MESSAGES)
    statuses = [r.status for r in report.units.values()]
    records = Ledger(cache / "spend_ledger.jsonl").records()
    billed = [r for r in records if r["usd"] > 0]
    assert "refused" in statuses and "ran" in statuses, statuses  # the budget admitted only part of the grid
    assert billed, "expected some paid calls to be admitted"
    assert sum(r["usd"] for r in records) <= budget  # never overspent, across both workers
    assert len(billed) == answered  # every call the server answered was priced, reserved and settled
    assert len({r["key"] for r in billed}) == len(billed)
    refused = [r.message for r in report.units.values() if r.status == "refused"]
    assert refused and all(f"limit ${budget:.2f}, --budget" in m for m in refused)
    # what the paid calls returned was merged into the local cache, refused units included
    assert {r["key"] for r in billed} <= set(LocalStore(cache).keys())
    assert "| refused |" in (tmp_path / "out" / "grid-summary.md").read_text(encoding="utf-8")
