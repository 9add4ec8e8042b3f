"""`reproduce-dev` replays committed results from a shipped subset alone and says exactly what differs."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from bench.cli.commands.reproduce import PAPER_COLUMN, reproduce
from bench.models.cache import LocalStore, ShippedSubset, read_keys_file, write_subset
from bench.results.schema import read_result
from bench.run.runner import run_arm
from tests.bench.run.test_runner import tiny_dev
from tests.bench.run_args import run_args


@pytest.fixture()
def shipped(tmp_path: Path) -> dict[str, object]:
    """A committed result for a small arm, and the subset exported from its key list: what the repo ships."""
    arms = tmp_path / "arms"
    arms.mkdir()
    (arms / "turns.toml").write_text('system = "raw-turn-rag"\nk = 4\n', encoding="utf-8")
    options = run_args(
        stack="offline",
        results_root=tmp_path / "results",
        update_committed=True,  # the fixture plays the committed tree
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        arms_dir=arms,
        progress=False,
        slice_loader=lambda name: tiny_dev(),
    )
    committed = run_arm("turns", "dev", *options)[0]
    store = LocalStore(tmp_path / "cache")
    keys = read_keys_file(tmp_path / "results" / read_result(committed).calls.keys_file)
    write_subset([store.get(key) for key in keys], tmp_path / "subset", source="test")
    store.close()
    return {"options": options, "committed": committed, "subset": tmp_path / "subset", "tmp": tmp_path}


def run_reproduce(shipped: dict[str, object]) -> tuple[bool, str]:
    out = StringIO()
    ok = reproduce(
        subset=shipped["subset"],
        committed_root=Path(shipped["committed"]).parent,
        v1_root=Path(shipped["tmp"]) / "no-v1",
        console=Console(file=out, width=200),
        arms=("turns",),
        base_request=shipped["options"].request,
        base_services=shipped["options"].services,
    )
    return ok, out.getvalue()


def test_a_faithful_replay_matches_every_cell(shipped: dict[str, object]) -> None:
    ok, printed = run_reproduce(shipped)
    assert ok, printed
    assert "every cell matches" in printed
    assert "  turns: replayed in " in printed  # one progress line per arm
    assert "OFFLINE stack" in printed
    assert PAPER_COLUMN in printed
    assert "✗" not in printed


def test_a_tampered_committed_result_is_named_cell_by_cell(shipped: dict[str, object]) -> None:
    committed = Path(shipped["committed"])
    data = json.loads(committed.read_text())
    data["store"]["stored"] = 999
    committed.write_text(json.dumps(data))

    ok, printed = run_reproduce(shipped)

    assert not ok
    assert "DIFF turns / facts stored: replayed" in printed
    assert "committed 999" in printed


def test_a_call_missing_from_the_subset_is_named(shipped: dict[str, object]) -> None:
    full = ShippedSubset(Path(shipped["subset"]))
    store_dir = Path(shipped["tmp"]) / "trimmed"
    write_subset([full.get(key) for key in sorted(full.keys())[1:]], store_dir, source="test")

    ok, printed = run_reproduce({**shipped, "subset": store_dir})

    assert not ok
    assert "MISS turns: strict replay: no cached response for offline/" in printed
    assert "key " in printed


def test_reproduce_reads_the_committed_results_and_writes_none_of_them(shipped: dict[str, object]) -> None:
    committed_dir = Path(shipped["committed"]).parent
    before = {p.name: p.read_bytes() for p in committed_dir.iterdir()}
    runs = Path(shipped["options"].services.runs_root)
    runs_before = sorted(runs.rglob("*.json"))

    ok, printed = run_reproduce(shipped)

    assert ok, printed
    assert {p.name: p.read_bytes() for p in committed_dir.iterdir()} == before
    assert sorted(runs.rglob("*.json")) == runs_before  # the replay's results went to a temporary folder


def test_the_llm_free_evidence_recall_is_computed_from_the_replay_and_checked_like_every_cell(
    shipped: dict[str, object],
) -> None:
    committed = Path(shipped["committed"])
    answers = [a for a in read_result(committed).scored_answers() if a.evidence_recall is not None]
    assert answers  # the tiny slice's questions name their evidence turns
    mean = sum(a.evidence_recall for a in answers) / len(answers)
    ok, printed = run_reproduce(shipped)
    assert ok, printed
    assert f"{mean:.3f} @4, {len(answers)} q" in printed  # the arm's k is 4
    assert "LLM-free cells" in printed and "OFFLINE stack's numbers" in printed

    # a committed recall that the replay does not reproduce is a differing cell, named
    data = json.loads(committed.read_text())
    first = next(a for a in data["answers"] if a["scored"] and a["evidence_recall"] is not None)
    first["evidence_recall"] = 0.0 if first["evidence_recall"] else 1.0
    committed.write_text(json.dumps(data))
    ok, printed = run_reproduce(shipped)
    assert not ok
    assert "DIFF turns / evidence recall (LLM-free): replayed" in printed
