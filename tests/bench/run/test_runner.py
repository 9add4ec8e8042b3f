"""A researcher runs an arm on a slice and gets result files that replay byte for byte."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.cli.options import parse_ks
from bench.data.slices import Slice, load_slice
from bench.errors import CacheMiss, ConfigError
from bench.models.stacks import ROLES
from bench.results.schema import read_result
from bench.run.runner import plan_run, run_arm
from bench.systems import RetrievedLines, System, WriteUsage, register_system
from tests.bench.run_args import RunArgs, changed, run_args


def tiny_dev() -> Slice:
    """Session 1 of the dev conversation and the dev questions answerable from it: a slice small enough for a test."""
    dev = load_slice("dev")
    messages = tuple(m for m in dev.messages if m.session == 1)
    ids = {m.id for m in messages}
    questions = tuple(replace(q, asked_at=(1,)) for q in dev.questions if q.evidence and set(q.evidence) <= ids)
    assert questions, "session 1 of conv-26 answers at least one dev question"
    return replace(dev, name="dev", messages=messages, questions=questions, checkpoints=(1,))


@pytest.fixture()
def workspace(tmp_path: Path) -> dict[str, Path]:
    arms = tmp_path / "arms"
    arms.mkdir()
    (arms / "turns.toml").write_text('system = "raw-turn-rag"\nk = [2, 5]\n', encoding="utf-8")
    (arms / "everything.toml").write_text('system = "full-context"\n', encoding="utf-8")
    return {"arms": arms, "results": tmp_path / "results", "runs": tmp_path / "runs", "cache": tmp_path / "cache"}


def options_for(ws: dict[str, Path], **changes: object) -> RunArgs:
    base = run_args(
        stack="offline",
        results_root=ws["results"],
        update_committed=True,  # these scenarios read the results/<stack>/<slice>/ layout of a committed tree
        runs_root=ws["runs"],
        cache_dir=ws["cache"],
        subsets=(),
        arms_dir=ws["arms"],
        progress=False,
        slice_loader=lambda name: tiny_dev(),
    )
    return changed(base, **changes)


def without_timing(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("timing")
    return data


def test_a_k_sweep_writes_one_file_per_k_from_one_ingestion(workspace: dict[str, Path]) -> None:
    written = run_arm("turns", "dev", *options_for(workspace))

    assert [p.name for p in written] == ["turns__k2.json", "turns__k5.json"]
    assert all(p.parent == workspace["results"] / "offline" / "dev" for p in written)
    small, large = (read_result(p) for p in written)
    assert small.k == 2 and large.k == 5
    assert all(a.lines_shown <= 2 for a in small.answers)
    assert any(a.lines_shown > 2 for a in large.answers)
    # k=2 shows a prefix of what k=5 shows: one retrieval served both budgets.
    for a, b in zip(small.answers, large.answers):
        assert a.lines == b.lines[: a.lines_shown]
    assert small.stack == "offline"
    assert set(small.standins) == set(ROLES)
    # The roles this run used name the exact stand-in that served them; the others say what the stack declares.
    assert small.models["answer"] == "offline/extractive-answerer-standin-v1"
    assert small.models["count_tokens"] == "offline/local-token-counter-standin-v1"
    assert small.models["decide"] == "offline/rules-decider"
    assert "not the paper's numbers" in small.extras["stack_label"]
    assert small.provenance.arm_hash == small.arm_hash and len(small.arm_hash or "") == 64
    assert small.provenance.dataset_sha256
    assert small.accuracy.n == len(tiny_dev().questions)


def test_every_answer_carries_llm_free_scores(workspace: dict[str, Path]) -> None:
    result = read_result(run_arm("turns", "dev", *options_for(workspace))[1])
    for answer in result.answers:
        assert answer.f1 is not None and 0.0 <= answer.f1 <= 1.0
        assert answer.evidence_recall is not None and 0.0 <= answer.evidence_recall <= 1.0
        assert answer.retrieved_tokens is not None and answer.retrieved_tokens > 0
        assert answer.checkpoint == 1
    # Raw turns at k=5 in a 18-turn session should usually include an evidence turn.
    assert sum(a.evidence_recall or 0 for a in result.answers) > 0


def test_rerunning_on_a_complete_cache_gives_byte_identical_files_except_timing(workspace: dict[str, Path]) -> None:
    first = run_arm("turns", "dev", *options_for(workspace))
    first_data = [without_timing(p) for p in first]
    second = run_arm("turns", "dev", *options_for(workspace))
    second_data = [without_timing(p) for p in second]
    third_data = [without_timing(p) for p in run_arm("turns", "dev", *options_for(workspace))]

    assert second_data == third_data
    # The first run computed the stand-ins' calls; later ones were served by the cache: only the counters differ.
    for a, b in zip(first_data, second_data):
        assert a["calls"]["misses"] > 0 and b["calls"]["misses"] == 0
        a.pop("calls"), b.pop("calls")
        assert a == b


def test_strict_replay_from_the_run_keys_alone_reproduces_the_file(workspace: dict[str, Path], tmp_path: Path) -> None:
    from bench.models.cache import LocalStore, read_keys_file, write_subset

    path = run_arm("turns", "dev", *options_for(workspace))[0]
    run_arm("turns", "dev", *options_for(workspace))  # second run: all hits, the reference bytes
    reference = without_timing(path)
    keys = read_keys_file(workspace["results"] / read_result(path).calls.keys_file)
    store = LocalStore(workspace["cache"])
    subset = tmp_path / "subset"
    write_subset([store.get(key) for key in keys], subset, source="test")
    store.close()

    strict = options_for(workspace, use_local_cache=False, strict=True, subsets=(subset,), ks=(2,))
    replayed = without_timing(run_arm("turns", "dev", *strict)[0])

    assert replayed.pop("provenance")["cache_subset_sha256"]
    reference.pop("provenance")
    assert replayed == reference


def test_strict_replay_names_the_missing_call(workspace: dict[str, Path], tmp_path: Path) -> None:
    empty = tmp_path / "empty-subset"
    from bench.models.cache import write_subset

    write_subset([], empty, source="test")
    strict = options_for(workspace, use_local_cache=False, strict=True, subsets=(empty,))
    with pytest.raises(CacheMiss, match="strict replay: no cached response for offline/"):
        run_arm("turns", "dev", *strict)
    assert not (workspace["results"] / "offline" / "dev" / "turns__k2.json").exists()


@pytest.mark.slow
def test_an_arm_without_k_shows_everything_and_records_k_as_null(workspace: dict[str, Path]) -> None:
    result = read_result(run_arm("everything", "dev", *options_for(workspace))[0])
    assert result.k is None
    assert all(a.lines_shown == len(tiny_dev().messages) for a in result.answers)
    assert all(a.lines is None for a in result.answers)  # the transcript itself is not copied into the result
    assert result.costs.cost_per_1k == 0.0
    assert result.costs.decision_cost_per_1k is None  # no decision layer: not applicable, not zero


def test_k_on_the_command_line_must_be_positive_integers() -> None:
    assert parse_ks("20,3") == (3, 20)
    with pytest.raises(ConfigError, match="--k"):
        parse_ks("three")
    with pytest.raises(ConfigError, match="--k"):
        parse_ks("0")


def test_token_matched_arm_runs_its_prerequisites_and_answers_at_the_closest_k(workspace: dict[str, Path]) -> None:
    arms = workspace["arms"]
    (arms / "sweep.toml").write_text('system = "raw-turn-rag"\nk = [1, 2, 3, 4, 5]\n', encoding="utf-8")
    (arms / "reference.toml").write_text(
        'system = "raw-turn-rag"\nk = 3\n[settings]\nshow_dates = false\n', encoding="utf-8"
    )
    (arms / "matched.toml").write_text(
        'extends = "sweep"\n[token_match]\nsweep_arm = "sweep"\nreference_arm = "reference"\nreference_k = 3\n'
        "ks = [1, 2, 3, 4, 5]\n",
        encoding="utf-8",
    )

    [path] = run_arm("matched", "dev", *options_for(workspace))

    results = workspace["results"] / "offline" / "dev"
    mean = lambda p: (lambda a: sum(x.retrieved_tokens for x in a) / len(a))(read_result(p).answers)  # noqa: E731
    reference = mean(results / "reference__k3.json")
    by_k = {k: mean(results / f"sweep__k{k}.json") for k in range(1, 6)}
    expected_k = min(by_k, key=lambda k: (abs(by_k[k] - reference), k))
    matched = read_result(path)
    assert path.name == f"matched__k{expected_k}.json" and matched.k == expected_k
    info = matched.extras["token_match"]
    assert info["k"] == expected_k and info["reference_tokens"] == pytest.approx(reference)
    assert info["tokens_by_k"][str(expected_k)] == pytest.approx(by_k[expected_k])
    sweep = read_result(results / f"sweep__k{expected_k}.json")
    assert [a.label for a in matched.answers] == [a.label for a in sweep.answers]
    assert [a.evidence_recall for a in matched.answers] == [a.evidence_recall for a in sweep.answers]
    assert matched.arm_hash != sweep.arm_hash


@register_system("test-examined-diary")
class ExaminedDiary(System):
    """Keeps every turn; tidies up once before the final questions; its writes record decision time although it
    declares no decision layer (so the declaration, not the figures, must decide)."""

    DECISION_LAYER = False

    def __init__(self, settings: Any, context: Any) -> None:
        super().__init__(settings, context)
        self.turns: list[str] = []
        self.events: list[str] = []

    def write(self, message: Any) -> WriteUsage:
        self.turns.append(message.text)
        return WriteUsage(decision_ms=5.0, facts=1)

    def before_final_questions(self) -> None:
        self.events.append(f"tidy after {len(self.turns)} turns")

    def retrieve(self, question: Any, k: int | None) -> RetrievedLines:
        self.events.append("retrieve")
        lines = tuple(self.turns[-(k or len(self.turns)) :])
        return RetrievedLines(lines, tuple(() for _ in lines))

    def stats(self) -> dict[str, Any]:
        return {"events": self.events}


def test_the_runner_calls_the_hooks_a_system_declares(workspace: dict[str, Path]) -> None:
    (workspace["arms"] / "diary.toml").write_text('system = "test-examined-diary"\nk = 2\n', encoding="utf-8")

    [path] = run_arm("diary", "dev", *options_for(workspace))

    result = read_result(path)
    events = result.store["events"]
    assert events[0] == f"tidy after {len(tiny_dev().messages)} turns"  # once, before the first final question
    assert events[1:] == ["retrieve"] * len(tiny_dev().questions)
    assert result.latency.decision_p50_ms is None and result.costs.decision_cost_per_1k is None


def write_matched_arms(arms: Path) -> None:
    (arms / "sweep.toml").write_text('system = "raw-turn-rag"\nk = [1, 2, 3]\n', encoding="utf-8")
    (arms / "reference.toml").write_text('system = "full-context"\n', encoding="utf-8")
    (arms / "matched.toml").write_text(
        'extends = "sweep"\n[token_match]\nsweep_arm = "sweep"\nreference_arm = "reference"\nreference_k = 2\n'
        "ks = [1, 2, 3]\n",
        encoding="utf-8",
    )


def test_a_token_matched_arm_is_planned_after_the_results_it_still_lacks(workspace: dict[str, Path]) -> None:
    write_matched_arms(workspace["arms"])
    options = options_for(workspace, run_id="plan-1")
    plan = lambda: [(s.arm.name, s.ks) for s in plan_run("matched", "dev", *options).units]  # noqa: E731

    assert plan() == [("sweep", (1, 2, 3)), ("reference", (2,)), ("matched", (1, 2, 3))]
    run_arm("sweep", "dev", *changed(options, ks=(1, 3)))
    assert plan() == [("sweep", (2,)), ("reference", (2,)), ("matched", (1, 2, 3))]


def test_arms_that_read_each_others_results_in_a_circle_are_refused(workspace: dict[str, Path]) -> None:
    arms = workspace["arms"]
    for me, other in (("ping", "pong"), ("pong", "ping")):
        (arms / f"{me}.toml").write_text(
            f'system = "raw-turn-rag"\n[token_match]\nsweep_arm = "{other}"\nreference_arm = "turns"\n'
            "reference_k = 2\nks = [2]\n",
            encoding="utf-8",
        )
    with pytest.raises(ConfigError, match="circle: ping -> pong -> ping"):
        plan_run("ping", "dev", *options_for(workspace, run_id="plan-2"))


def tiny_locomo_part(conversation: str) -> Slice:
    """Session 1 of one LoCoMo conversation as its `locomo:<conv>` slice, asked the questions answerable from it."""
    whole = load_slice(f"locomo:{conversation}")
    messages = tuple(m for m in whole.messages if m.session == 1)
    ids = {m.id for m in messages}
    questions = tuple(
        replace(q, asked_at=(1,)) for q in whole.questions if q.scored and q.evidence and set(q.evidence) <= ids
    )
    return replace(whole, messages=messages, questions=questions, checkpoints=(1,))


def test_a_pooled_slice_runs_each_conversation_on_a_fresh_store_and_writes_one_result(
    workspace: dict[str, Path],
) -> None:
    from bench.data.slices import pooled

    parts = (tiny_locomo_part("conv-26"), tiny_locomo_part("conv-44"))
    two = pooled("locomo", parts)
    written = run_arm("turns", "locomo", *options_for(workspace, slice_loader=lambda name: two, ks=(5,)))

    assert [p.relative_to(workspace["results"]).as_posix() for p in written] == ["offline/locomo/turns__k5.json"]
    result = read_result(written[0])
    assert [a.question_id for a in result.answers] == [q.id for q in two.questions]
    assert {a.conversation for a in result.answers} == {"conv-26", "conv-44"}
    conv44_turns = {m.text for m in parts[1].messages}
    for answer in result.answers:
        # a conv-26 question never sees a conv-44 turn: each part has its own store
        shown_from_44 = any(line.split("] ", 1)[-1].split(": ", 1)[-1] in conv44_turns for line in answer.lines or [])
        assert shown_from_44 == (answer.conversation == "conv-44")
    assert set(result.store) == {"locomo:conv-26", "locomo:conv-44"}
    assert result.extras["slice"]["parts"] == ["locomo:conv-26", "locomo:conv-44"]
    assert result.extras["messages"] == len(two.messages)
    assert result.metrics["locomo-f1"]["version"] == 2 and "evidence-recall@5" in result.metrics
