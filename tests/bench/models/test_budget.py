"""The spend guard holds across processes: runs sharing a ledger never pass the cumulative budget together."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer, fake_message

from bench.models.budget import Budget, Ledger, RunLabels
from bench.models.cache import CallRequest

REPO = Path(__file__).resolve().parents[3]
# Each reply bills 1,000 input and 60,000 output tokens of claude-sonnet-4-6: $0.003 + $0.90 = $0.903.
CALL_USD = (1_000 * 3.0 + 60_000 * 15.0) / 1_000_000

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bench.models.providers.anthropic.client import AnthropicLLM
    from bench.errors import BudgetExceeded
    from bench.models.gateway import Gateway

    ready, me, calls, workers = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    llm = AnthropicLLM(Gateway.from_env(mode="live", run_id=f"worker-{me}"))
    (ready / me).touch()
    while len(list(ready.iterdir())) < workers:  # start spending together
        time.sleep(0.01)
    sent = 0
    try:
        for i in range(calls):
            llm.complete(
                role="answer", model="claude-sonnet-4-6", system=None, max_tokens=64_000,
                messages=[{"role": "user", "content": f"worker {me}, question {i}"}],
            )
            sent += 1
    except BudgetExceeded as refused:
        print("refused:", refused, flush=True)
    print("sent", sent, flush=True)
    """
)


def expensive(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    reply = fake_message(body, "an answer")
    reply["usage"] = {"input_tokens": 1_000, "output_tokens": 60_000}
    return 200, {}, reply


def test_three_processes_sharing_a_ledger_never_pass_the_total_budget(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "spend_ledger.jsonl")
    ledger.append({"run_id": "earlier", "provider": "anthropic", "usd": 90.0})
    ready = tmp_path / "ready"
    ready.mkdir()
    workers = 3
    with FakeModelServer(expensive) as server:
        procs = []
        for me in range(workers):
            env = {
                **os.environ,
                "ANTHROPIC_API_KEY": "sk-ant-test-only",
                "ANTHROPIC_BASE_URL": server.url,
                "ENGRAM_LEDGER": str(ledger.path),
                "ENGRAM_CACHE_DIR": str(tmp_path / f"cache-{me}"),
                "ENGRAM_TOTAL_BUDGET_USD": "100",
            }
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", WORKER, str(ready), str(me), "10", str(workers)],
                    cwd=REPO,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        outputs = [proc.communicate(timeout=300) for proc in procs]
        sent_to_server = server.count(MESSAGES)
    for proc, (_out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    sent = sum(int(out.split("sent ")[-1]) for out, _ in outputs)
    # Each alone would have stayed under $100 ($90 + 10 x $0.903); together they must not.
    assert sum("refused: cumulative budget" in out for out, _ in outputs) >= 1
    assert ledger.total_usd() <= 100.0
    assert sent == sent_to_server == len(ledger.records()) - 1
    assert ledger.total_usd() == pytest.approx(90.0 + sent * CALL_USD)
    assert 90.0 + (sent + 1) * CALL_USD > 100.0 - 1.0  # the guard stopped near the limit, not far below it
    with ledger.locked():
        assert ledger.open_reservations() == {}


def test_a_dead_processes_reservation_stops_counting(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "spend_ledger.jsonl")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with ledger.locked():
        mine = ledger.add_reservation(5.0, "alive")
        held = ledger.open_reservations()
        held["gone"] = {**held[mine], "pid": int(dead.stdout), "usd": 50.0}
        ledger.inflight_path.write_text(__import__("json").dumps(held))
        assert set(ledger.open_reservations()) == {mine}
        assert ledger.committed_usd() == pytest.approx(5.0)


def test_a_reservation_counts_for_other_budgets_on_the_same_ledger_until_settled(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "spend_ledger.jsonl")
    first = Budget(ledger, RunLabels("first"), total_limit_usd=1.0)
    second = Budget(Ledger(ledger.path), RunLabels("second"), total_limit_usd=1.0)
    request = CallRequest("anthropic", "messages", "claude-sonnet-4-6", {"max_tokens": 10}, "answer")
    held = first.reserve(request, 0.6)
    with pytest.raises(Exception, match="cumulative budget.*calls in flight included"):
        second.reserve(request, 0.6)
    first.settle(held, request, 0.1, request.key())
    second.release(second.reserve(request, 0.6))  # $0.10 spent + $0.60 held fits under $1


def test_spend_is_flushed_to_disk_before_settling_and_a_free_servers_zero_lines_are_only_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (flushed.append(fd), real_fsync(fd))[1])
    ledger = Ledger(tmp_path / "ledger.jsonl")
    budget = Budget(ledger, RunLabels("run-free-and-paid"))
    local = CallRequest(provider="openai", endpoint="chat.completions", model="llama", body={"n": 1}, purpose="answer")
    paid = CallRequest(provider="anthropic", endpoint="messages", model="claude-sonnet-4-6", body={}, purpose="judge")
    budget.settle(None, local, 0.0, local.key())
    zero_flushes = len(flushed)
    budget.settle(None, paid, CALL_USD, paid.key())
    assert [r["usd"] for r in ledger.records()] == [0.0, CALL_USD]
    assert ledger.total_usd() == pytest.approx(CALL_USD)
    # the first line created the file, so its folder was flushed; the $0 line itself was not, the paid one was
    assert zero_flushes == 1 and len(flushed) == 2
