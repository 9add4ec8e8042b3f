"""The gateway as a run meets it: modes, misses that stop the run, the spend guard, the ledger, recorded latency,
batched partial hits, record-mode key lists and crash safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.errors import BudgetExceeded, CacheMiss, ConfigError
from bench.models.budget import Budget, Ledger, RunLabels, estimate_cost_usd
from bench.models.cache import CallRequest, LocalStore, read_keys_file
from bench.models.clock import critical_path_ms, p50_ms
from bench.models.gateway import Gateway, LiveResponse, keys_file_for

REPO = Path(__file__).resolve().parents[3]


def answer_request(question: str, model: str = "claude-sonnet-4-6", max_tokens: int = 1024) -> CallRequest:
    body = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "messages": [{"role": "user", "content": question}],
    }
    return CallRequest("anthropic", "messages", model, body, "answer")


def offline_request(n: int) -> CallRequest:
    return CallRequest("offline", "answer", "answer-standin-v1", {"question": n}, "answer")


def paid_reply(request: CallRequest) -> LiveResponse:
    return LiveResponse(
        body={"content": [{"type": "text", "text": "Boston"}]},
        input_tokens=1000,
        output_tokens=10,
        model=request.model,
        latency_ms=812.4,
    )


def must_not_call(request: object) -> LiveResponse:
    raise AssertionError("the network must not be touched")


def make_gateway(tmp_path: Path, *, mode=None, strict=False, run_limit=20.0, total_limit=100.0, **kw) -> Gateway:
    labels = RunLabels(run_id="run-1", arm="engram", slice_name="dev")
    budget = Budget(Ledger(tmp_path / "ledger.jsonl"), labels, run_limit_usd=run_limit, total_limit_usd=total_limit)
    return Gateway(local=tmp_path / "cache", subsets=[], mode=mode, strict=strict, labels=labels, budget=budget, **kw)


def test_replay_is_the_default_without_a_key_and_a_miss_stops_the_run_naming_the_call(tmp_path: Path) -> None:
    gateway = Gateway(local=tmp_path, subsets=[], environ={})
    assert gateway.mode_for("anthropic") == "replay" and gateway.mode_for("jev") == "replay"
    request = answer_request("Where does Caroline live?")
    with pytest.raises(CacheMiss) as caught:
        gateway.call(request, must_not_call)
    message = str(caught.value)
    for needle in (
        "anthropic",
        "claude-sonnet-4-6",
        "purpose answer",
        request.key(),
        "ANTHROPIC_API_KEY",
        "no network was touched",
    ):
        assert needle in message


def test_live_is_the_default_for_a_provider_whose_key_is_set(tmp_path: Path) -> None:
    gateway = Gateway(local=tmp_path, subsets=[], environ={"TYPESAFE_API_KEY": "k"})
    assert gateway.mode_for("jev") == "live" and gateway.mode_for("anthropic") == "replay"


def test_live_reads_through_and_the_hit_reports_the_recorded_latency_and_nominal_cost(tmp_path: Path) -> None:
    gateway = make_gateway(tmp_path, mode="live")
    first = gateway.call(answer_request("Where?"), paid_reply)
    second = gateway.call(answer_request("Where?"), must_not_call)
    assert not first.cached and second.cached
    assert second.latency_ms == first.latency_ms == 812.4
    assert second.cost_usd == first.cost_usd == pytest.approx((1000 * 3 + 10 * 15) / 1e6)
    assert first.spent_usd == first.cost_usd and second.spent_usd == 0.0
    assert gateway.counts()["anthropic"].hits == 1 and gateway.counts()["anthropic"].misses == 1


def test_replay_from_cache_spends_nothing_and_says_so(tmp_path: Path) -> None:
    make_gateway(tmp_path, mode="live").call(answer_request("Where?"), paid_reply)
    replay = make_gateway(tmp_path, mode="replay")
    assert replay.call(answer_request("Where?"), must_not_call).cached
    assert replay.spent_usd == 0.0
    assert replay.spend_summary().startswith("$0.00 spent") and "none sent" in replay.spend_summary()


def test_a_hit_never_sleeps_unless_sleep_replay_was_asked_for(tmp_path: Path, monkeypatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("bench.models.clock.time.sleep", slept.append)
    make_gateway(tmp_path, mode="live").call(answer_request("Where?"), paid_reply)
    make_gateway(tmp_path, mode="replay").call(answer_request("Where?"), must_not_call)
    assert slept == []
    make_gateway(tmp_path, mode="replay", replay_latency="sleep").call(answer_request("Where?"), must_not_call)
    assert slept == [pytest.approx(0.8124)]


def test_offline_standins_compute_in_replay_but_strict_replay_refuses_any_miss(tmp_path: Path) -> None:
    gateway = make_gateway(tmp_path, mode="replay")
    result = gateway.call(offline_request(1), lambda r: LiveResponse(body={"text": "computed"}))
    assert result.body == {"text": "computed"} and result.cost_usd == 0.0
    strict = make_gateway(tmp_path, mode="replay", strict=True)
    assert strict.call(offline_request(1), must_not_call).cached
    with pytest.raises(CacheMiss, match="strict replay.*answer-standin-v1.*purpose answer"):
        strict.call(offline_request(2), must_not_call)


def test_a_call_that_would_exceed_the_run_budget_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    request = answer_request("Where?", max_tokens=2000)
    estimate = estimate_cost_usd(request)
    gateway = make_gateway(tmp_path, mode="live", run_limit=estimate * 0.9)
    with pytest.raises(BudgetExceeded, match="run budget.*claude-sonnet-4-6 answer call.*not sent"):
        gateway.call(request, must_not_call)
    assert not (tmp_path / "ledger.jsonl").exists()


def test_the_cumulative_budget_counts_what_earlier_runs_spent(tmp_path: Path) -> None:
    Ledger(tmp_path / "ledger.jsonl").append({"run_id": "old", "provider": "anthropic", "usd": 99.99})
    gateway = make_gateway(tmp_path, mode="live", total_limit=100.0)
    with pytest.raises(BudgetExceeded, match="cumulative budget"):
        gateway.call(answer_request("Where?"), must_not_call)


def test_only_misses_spend_and_each_is_appended_to_the_ledger_at_once(tmp_path: Path) -> None:
    gateway = make_gateway(tmp_path, mode="live")
    gateway.call(answer_request("one"), paid_reply)
    gateway.call(answer_request("one"), must_not_call)
    gateway.call(answer_request("two"), paid_reply)
    records = Ledger(tmp_path / "ledger.jsonl").records()
    assert [r["run_id"] for r in records] == ["run-1", "run-1"]
    assert {r["arm"] for r in records} == {"engram"} and {r["slice"] for r in records} == {"dev"}
    assert {r["provider"] for r in records} == {"anthropic"} and all(r["time"] for r in records)
    assert sum(r["usd"] for r in records) == pytest.approx(gateway.spent_usd) == pytest.approx(2 * 0.00315)


def test_a_paid_model_without_a_price_is_never_called(tmp_path: Path) -> None:
    gateway = make_gateway(tmp_path, mode="live")
    with pytest.raises(ConfigError, match="expected a price for anthropic/claude-opus-9"):
        gateway.call(answer_request("Where?", model="claude-opus-9"), must_not_call)


def test_a_partly_cached_batch_sends_only_the_missing_requests_together(tmp_path: Path) -> None:
    gateway = make_gateway(tmp_path, mode="live")
    sent: list[list[int]] = []

    def live(batch: list[CallRequest]) -> list[LiveResponse]:
        sent.append([r.body["question"] for r in batch])
        return [LiveResponse(body={"answer": r.body["question"] * 10}) for r in batch]

    gateway.call_batch([offline_request(1), offline_request(2)], live)
    results = gateway.call_batch([offline_request(1), offline_request(2), offline_request(3), offline_request(3)], live)
    assert sent == [[1, 2], [3]]
    assert [r.body["answer"] for r in results] == [10, 20, 30, 30]
    assert [r.cached for r in results] == [True, True, False, False]


def test_record_mode_writes_the_run_key_list_and_last_run_counters_on_close(tmp_path: Path) -> None:
    with make_gateway(tmp_path, mode="record") as gateway:
        gateway.call(answer_request("one"), paid_reply)
        gateway.call(answer_request("one"), must_not_call)
        gateway.call(offline_request(7), lambda r: LiveResponse(body={}))
    keys_path = keys_file_for("run-1", cache_dir=tmp_path / "cache")
    assert read_keys_file(keys_path) == sorted({answer_request("one").key(), offline_request(7).key()})
    last = json.loads((tmp_path / "cache" / "last_run.json").read_text())
    assert (last["hits"], last["misses"], last["run_id"]) == (1, 2, "run-1")


def test_keys_file_location_for_a_result_file(tmp_path: Path) -> None:
    assert keys_file_for(tmp_path / "results" / "engram.json") == tmp_path / "results" / "engram.calls.txt"
    assert keys_file_for(tmp_path / "x.calls.txt") == tmp_path / "x.calls.txt"


def test_latency_figures_come_from_recorded_latencies_along_the_critical_path() -> None:
    # extraction (one call) then three concurrent decisions then one escalation
    assert critical_path_ms([[412.3], [190.0, 240.5, 201.0], [1500.2]]) == 2153.0
    assert critical_path_ms([[], [5.0]]) == 5.0
    assert p50_ms([3.0, 1.0, 2.0, 10.0]) == 2.5 and p50_ms([]) is None


CRASH_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bench.models.cache import CallRequest
    from bench.models.gateway import Gateway, LiveResponse
    cache_dir, log, total = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])

    def live(request):
        with log.open("a") as handle:  # every call actually made ("paid for"), in order
            handle.write(f"{request.body['question']}\\n")
        time.sleep(0.02)
        return LiveResponse(body={"answer": request.body["question"]})

    gateway = Gateway(local=cache_dir, subsets=[])
    for n in range(total):
        gateway.call(CallRequest("offline", "answer", "standin", {"question": n}, "answer"), live)
        print(f"done {n}", flush=True)
    gateway.close()
    print("finished", gateway.counts()["offline"].misses, flush=True)
    """
)


