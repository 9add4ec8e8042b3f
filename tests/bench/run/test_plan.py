"""`engram-bench plan`: before spending, what a run would send and cost, from the slice, the stack's prices and the
caches; it sends nothing and writes nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fakeservers import FakeModelServer

from bench.data.slices import load_slice
from bench.run.plan import make_plan
from tests.bench.models.test_openai_stack_e2e import cli


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TYPESAFE_API_KEY", "ENGRAM_RUN_BUDGET_USD"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def asked_on_dev() -> int:
    return sum(1 for q in load_slice("dev").questions if q.scored)


def plan_json(argv: list[str], monkeypatch, capsys) -> dict:
    code, out, err = cli(["plan", *argv, "--json"], monkeypatch, capsys)
    assert code == 0, err
    return json.loads(out)


def test_full_context_on_openai_is_two_priced_calls_per_question_and_nothing_is_written(
    sandbox: Path, monkeypatch, capsys
) -> None:
    plan = plan_json(["full-context", "--slice", "dev", "--stack", "openai"], monkeypatch, capsys)
    roles = {r["role"]: r for r in plan["roles"]}
    assert set(roles) == {"answer", "judge", "count_tokens"}  # full-context calls no model when writing
    assert roles["answer"]["calls"] == roles["judge"]["calls"] == asked_on_dev()
    assert roles["answer"]["cached"] == 0 and plan["calls_to_send"] == plan["calls"]
    # output at max_tokens (an upper bound, like the spend guard), priced at gpt-4o-mini's $0.15/$0.60 per million
    assert roles["answer"]["output_tokens"] == 1024 * asked_on_dev()
    expected = sum((r["input_tokens"] * 0.15 + r["output_tokens"] * 0.6) / 1e6 for r in roles.values())
    assert plan["usd"] == pytest.approx(expected) and plan["usd"] > 0
    assert roles["count_tokens"]["usd"] == 0.0
    assert plan["budget"]["allowed"] is True
    assert not (sandbox / "cache").exists() and not (sandbox / "ledger.jsonl").exists()


def test_a_plan_over_the_run_budget_says_so(sandbox: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ENGRAM_RUN_BUDGET_USD", "0.01")
    code, out, _ = cli(["plan", "full-context", "--slice", "dev", "--stack", "openai"], monkeypatch, capsys)
    assert code == 0
    assert "exceeds the per-run limit of $0.01" in out.splitlines()[-1]
    assert plan_json(["full-context", "--stack", "openai"], monkeypatch, capsys)["budget"]["allowed"] is False


def test_mem0_offline_is_fully_cached_by_the_shipped_subset(sandbox: Path, monkeypatch, capsys) -> None:
    plan = plan_json(["mem0", "--slice", "dev", "--stack", "offline", "--k", "20"], monkeypatch, capsys)
    roles = {r["role"]: r for r in plan["roles"]}
    assert roles["extract"]["calls"] == len(load_slice("dev").messages)  # mem0: one extraction per message
    assert plan["calls_to_send"] == 0 and plan["usd"] == 0.0 and plan["cached"] == plan["calls"] > 0


def test_mem0_on_the_paper_stack_prices_every_extraction_at_haikus_rate(sandbox: Path, monkeypatch, capsys) -> None:
    plan = plan_json(["mem0", "--slice", "dev", "--stack", "paper", "--k", "3"], monkeypatch, capsys)
    extract = next(r for r in plan["roles"] if r["role"] == "extract")
    assert extract["model"] == "anthropic/claude-haiku-4-5" and extract["calls"] == len(load_slice("dev").messages)
    # claude-haiku-4-5: $1 / $5 per million; mem0 asks for up to 2000 output tokens per extraction
    assert extract["output_tokens"] == 2000 * extract["calls"]
    assert extract["usd"] == pytest.approx((extract["input_tokens"] * 1.0 + extract["output_tokens"] * 5.0) / 1e6)


def test_after_a_recorded_run_the_plan_counts_its_calls_as_cached(sandbox: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-plan")
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        before = plan_json(["full-context", "--stack", "openai", "--limit", "2"], monkeypatch, capsys)
        code, out, err = cli(
            ["run", "full-context", "--stack", "openai", "--limit", "2", "--mode", "record", "--yes", "--quiet"],
            monkeypatch,
            capsys,
        )
        assert code == 0, err
        banner = out[out.index("run full-context") :].split("\n\n")[0]
        assert "estimate: up to $" in banner and "uncached of 7 calls (0% cached)" in banner
    after = plan_json(["full-context", "--stack", "openai", "--limit", "2"], monkeypatch, capsys)
    assert before["calls"] == after["calls"] == 7 and before["cached"] == 0
    answer = {r["role"]: r for r in after["roles"]}["answer"]
    assert answer["cached"] == answer["calls"] == 2 and answer["usd"] == 0.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "no-such-arm"], "no-such-arm"),
        (["plan", "full-context", "--stack", "cloud"], "--stack: expected one of"),
        (["plan", "full-context", "--slice", "nope"], "nope"),
        # a token-matched arm is planned unit by unit (test_planner.py), but never on a pooled slice
        (["plan", "mem0-token-matched", "--slice", "locomo", "--stack", "paper"], "one conversation at a time"),
    ],
    ids=["unknown arm", "unknown stack", "unknown slice", "token-matched arm on a pooled slice"],
)
def test_bad_plan_input_is_one_line_and_exit_2(sandbox: Path, monkeypatch, capsys, argv, message) -> None:
    code, _, err = cli(argv, monkeypatch, capsys)
    assert code == 2 and message in err and len(err.splitlines()) == 1


def _table(argv: list[str], monkeypatch, capsys) -> list[str]:
    code, out, err = cli(["plan", *argv], monkeypatch, capsys)
    assert code == 0, err
    return out.splitlines()


def test_an_offline_run_whose_calls_are_not_all_cached_is_named_not_called_missing(
    sandbox: Path, monkeypatch, capsys
) -> None:
    # results/offline/dev/engram__k3.json exists: its lines shape the answer prompts, but its call list is only partly
    # in the shipped caches, so the write side cannot be counted by role
    lines = _table(["engram", "--slice", "dev", "--stack", "paper", "--k", "3"], monkeypatch, capsys)
    assert any("prompts with the offline run's lines" in line for line in lines)
    assert not any("no offline run" in line for line in lines), "\n".join(lines)
    extract = next(line for line in lines if line.startswith("extract "))
    assert "n/a" in extract and "offline run found, but" in extract and "in no cache" in extract
    assert any("results/offline/dev/engram__k3.json is found" in line for line in lines)


def test_without_an_offline_run_the_plan_says_so_and_uses_the_bare_prompt(sandbox: Path, monkeypatch, capsys) -> None:
    # no offline run of engram at k=6 on dev is committed
    assert not (Path("results/offline/dev") / "engram__k6.json").exists()
    lines = _table(["engram", "--slice", "dev", "--stack", "paper", "--k", "6"], monkeypatch, capsys)
    extract = next(line for line in lines if line.startswith("extract "))
    assert "no offline run of engram on dev to count calls from" in extract
    assert not any("offline run's lines" in line or "is found" in line for line in lines), "\n".join(lines)


def test_every_count_of_the_plan_is_written_one_way(sandbox: Path, monkeypatch, capsys) -> None:
    # "2,484 2484": the calls column had thousands separators and the cached column none, side by side.
    plan = make_plan("mem0", "dev", "offline", cache_dir=sandbox / "cache", runs_root=sandbox / "runs")
    big = replace(plan, roles=[replace(r, calls=2484, cached=2484) for r in plan.roles])
    rows = "\n".join(big.table()[2:])
    assert "2484" not in rows and "2,484" in rows
    assert "2484" not in big.one_line()
