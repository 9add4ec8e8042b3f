"""A user compares two result sets from the command line: `engram-bench compare A B [C ...]`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.cli.program import main
from bench.results.schema import Answer, Provenance, Result, write_result
from tests.conftest import REPO_ROOT

V1_HELDOUT = REPO_ROOT / "results" / "v1" / "heldout"
needs_v1 = pytest.mark.skipif(not V1_HELDOUT.is_dir(), reason="results/v1 has not been imported")


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "argv", ["engram-bench", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code or 0, captured.out, captured.err


def write_set(
    path: Path,
    arm: str,
    labels: dict[str, bool],
    stack: str = "offline",
    standins: tuple[str, ...] = ("answer", "judge"),
    unscored: dict[str, bool] | None = None,
    slice_name: str = "dev",
    categories: dict[str, str] | None = None,
) -> Path:
    """A small result file: questions 'c1:0', 'c2:3'... with the given correctness (conversation = id prefix);
    scored questions are single-hop unless `categories` names another."""
    answers = [
        Answer(
            question_id=qid,
            conversation=qid.split(":")[0],
            category=(categories or {}).get(qid, category),
            scored=scored,
            question="q?",
            gold="g",
            answer="a",
            label="CORRECT" if ok else "WRONG",
        )
        for group, category, scored in ((labels, "single-hop", True), (unscored or {}, "adversarial", False))
        for qid, ok in group.items()
    ]
    result = Result.build(
        answers=answers,
        arm=arm,
        system=arm.split("-")[0],
        stack=stack,
        slice=slice_name,
        k=3,
        arm_hash=None,
        settings={},
        models={"answer": "answer-standin-v1" if stack == "offline" else "claude-sonnet-4-6"},
        standins=list(standins) if stack == "offline" else [],
        provenance=Provenance(origin="test"),
    )
    return write_result(path, result)


@needs_v1
def test_heldout_engram_k3_against_mem0_k3_reproduces_the_articles_row(capsys, monkeypatch) -> None:
    code, out, _ = run_cli(
        ["compare", str(V1_HELDOUT / "*" / "engram__k3.json"), str(V1_HELDOUT / "*" / "mem0__k3.json"), "--json"],
        capsys,
        monkeypatch,
    )
    assert code == 0
    [report] = json.loads(out)
    overall = report["overall"]
    assert overall["n"] == 610
    assert round(100 * overall["difference"]["estimate"], 1) == 14.9
    assert (round(100 * overall["difference"]["low"], 1), round(100 * overall["difference"]["high"], 1)) == (11.2, 18.7)
    assert f"{overall['mcnemar_p']:.1e}" == "2.4e-14"
    assert overall["cluster"]["clusters"] == 4 and overall["unclustered"]["clusters"] == 610
    assert {row["group"] for row in report["by_conversation"]} == {"conv-30", "conv-41", "conv-42", "conv-43"}
    assert len(report["a"]["files"]) == 4


@needs_v1
def test_text_report_states_g_and_prints_the_unclustered_interval_beside_it(capsys, monkeypatch) -> None:
    code, out, _ = run_cli(
        ["compare", str(V1_HELDOUT / "*" / "engram__k3.json"), str(V1_HELDOUT / "*" / "mem0__k6.json")],
        capsys,
        monkeypatch,
    )
    assert code == 0
    assert "Δ (A − B) over 610 paired questions: +8.7 points" in out
    assert "[+5.2, +12.1]" in out and "exact McNemar p = 1.3e-06" in out
    assert "G=4 conversations" in out and "G=610 questions" in out
    assert "per category:" in out and "open-domain" in out and "per conversation:" in out


def test_a_directory_or_glob_pools_files_by_question_id(tmp_path, capsys, monkeypatch) -> None:
    write_set(tmp_path / "a" / "c1.json", "engram", {"c1:0": True, "c1:1": True})
    write_set(tmp_path / "a" / "c2.json", "engram", {"c2:0": True, "c2:1": False})
    write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": True, "c2:0": False, "c2:1": False})
    code, out, _ = run_cli(
        ["compare", str(tmp_path / "a"), str(tmp_path / "b.json"), "--draws", "200"], capsys, monkeypatch
    )
    assert code == 0
    assert "2 files" in out and "accuracy 3/4" in out and "accuracy 1/4" in out
    assert "+50.0 points" in out  # d = [1, 0, 1, 0]


def test_unscored_questions_count_only_with_all(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c2:0": True}, unscored={"c1:9": False})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": True, "c2:0": True}, unscored={"c1:9": True})
    _, scored_only, _ = run_cli(["compare", str(a), str(b), "--draws", "100"], capsys, monkeypatch)
    _, everything, _ = run_cli(["compare", str(a), str(b), "--draws", "100", "--all"], capsys, monkeypatch)
    assert "over 2 paired questions: +0.0 points" in scored_only
    assert "over 3 paired questions: -33.3 points" in everything


def test_different_stacks_are_announced_loudly(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c2:0": False}, stack="offline")
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c2:0": False}, stack="paper")
    code, out, err = run_cli(["compare", str(a), str(b), "--draws", "100"], capsys, monkeypatch)
    assert code == 0
    first, second = out.splitlines()[:2]
    assert first.startswith("Δ = A − B, in percentage points")
    assert second.startswith("!! STACKS DIFFER: A runs on 'offline', B on 'paper'")
    assert "MODELS DIFFER: answer: answer-standin-v1 vs claude-sonnet-4-6" in out
    assert "offline stand-ins: answer, judge" in out
    # said once, where the reader starts: not again at the bottom, nor a third time on stderr
    assert (out + err).count("STACKS DIFFER") == 1


def test_json_output_keeps_the_warning_on_stderr_once(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c2:0": False}, stack="offline")
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c2:0": False}, stack="paper")
    code, out, err = run_cli(["compare", str(a), str(b), "--draws", "100", "--json"], capsys, monkeypatch)
    assert code == 0 and err.count("STACKS DIFFER") == 1
    assert json.loads(out)[0]["warnings"][0].startswith("STACKS DIFFER")


def test_sides_that_ingested_different_slices_are_warned_about(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c2:0": False})
    b = write_set(tmp_path / "b.json", "engram", {"c1:0": False, "c2:0": False}, slice_name="dev_updates")
    code, out, _ = run_cli(["compare", str(a), str(b), "--draws", "100"], capsys, monkeypatch)
    assert code == 0
    assert "!! DATA DIFFERS: A ingested dev, B ingested dev_updates" in out
    _, same, _ = run_cli(["compare", str(a), str(a), "--draws", "100"], capsys, monkeypatch)
    assert "DATA DIFFERS" not in same


def test_one_conversation_under_its_heldout_and_its_locomo_name_is_the_same_data(tmp_path, capsys, monkeypatch) -> None:
    labels = {"conv-44:0": True, "conv-44:1": False}
    ours = write_set(tmp_path / "ours.json", "engram", labels, slice_name="heldout:conv-44")
    peer = write_set(tmp_path / "peer.json", "imported", labels, slice_name="locomo:conv-44")
    code, out, _ = run_cli(["compare", str(ours), str(peer), "--draws", "100"], capsys, monkeypatch)
    assert code == 0 and "DATA DIFFERS" not in out
    other = write_set(tmp_path / "other.json", "engram", labels, slice_name="heldout:conv-43")
    _, out, _ = run_cli(["compare", str(other), str(peer), "--draws", "100"], capsys, monkeypatch)
    assert "DATA DIFFERS: A ingested heldout:conv-43, B ingested locomo:conv-44" in out


def test_small_categories_get_clipped_intervals_and_a_flag(tmp_path, capsys, monkeypatch) -> None:
    # 12 single-hop questions, A right on all, B on one: Δ = +91.7, whose normal interval would reach +108.7;
    # two open-domain questions both sides got right
    a_labels = {f"c1:{i}": True for i in range(14)}
    b_labels = {f"c1:{i}": i < 3 for i in range(14)}
    a = write_set(tmp_path / "a.json", "engram", a_labels, categories={"c1:0": "open-domain", "c1:1": "open-domain"})
    b = write_set(tmp_path / "b.json", "mem0", b_labels, categories={"c1:0": "open-domain", "c1:1": "open-domain"})
    code, out, _ = run_cli(["compare", str(a), str(b), "--draws", "100"], capsys, monkeypatch)
    assert code == 0
    table = out.split("per category:")[1].split("per conversation:")[0]
    single = next(line for line in table.splitlines() if line.strip().startswith("single-hop"))
    assert "+100.0]" in single and "clipped" in single
    assert "+10" not in single.replace("+100.0]", "")  # nothing past the possible range
    tiny = next(line for line in table.splitlines() if line.strip().startswith("open-domain"))
    assert "[+0.0, +0.0]" in tiny and "n < 10: too few" in tiny
    _, as_json, _ = run_cli(["compare", str(a), str(b), "--draws", "100", "--json"], capsys, monkeypatch)
    rows = {r["group"]: r for r in json.loads(as_json)[0]["by_category"]}
    assert rows["single-hop"]["ci_high"] == 1.0 and rows["single-hop"]["clipped"] is True


def test_mismatched_question_sets_exit_2_naming_the_first_differing_id(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": True, "c1:2": True})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": True, "c1:1": True, "c1:7": True})
    code, out, err = run_cli(["compare", str(a), str(b)], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert "found 'c1:2' in A (engram k=3 [offline]) but not in B (mem0 k=3 [offline])" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "case, expected",
    [
        ("nothing", "found no files"),
        ("two-arms", "expected one arm, k and stack per result set"),
        ("duplicate", "expected each question once, found 'c1:0' in both"),
        ("one-set", "expected at least two result sets"),
        ("not-a-result", "field schema_version is missing"),
    ],
)
def test_bad_input_exits_2_with_one_line(case, expected, tmp_path, capsys, monkeypatch) -> None:
    good = write_set(tmp_path / "good.json", "mem0", {"c1:0": True})
    if case == "nothing":
        args = [str(tmp_path / "missing*.json"), str(good)]
    elif case == "two-arms":
        write_set(tmp_path / "mixed" / "x.json", "engram", {"c1:0": True})
        write_set(tmp_path / "mixed" / "y.json", "mem0", {"c1:1": True})
        args = [str(tmp_path / "mixed"), str(good)]
    elif case == "duplicate":
        write_set(tmp_path / "dup" / "x.json", "engram", {"c1:0": True})
        write_set(tmp_path / "dup" / "y.json", "engram", {"c1:0": False})
        args = [str(tmp_path / "dup"), str(good)]
    elif case == "one-set":
        args = [str(good)]
    else:
        (tmp_path / "other.json").write_text('{"note": "not a result"}', encoding="utf-8")
        args = [str(tmp_path / "other.json"), str(good)]
    code, out, err = run_cli(["compare", *args], capsys, monkeypatch)
    assert code == 2
    assert expected in err and err.count("\n") == 1


def test_a_single_conversation_has_no_cluster_interval_and_says_why(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": True, "c1:2": False})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": True, "c1:2": False})
    code, out, _ = run_cli(["compare", str(a), str(b), "--draws", "100", "--seed", "7"], capsys, monkeypatch)
    assert code == 0
    assert "conversation bootstrap     not computed (G=1: a single conversation)" in out
    assert "(G=3 questions, 100 draws, seed 7)" in out


def test_the_command_default_draws_are_the_statistics_default() -> None:
    import inspect

    from bench.analysis.stats import DEFAULT_DRAWS
    from bench.cli.commands.compare import compare

    assert inspect.signature(compare).parameters["draws"].default.default == DEFAULT_DRAWS


def test_a_model_spelled_with_and_without_its_provider_is_the_same_model() -> None:
    from bench.analysis.compare import same_model

    assert same_model("offline/extractive-answerer-standin-v1", "extractive-answerer-standin-v1")
    assert same_model("claude-haiku-4-5", "anthropic/claude-haiku-4-5")
    assert not same_model("offline/extractive-answerer-standin-v1", "offline/extractive-answerer-standin-v2")
    assert not same_model("openai/gpt-4o-mini", "local/gpt-4o-mini")  # another server is another model


def _rerun_of(committed: Path, tmp_path: Path, models: dict[str, str]) -> Path:
    """The committed result as a fresh run writes it today: the same answers, the models named as now."""
    document = json.loads(committed.read_text(encoding="utf-8"))
    document["models"] = models
    document["standins"] = sorted(models)
    path = tmp_path / committed.name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_real_fresh_raw_turn_rag_run_compared_with_its_committed_result_is_the_same_models_and_answers(
    tmp_path, capsys, monkeypatch
) -> None:
    # The "done when": run the arm now, offline, as a user would, and compare it with the committed file.
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    committed = REPO_ROOT / "results" / "offline" / "dev" / "raw-turn-rag__k20.json"
    code, _, err = run_cli(
        ["run", "raw-turn-rag", "--slice", "dev", "--out", str(tmp_path / "fresh"), "--quiet"], capsys, monkeypatch
    )
    assert code == 0, err
    fresh = tmp_path / "fresh" / committed.name
    code, out, _ = run_cli(["compare", str(fresh), str(committed), "--draws", "100"], capsys, monkeypatch)
    assert code == 0
    assert "MODELS DIFFER" not in out and "STAND-INS DIFFER" not in out
    assert "models: the same in every role both call (answer, count_tokens, judge)" in out
    assert out.count("count_tokens=offline/wordpiece-counter (stand-in v1)") == 2  # one name on both sides
    assert "exact McNemar p = 1.000  (A only 0, B only 0;" in out  # the same answers, judged the same


def test_a_fresh_raw_turn_rag_run_and_its_committed_result_have_the_same_models(tmp_path, capsys, monkeypatch) -> None:
    committed = REPO_ROOT / "results" / "offline" / "dev" / "raw-turn-rag__k20.json"
    # What `run raw-turn-rag --slice dev` records now: the roles it never calls carry the stack's names, the ones
    # it calls the stand-in versions that ran (the committed file names them without the provider).
    fresh = {
        "answer": "offline/extractive-answerer-standin-v1",
        "count_tokens": "offline/local-token-counter-standin-v1",
        "judge": "offline/lexical-judge-standin-v1",
        "decide": "offline/rules-decider",
        "escalate": "offline/rules-decider",
        "extract": "offline/rules-extractor",
        "llm_decider": "offline/rules-decider",
    }
    code, out, _ = run_cli(["compare", str(_rerun_of(committed, tmp_path, fresh)), str(committed)], capsys, monkeypatch)
    assert code == 0
    assert "MODELS DIFFER" not in out and "STAND-INS DIFFER" not in out
    assert "models: the same in every role both call (answer, count_tokens, judge)" in out
    assert "extract=" not in out and "offline stand-ins: answer, count_tokens, judge\n" in out
    # one name per model: the fresh file's `offline/local-token-counter-standin-v1` and the committed file's
    # `local-token-counter-standin-v1` are both shown by the stack's name, with the version that ran
    assert out.count("count_tokens=offline/wordpiece-counter (stand-in v1)") == 2
    assert "standin-v1," not in out and "standin-v1;" not in out

    # A role both call, answered by another model, is still named.
    other = tmp_path / "other"
    other.mkdir()
    changed = _rerun_of(committed, other, fresh | {"answer": "offline/extractive-answerer-standin-v2"})
    code, out, _ = run_cli(["compare", str(changed), str(committed)], capsys, monkeypatch)
    assert (
        "MODELS DIFFER: answer: offline/extractive-answerer (stand-in v2) vs offline/extractive-answerer (stand-in v1)"
        in out
    )
    assert "decide" not in out.split("\n", 2)[1]
