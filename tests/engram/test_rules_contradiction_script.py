"""`scripts/rules_contradiction_pairs.py` runs offline and prints the three figures next to the article's anchors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from engram.deciders import RulesDecider

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rules_contradiction_pairs.py"


@pytest.fixture(scope="module")
def script(minilm):
    spec = importlib.util.spec_from_file_location("rules_contradiction_pairs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RulesDecider = lambda: RulesDecider(minilm)  # reuse the session's MiniLM instead of loading it again
    return module


def write_pairs(path: Path) -> Path:
    # Made-up pairs in the published file's shape (not the 50 gold pairs), so the test is about the script.
    pairs = [
        {
            "id": "t1",
            "tier": "easy",
            "old": "User lives in Oslo",
            "new": "User lives in Rome",
            "message": "We moved to Rome.",
            "temporal_status": "current",
            "expected": "update",
            "accept": ["update"],
        },
        {
            "id": "t2",
            "tier": "subtle",
            "old": "User lives in Oslo",
            "new": "User might move to Rome",
            "message": "Maybe we'll move to Rome.",
            "temporal_status": "hypothetical",
            "expected": "new",
            "accept": ["new"],
        },
        {
            "id": "t3",
            "tier": "medium",
            "old": "User eats fish",
            "new": "User no longer eats fish",
            "message": "I stopped eating fish.",
            "temporal_status": "current",
            "expected": "negates",
            "accept": ["contradiction", "update"],
        },
    ]
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    return path


def test_the_script_prints_the_three_figures_beside_the_anchors(script, tmp_path):
    app = typer.Typer()
    app.command()(script.main)
    result = CliRunner().invoke(
        app, ["--pairs", str(write_pairs(tmp_path / "pairs.jsonl")), "--details", "--no-updates"]
    )
    assert result.exit_code == 0, result.output
    for figure in ("accepted relation", "temporal status", "false closes"):
        assert figure in result.output
    assert "90.0%" in result.output and "94.0%" in result.output and "48.0%" in result.output
    assert "STAND-IN" in result.output and "on 3 gold" in result.output


def test_negates_is_folded_into_contradiction_only_when_the_accept_set_lacks_it(script, minilm):
    from engram import Decision
    from engram.questions import RELATION_TO_CANDIDATE

    probs = {"new": 0.1, "duplicate": 0.0, "refinement": 0.0, "update": 0.3, "contradiction": 0.25, "negates": 0.35}
    decision = Decision.from_probs(RELATION_TO_CANDIDATE, probs, backend="t", model="t")
    assert script.folded_choice(decision, ["contradiction", "update"]) == "contradiction"  # 0.25 + 0.35
    assert script.folded_choice(decision, ["negates", "update"]) == "negates"


def test_the_update_sets_give_labelled_items_from_the_tuning_conversation_only(script):
    items = script.update_items()
    by_kind = {kind: [i for i in items if i.kind == kind] for kind in {i.kind for i in items}}
    assert len(by_kind["close"]) == 15 and len(by_kind["no_close"]) == 10 and len(by_kind["close_fulfilled"]) == 5
    assert all(i.closes for i in by_kind["chain"] + by_kind["no_temporal_cue"])  # set 2: each value replaces the last
    assert not any(i.closes for i in by_kind["no_close"])
    assert script.tuning_conversations() == {"conv-26"}


@pytest.mark.slow
def test_the_decider_uses_the_relation_temperature_the_script_fits_on_the_update_sets(script, minilm):
    from engram.deciders._rules import RELATION_TEMPERATURE

    pairs = script.relation_pairs(script.update_items())
    scores = script.relation_log_scores(pairs, RulesDecider(minilm))
    assert script.fit_temperature(pairs, scores) == pytest.approx(RELATION_TEMPERATURE, abs=0.01)
    claimed = script.claims(pairs, scores)
    assert claimed and all(label for _, label in claimed.values())  # every change it claims there is one