def test_a_run_killed_halfway_reuses_every_call_it_already_made(tmp_path: Path) -> None:
    total, cache_dir, log = 40, tmp_path / "cache", tmp_path / "calls.log"
    args = [sys.executable, "-c", CRASH_WORKER, str(cache_dir), str(log), str(total)]
    first = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
    for line in first.stdout:  # wait until about half the calls are done, then kill without warning
        if line.strip() == "done 19":
            break
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    made_before = [int(n) for n in log.read_text().split()]
    assert 20 <= len(made_before) < total
    stored = {entry_key for entry_key in LocalStore(cache_dir).keys()}
    stored_questions = {
        n
        for n in range(total)
        if CallRequest("offline", "answer", "standin", {"question": n}, "answer").key() in stored
    }
    assert set(range(20)) <= stored_questions  # every call reported done before the kill is on disk

    second = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    made_after = [int(n) for n in log.read_text().split()][len(made_before) :]
    # The second run makes exactly the calls that were never stored, each once, and none it already paid for.
    assert sorted(made_after) == sorted(set(range(total)) - stored_questions)
    assert second.stdout.splitlines()[-1] == f"finished {total - len(stored_questions)}"


def test_calls_in_flight_count_against_the_budget_at_their_estimate(tmp_path: Path) -> None:
    budget = Budget(Ledger(tmp_path / "ledger.jsonl"), RunLabels("run-1"), run_limit_usd=0.05)
    request = answer_request("Where?")
    held = budget.reserve(request, 0.03)
    with pytest.raises(BudgetExceeded, match=r"\$0\.0600, over the \$0\.05 limit"):
        budget.reserve(request, 0.03)  # the first call has not returned yet: both could spend in full
    budget.settle(held, request, 0.01, request.key())
    budget.reserve(request, 0.03)  # now only the real $0.01 is spent
    assert budget.spent_usd == pytest.approx(0.01)


def test_a_damaged_local_entry_stops_the_call_instead_of_being_served(tmp_path: Path) -> None:
    from bench.errors import CacheError

    gateway = make_gateway(tmp_path, mode="live")
    stored = gateway.call(offline_request(5), lambda r: LiveResponse(body={"text": "right"}))
    gateway.local.put_raw(stored.key, gateway.local.get(stored.key).to_json_text().replace("right", "wrong"))
    with pytest.raises(CacheError, match=f"{stored.key} fails its checksum"):
        gateway.call(offline_request(5), must_not_call)
