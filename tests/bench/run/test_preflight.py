"""No surprise spending: a run says what it will do before its first call, and a paid live run needs a yes."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from fakeservers import FakeModelServer

from bench.cli.program import main
from bench.data.slices import load_slice
from bench.models.stacks import build_stack
from bench.run.arms import load_arm
from bench.run.preflight import Preflight, SpendEstimate, SpendNotConfirmed, announce_and_confirm, use_estimator
from bench.run.runner import run_arm
from tests.bench.run_args import run_args


class Terminal(io.StringIO):
    """A stdin that says it is a terminal, with the user's typed reply in it."""

    def isatty(self) -> bool:
        return True


def six_messages(name: str):
    dev = load_slice("dev")
    messages = dev.messages[:6]
    questions = tuple(replace(q, asked_at=(1,)) for q in dev.questions[:2])
    return replace(dev, messages=messages, questions=questions, checkpoints=(1,))


def preflight(stack: str, modes: dict[str, str], **changes: object) -> Preflight:
    base = Preflight(
        arm="mem0",
        slice_name="dev",
        stack=build_stack(stack),
        modes=modes,
        strict=False,
        run_limit_usd=20.0,
        total_limit_usd=100.0,
        spent_usd=12.5,
        destination=Path("/somewhere/runs/offline/dev/mem0/r1"),
    )
    return replace(base, **changes)


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.argv", ["engram-bench", *argv])
    try:
        main()
    except SystemExit as exited:
        return int(exited.code or 0)
    return 0


def test_a_key_in_the_environment_does_not_switch_run_to_the_paid_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeModelServer() as anthropic:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
        out = tmp_path / "out"
        code = run_cli(
            ["run", "raw-turn-rag", "--slice", "dev", "--limit", "2", "--out", str(out), "--quiet"], monkeypatch
        )
        assert anthropic.count() == 0
    captured = capsys.readouterr()
    assert code == 0, captured.err
    [written] = sorted(out.glob("*.json"))
    assert json.loads(written.read_text())["stack"] == "offline"
    banner = captured.out.split("\n\n")[0]
    assert banner.startswith("run raw-turn-rag on dev | stack offline")
    assert "mode local" in banner and f"results -> {out}" in banner
    # --out DIR keeps the run's store in DIR too, and the first screen says where
    [store] = (out / "runs" / "offline" / "dev" / "raw-turn-rag").glob("*/store")
    assert f"  store -> {store}\n" in banner + "\n"


def test_the_banner_says_stack_mode_models_budgets_destination_and_estimate() -> None:
    line = preflight("paper", {"anthropic": "replay", "jev": "replay"}, arm_spec=load_arm("mem0")).banner(None)

    lines = line.splitlines()
    assert 4 <= len(lines) <= 12 and max(len(one) for one in lines) < 120  # a few short lines, not one long one
    assert "stack paper" in line and "mode replay" in line
    # one line per model, naming the roles it serves for this arm (mem0 calls no decide or llm_decider)
    assert "  extract: anthropic/claude-haiku-4-5" in lines and "decide" not in line and "llm_decider" not in line
    assert "$20.00 per run, $100.00 total ($12.50 spent so far)" in line
    assert "results -> /somewhere/runs/offline/dev/mem0/r1" in line and "store ->" not in line
    stored = preflight("paper", {"anthropic": "replay"}, store=Path("/somewhere/runs/offline/dev/mem0/r1/store"))
    assert stored.banner(None).endswith("\n  store -> /somewhere/runs/offline/dev/mem0/r1/store")
    assert "estimate: none made" in line
    every_role = preflight("paper", {"anthropic": "replay", "jev": "replay"}).banner(None)  # no arm: all roles
    assert "decide" in every_role and "llm_decider" in every_role
    estimated = preflight("paper", {"anthropic": "live", "jev": "replay"}).banner(SpendEstimate(1.25, 40, "plan"))
    assert "mode anthropic live, jev replay" in estimated and "up to $1.25 for 40 uncached call(s)" in estimated


def test_replaying_the_paid_stack_asks_nothing() -> None:
    said: list[str] = []
    announce_and_confirm(
        preflight("paper", {"anthropic": "replay", "jev": "replay"}),
        assume_yes=False,
        say=said.append,
        stdin=io.StringIO(""),
        environ={},
    )
    assert len(said) == 1


@pytest.mark.parametrize("mode", ["live", "record"])
def test_a_paid_run_that_may_send_calls_needs_yes_when_stdin_is_not_a_terminal(mode: str) -> None:
    live = preflight("paper", {"anthropic": mode, "jev": "replay"})
    with pytest.raises(SpendNotConfirmed, match="stdin is not a terminal; pass --yes or set ENGRAM_ASSUME_YES=1"):
        announce_and_confirm(live, assume_yes=False, say=lambda _: None, stdin=io.StringIO(""), environ={})
    announce_and_confirm(live, assume_yes=True, say=lambda _: None, stdin=io.StringIO(""), environ={})
    announce_and_confirm(
        live, assume_yes=False, say=lambda _: None, stdin=io.StringIO(""), environ={"ENGRAM_ASSUME_YES": "1"}
    )


def test_on_a_terminal_the_user_is_asked_and_a_no_sends_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    live = preflight("paper", {"anthropic": "live", "jev": "live"})
    announce_and_confirm(live, assume_yes=False, say=lambda _: None, stdin=Terminal("y\n"), environ={})
    assert "Proceed? [y/N]" in capsys.readouterr().err
    with pytest.raises(SpendNotConfirmed, match="not confirmed"):
        announce_and_confirm(live, assume_yes=False, say=lambda _: None, stdin=Terminal("\n"), environ={})


def test_an_estimate_that_nothing_will_be_sent_needs_no_yes() -> None:
    previous = use_estimator(lambda _: SpendEstimate(0.0, 0, "plan"))
    try:
        announce_and_confirm(
            preflight("paper", {"anthropic": "live", "jev": "live"}),
            assume_yes=False,
            say=lambda _: None,
            stdin=io.StringIO(""),
            environ={},
        )
    finally:
        use_estimator(previous)


def test_an_unconfirmed_live_run_stops_before_any_call_or_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.delenv("ENGRAM_ASSUME_YES", raising=False)
    options = run_args(
        stack="paper",
        ks=(3,),
        runs_root=tmp_path / "runs",
        out=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        slice_loader=six_messages,
        say=lambda _: None,
    )
    with FakeModelServer() as anthropic, FakeModelServer() as jev:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("TYPESAFE_URL", jev.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key")
        with pytest.raises(SpendNotConfirmed):
            run_arm("raw-turn-rag", "dev", *options)
        assert anthropic.count() == 0 and jev.count() == 0
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()
