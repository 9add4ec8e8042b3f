"""`turns-rerank` (the v3 paper's T0R): raw turns, a cosine shortlist, one typed relevance request, the top k by
P(relevant); `turns-cosine` is raw-turn-rag under the paper's name; the paper's other arms are import-only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench.data.slices import Slice, load_slice
from bench.errors import ConfigError
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.run.runner import run_arm
from bench.systems import System, SystemContext, build_system
from engram.deciders import RulesDecider, ScriptedDecider
from tests.bench.run_args import run_args


@pytest.fixture(scope="module")
def dev():
    return load_slice("dev")


@pytest.fixture
def context(tmp_path: Path, dev) -> SystemContext:
    return SystemContext(
        stack="offline",
        models={"decide": "offline/rules-decider"},
        gateway=Gateway(local=tmp_path / "cache", subsets=[]),
        run_dir=tmp_path / "run",
        conversation=dev.conversation,
        speakers=dev.speakers,
        embedder=shared_minilm(),
    )


def _scripted_system(context: SystemContext, dev: Slice, scripted: ScriptedDecider, shortlist: int = 30) -> System:
    system = build_system("turns-rerank", {"shortlist": shortlist}, context)
    system.decider = scripted  # type: ignore[attr-defined]  # the test writes the decide model's answers down
    for message in dev.messages:
        system.write(message)
    return system


def test_the_judged_relevant_turn_moves_to_the_top_of_the_shortlist(context: SystemContext, dev) -> None:
    question = next(q for q in dev.questions if len(q.evidence) == 1)
    cosine = build_system("raw-turn-rag", {}, context)
    for message in dev.messages:
        cosine.write(message)
    by_cosine = [s[0] for s in cosine.retrieve(question, 30).sources]
    promoted = by_cosine[17]  # far down the cosine ranking, still inside the 30-turn shortlist
    text = next(m.text for m in dev.messages if m.id == promoted)
    scripted = ScriptedDecider().on("relevant_to_query", 0.97, memory=text)
    system = _scripted_system(context, dev, scripted)

    retrieval = system.retrieve(question, 3)
    assert retrieval.sources[0] == (promoted,)
    # ONE request, one relevance ask per shortlisted turn, the question as the query
    assert len(scripted.requests) == 1
    state, asks = scripted.requests[0]
    assert state == {"query": question.question} and len(asks) == 30
    assert {a.question.id for a in asks} == {"relevant_to_query"}
    # every other turn got the same P(relevant), so they keep the cosine order
    assert [s[0] for s in retrieval.sources[1:]] == [t for t in by_cosine if t != promoted][:2]
    assert retrieval.details[0]["p_relevant"] == pytest.approx(0.97)
    # the ranking does not depend on k: a small budget is a prefix of a larger one
    assert system.retrieve(question, 3).lines == system.retrieve(question, 12).lines[:3]


def test_beyond_the_shortlist_the_turns_continue_by_cosine(context: SystemContext, dev) -> None:
    system = _scripted_system(context, dev, ScriptedDecider(), shortlist=5)
    question = dev.questions[0]
    retrieval = system.retrieve(question, 8)
    assert [d["found_by"] for d in retrieval.details] == ["rerank"] * 5 + ["cosine"] * 3
    assert retrieval.notes["shortlist"] == 5
    assert len(system.retrieve(question, None).lines) == len(dev.messages)


def test_a_failed_request_falls_back_to_the_cosine_order_and_says_so(context: SystemContext, dev) -> None:
    scripted = ScriptedDecider(fail_next=1)
    system = _scripted_system(context, dev, scripted)
    question = dev.questions[1]
    degraded = system.retrieve(question, 4)
    assert degraded.notes.get("degraded") is True
    assert all(d["p_relevant"] is None for d in degraded.details)
    cosine = build_system("raw-turn-rag", {}, context)
    for message in dev.messages:
        cosine.write(message)
    assert degraded.lines == cosine.retrieve(question, 4).lines


def test_the_decide_model_is_the_stacks_and_unknown_ones_are_refused(context: SystemContext) -> None:
    assert build_system("turns-rerank", {}, context).decider.name == "rules"
    claude = replace(context, models={"decide": "anthropic/claude-sonnet-4-6"})
    with pytest.raises(ConfigError, match=r"anthropic/claude-sonnet-4-6 cannot serve as a decision backend"):
        build_system("turns-rerank", {}, claude)
    with pytest.raises(ConfigError, match=r"settings\.shortlist: expected int"):
        build_system("turns-rerank", {"shortlist": "30"}, context)


@pytest.mark.slow
def test_turns_rerank_and_turns_cosine_run_on_the_dev_slice_offline(tmp_path: Path) -> None:
    def run(arm: str) -> dict:
        written = run_arm(
            arm,
            "dev",
            *run_args(
                ks=(3,),
                results_root=tmp_path / "results",
                runs_root=tmp_path / "runs",
                cache_dir=tmp_path / "cache",
                progress=False,
            ),
        )
        return json.loads(written[0].read_text())

    rerank, cosine = run("turns-rerank"), run("turns-cosine")
    for result in (rerank, cosine):
        assert result["stack"] == "offline" and result["accuracy"]["n"] == 35 and result["k"] == 3
        assert all(a["lines_shown"] == 3 for a in result["answers"] if a["scored"])
    assert rerank["system"] == "turns-rerank" and cosine["system"] == "raw-turn-rag"
    assert rerank["models"]["decide"] == f"offline/{RulesDecider.model}" and "decide" in rerank["standins"]
    assert rerank["calls"]["misses"] >= 35 * 30  # a relevance ask per shortlisted turn per question

    def evidence(result: dict) -> float:
        values = [a["evidence_recall"] for a in result["answers"] if a["scored"] and a["evidence_recall"] is not None]
        return sum(values) / len(values)

    # On the dev slice the rules stand-in's rerank puts more evidence turns into the top 3 than cosine alone.
    assert evidence(rerank) > evidence(cosine)


@pytest.mark.parametrize("arm", ["engram-v2", "jev-mem", "turns-llm-rerank"])
def test_import_only_arms_are_listed_as_such_and_refuse_to_run(arm: str, tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_ASSUME_YES": "0"}
    listing = subprocess.run([sys.executable, "-m", "bench", "arms"], capture_output=True, text=True, env=env)
    line = next(row for row in listing.stdout.splitlines() if row.startswith(f"{arm} "))
    assert "[import only]" in line
    run = subprocess.run(
        [sys.executable, "-m", "bench", "run", arm, "--slice", "dev", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and "is import-only" in run.stderr
    assert not (tmp_path / "out").exists()
