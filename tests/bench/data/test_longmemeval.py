"""A researcher runs LongMemEval: the oracle split ships (`--slice longmemeval:oracle`, subsets by question type,
abstention and a small sample), and the `s`/`m` splits are brought in $ENGRAM_LONGMEMEVAL_DIR and accepted only with
their published bytes. The user-file tests write a small file in LongMemEval's layout and declare its hash the
published one, since the real `s` and `m` files are not here."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.cli.program import main
from bench.data import longmemeval
from bench.data.slices import load_slice, pooled
from bench.errors import DataError
from bench.models import longmemeval_answer
from bench.models.cache import ShippedSubset, discover_subsets, read_keys_file
from bench.results.schema import read_result
from bench.run.runner import run_arm
from bench.vocab import REPO_ROOT
from tests.bench.run_args import run_args


def entry(qid: str, qtype: str, question: str, answer: Any, sessions: list[list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": answer,
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": [f"{qid}_s{i}" for i in range(len(sessions))],
        "haystack_dates": [f"2023/05/{20 + i:02d} (Sat) 1{i}:05" for i in range(len(sessions))],
        "haystack_sessions": sessions,
        "answer_session_ids": [f"{qid}_s{i}" for i, s in enumerate(sessions) if any(t.get("has_answer") for t in s)],
    }


def turn(role: str, content: str, has_answer: bool | None = None) -> dict[str, Any]:
    return {"role": role, "content": content} | ({"has_answer": has_answer} if has_answer is not None else {})


ENTRIES = [
    entry(
        "q-car",
        "single-session-user",
        "What colour is my new car?",
        "red",
        [
            [turn("user", "I finally bought a car, a red hatchback!", True), turn("assistant", "Congratulations!")],
            [turn("user", "Any tips for a road trip?"), turn("assistant", "Pack snacks and water.")],
        ],
    ),
    entry(
        "q-move_abs",
        "knowledge-update",
        "Which city did I move to last month?",
        "You did not mention moving.",
        [[turn("user", "I love my apartment in Lisbon."), turn("assistant", "Lisbon is lovely.")]],
    ),
    entry(
        "q-days",
        "temporal-reasoning",
        "How many days before the concert did I buy the tickets?",
        3,
        [
            [turn("user", "Bought concert tickets today.", True)],
            [turn("assistant", "How was it?"), turn("user", "The concert tonight was great!", True)],
        ],
    ),
]


def publish(folder: Path, entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """Write `entries` as the `s` split's file and declare its bytes the published ones."""
    path = folder / name
    path.write_text(json.dumps(entries))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    monkeypatch.setitem(longmemeval.PUBLISHED, "s", {name: digest})
    return path


def published_s_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding ENTRIES as the cleaned `s` split, its hash the published one, named by
    $ENGRAM_LONGMEMEVAL_DIR."""
    folder = tmp_path / "longmemeval"
    folder.mkdir()
    publish(folder, ENTRIES, monkeypatch, "longmemeval_s_cleaned.json")
    monkeypatch.setenv("ENGRAM_LONGMEMEVAL_DIR", str(folder))
    return folder


@pytest.fixture
def lme_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return published_s_split(tmp_path, monkeypatch)


def test_the_shipped_oracle_split_has_its_500_questions_by_type_with_their_evidence() -> None:
    oracle = load_slice("longmemeval:oracle")
    questions = [part.questions[0] for part in oracle.parts]
    assert len(oracle.parts) == 500 and len(oracle.messages) == 10_960
    assert Counter(q.category_name for q in questions) == {
        "temporal-reasoning": 133,
        "multi-session": 133,
        "knowledge-update": 78,
        "single-session-user": 70,
        "single-session-assistant": 56,
        "single-session-preference": 30,
    }
    assert sum(q.extra["abstention"] for q in questions) == 30
    assert all(q.extra["answer_session_ids"] for q in questions)
    # the evidence turns are the has_answer ones, each in its question's own haystack
    by_part = {part.conversation: {m.id for m in part.messages} for part in oracle.parts}
    assert all(set(q.evidence) <= by_part[q.conversation] for q in questions)
    assert sum(len(q.evidence) for q in questions) > 500
    assert oracle.sources == ("longmemeval/longmemeval_oracle.json",)


def test_an_oracle_question_is_asked_as_of_its_date_after_sessions_timed_at_their_dates() -> None:
    part = load_slice("longmemeval:oracle").parts[0]
    [q] = part.questions
    assert q.asked_on == q.extra["question_date"] and q.asked_on
    for message in part.messages:
        assert message.timestamp.strftime("%Y/%m/%d") == message.session_date[:10]
    assert max(m.timestamp for m in part.messages) <= longmemeval._Fields(Path("x")).date(q.asked_on, "x")


@pytest.mark.parametrize(
    ("subset", "questions"),
    [("temporal-reasoning", 133), ("single-session-preference", 30), ("abstention", 30), ("sample", 12)],
)
def test_a_subset_of_the_oracle_keeps_only_its_questions(subset: str, questions: int) -> None:
    chosen = load_slice(f"longmemeval:oracle/{subset}")
    assert len(chosen.parts) == len(chosen.questions) == questions
    if subset == "abstention":
        assert all(q.id.endswith("_abs") for q in chosen.questions)
    elif subset == "sample":
        assert set(Counter(q.category_name for q in chosen.questions).values()) == {2}
    else:
        assert {q.category_name for q in chosen.questions} == {subset}


@pytest.mark.parametrize("name", ["longmemeval:xl", "longmemeval:oracle/open-domain", "longmemeval:", "longmemeval:s/"])
def test_an_unknown_split_or_subset_is_one_line_listing_the_accepted_ones(name: str) -> None:
    with pytest.raises(DataError, match=r"expected longmemeval:<split>\[/<subset>\] with split one of oracle, s, m"):
        load_slice(name)


def test_each_question_is_a_part_with_its_own_haystack_types_and_evidence(lme_dir: Path) -> None:
    the_slice = load_slice("longmemeval:s")
    assert [p.conversation for p in the_slice.parts] == ["q-car", "q-move_abs", "q-days"]
    car, move, days = the_slice.parts
    assert [m.id for m in car.messages] == ["q-car_s0:0", "q-car_s0:1", "q-car_s1:0", "q-car_s1:1"]
    assert [m.session for m in car.messages] == [1, 1, 2, 2] and car.checkpoints == (2,)
    assert car.messages[1].timestamp.isoformat() == "2023-05-20T10:05:01+00:00"  # session date + turn index (s)
    assert car.messages[0].speaker == "user" and car.messages[1].speaker == "assistant"
    [q] = car.questions
    assert (q.category_name, q.evidence, q.asked_at, q.gold) == ("single-session-user", ("q-car_s0:0",), (2,), "red")
    assert move.questions[0].extra["abstention"] is True and move.questions[0].evidence == ()
    assert days.questions[0].evidence == ("q-days_s0:0", "q-days_s1:1") and days.questions[0].gold == 3
    summary = the_slice.summary()
    assert summary["messages"] == 9 and summary["questions"] == 3
    assert summary["by_category"] == {"knowledge-update": 1, "single-session-user": 1, "temporal-reasoning": 1}
    assert len(the_slice.dataset_sha256) == 64


def test_an_arm_runs_on_it_offline_and_reports_types_task_average_abstention_and_session_recall(
    lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["engram-bench", "run", "full-context", "--slice", "longmemeval:s", "--out", str(out)]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    result = read_result(out / "full-context.json")
    assert result.slice == "longmemeval:s" and result.stack == "offline"
    by_id = {a.question_id: a for a in result.answers}
    assert by_id["q-car"].category == "single-session-user" and by_id["q-car"].evidence_recall == 1.0
    assert by_id["q-move_abs"].evidence_recall is None  # an abstention question has no evidence turn
    assert set(result.accuracy_by_category) == {"single-session-user", "knowledge-update", "temporal-reasoning"}
    assert by_id["q-days"].f1 is not None  # LLM-free metrics are computed as for any non-LoCoMo question
    # full-context shows every turn, so each evidence session is reached; the abstention question names none
    assert by_id["q-car"].scores and by_id["q-car"].scores["session-recall"] == 1.0
    assert by_id["q-move_abs"].scores and "session-recall" not in by_id["q-move_abs"].scores
    assert result.extras["prompt_protocol"]["judge_rule"] == "correct when the reply contains 'yes'"
    seconds = result.extras["seconds_per_question"]  # each question is its own haystack, timed on its own
    assert set(seconds) == {"q-car", "q-move_abs", "q-days"} and all(s >= 0 for s in seconds.values())
    printed = capsys.readouterr().out
    assert "LongMemEval (judged by the offline stand-in" in printed and "task-averaged" in printed
    assert "abstention 0/1" in printed or "abstention 1/1" in printed
    assert "  temporal-reasoning: " in printed


def test_limit_on_a_pooled_slice_ingests_only_the_haystacks_of_the_questions_it_keeps(
    lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    out = tmp_path / "out"
    argv = ["engram-bench", "run", "raw-turn-rag", "--slice", "longmemeval:s", "--limit", "1", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    result = read_result(out / "raw-turn-rag__k20.json")
    assert [a.question_id for a in result.answers] == ["q-car"] and result.extras["limit"] == {"questions": 1, "of": 3}
    # q-car's own haystack, its 4 turns, and not the other questions' 3 and 3: each question is its own store
    assert result.extras["messages"] == 4
    [store] = (out / "runs").rglob("store")
    assert sorted(p.name for p in store.iterdir()) == ["q-car"]


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (lambda e: e[1].pop("question_type"), r"field \[1\]\.question_type is missing"),
        (lambda e: e[0].update(question_type="multi-hop"), r"field \[0\]\.question_type: expected one of"),
        (lambda e: e[2]["haystack_sessions"][1][0].pop("content"), r"\[2\]\.haystack_sessions\[1\]\[0\]\.content"),
        (lambda e: e[0]["haystack_dates"].pop(), r"field \[0\]\.haystack_sessions: expected as many sessions"),
        (lambda e: e[0]["haystack_dates"].__setitem__(0, "May 20"), r"field \[0\]\.haystack_dates\[0\]: expected"),
        (lambda e: e[0]["haystack_sessions"][0][0].update(has_answer="yes"), r"has_answer: expected true or false"),
    ],
)
def test_a_file_with_a_missing_or_bad_field_is_one_line_and_runs_nothing(
    damage: Any, field: str, lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    broken = json.loads(json.dumps(ENTRIES))
    damage(broken)
    publish(lme_dir, broken, monkeypatch, "longmemeval_s_cleaned.json")
    with pytest.raises(DataError, match=field):
        load_slice("longmemeval:s")
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["engram-bench", "run", "raw-turn-rag", "--slice", "longmemeval:s", "--out", str(out)]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and "longmemeval_s_cleaned.json" in err, err
    assert not out.exists()


def test_a_missing_split_file_names_the_file_and_the_folder_to_set(lme_dir: Path) -> None:
    with pytest.raises(
        DataError,
        match=r"longmemeval_m_cleaned\.json: expected LongMemEval's m split, found no such file.*\$ENGRAM_LONGMEMEVAL_DIR",
    ):
        load_slice("longmemeval:m")


def test_an_s_file_that_is_not_the_published_one_is_refused_in_one_line_before_anything_runs(
    lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    edited = json.loads(json.dumps(ENTRIES))
    edited[0]["answer"] = "blue"  # one changed answer: not the benchmark any more
    (lme_dir / "longmemeval_s_cleaned.json").write_text(json.dumps(edited))
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["engram-bench", "run", "full-context", "--slice", "longmemeval:s", "--out", str(out)]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1, err
    assert "expected the published LongMemEval s split (sha256" in err and "longmemeval_s_cleaned.json" in err
    assert not out.exists()


def _run(arm: str, out: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "argv", ["engram-bench", "run", arm, "--slice", "longmemeval:s", "--out", str(out)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    return out


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: Any, *args: str) -> str:
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["engram-bench", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    return str(capsys.readouterr().out)


def test_compare_view_and_the_paper_table_show_the_longmemeval_numbers(
    lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    folder = tmp_path / "results" / "offline" / "longmemeval" / "s"
    _run("full-context", folder, monkeypatch)
    _run("raw-turn-rag", folder, monkeypatch)
    full, rag = folder / "full-context.json", folder / "raw-turn-rag__k20.json"

    compared = _cli(monkeypatch, capsys, "compare", str(full), str(rag))
    assert "A LongMemEval (judged by the offline stand-in" in compared and "B LongMemEval" in compared
    assert "session recall@all 1.000" in compared  # full-context shows every turn of every session

    page = tmp_path / "report.html"
    _cli(monkeypatch, capsys, "view", str(full), "--out", str(page))
    assert "task-averaged" in page.read_text() and "not LongMemEval&#39;s judge" in page.read_text()

    tables = tmp_path / "paper"
    _cli(
        monkeypatch,
        capsys,
        "paper",
        "table",
        "longmemeval",
        "--stack",
        "offline",
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tables),
    )
    markdown = (tables / "tables" / "longmemeval.md").read_text()
    assert "longmemeval:s" in markdown and "full-context" in markdown and "raw-turn-rag" in markdown
    assert "offline stand-in" in markdown and "task-avg" in markdown


def test_every_committed_oracle_result_replays_from_the_shipped_subsets_without_a_miss() -> None:
    # a replay serves each call a result lists in its .calls.txt from the subsets in cache/ (every one of them, as
    # the gateway reads them); one key in none of them would be a miss
    folder = REPO_ROOT / "results" / "offline" / "longmemeval" / "oracle" / "sample"
    subsets = [ShippedSubset.open(path) for path in discover_subsets()]
    listed = sorted(folder.glob("*.calls.txt"))
    assert {p.name.split("__")[0].removesuffix(".calls.txt") for p in listed} >= {
        "raw-turn-rag",
        "full-context",
        "engram",
    }
    for keys_file in listed:
        missing = [key for key in read_keys_file(keys_file) if all(s.get(key) is None for s in subsets)]
        assert not missing, f"{keys_file.name}: {len(missing)} calls not shipped"
        result = read_result(keys_file.with_name(keys_file.name.replace(".calls.txt", ".json")))
        assert result.slice == "longmemeval:oracle/sample" and len(result.answers) == 12
        # recorded with the questions asked as of their dates, by the code that is here (its commit named)
        assert result.extras["prompt_protocol"] | longmemeval_answer.protocol() == result.extras["prompt_protocol"]
        assert result.provenance.git_commit and not result.provenance.git_dirty


def test_the_committed_whole_oracle_result_replays_from_its_shipped_subset_without_a_miss() -> None:
    # the whole split's results ship their few answer, judge and token-count calls in their own small subset
    folder = REPO_ROOT / "results" / "offline" / "longmemeval" / "oracle"
    subset = ShippedSubset.open(REPO_ROOT / "cache" / "longmemeval-oracle")
    listed = sorted(folder.glob("*.calls.txt"))
    assert "raw-turn-rag__k20.calls.txt" in {p.name for p in listed}
    for keys_file in listed:
        missing = [key for key in read_keys_file(keys_file) if subset.get(key) is None]
        assert not missing, f"{keys_file.name}: {len(missing)} calls not shipped"
        result = read_result(keys_file.with_name(keys_file.name.replace(".calls.txt", ".json")))
        assert result.slice == "longmemeval:oracle" and len(result.answers) == 500
        assert result.extras["prompt_protocol"] | longmemeval_answer.protocol() == result.extras["prompt_protocol"]
        assert result.provenance.git_commit and not result.provenance.git_dirty


# engram's calls are about 2,000 rules-decider decisions a question (~900 bytes each): a type's run lists tens of MB of
# keys and its cache hundreds of MB, so its results ship without them. Every other committed oracle result ships its
# key list and calls (the tests above).
WITHOUT_CALLS = {"engram"}


@pytest.mark.slow
def test_an_oracle_result_shipped_without_its_calls_rerecords_the_same_answers_from_an_empty_cache(
    tmp_path: Path,
) -> None:
    # The offline stand-ins are deterministic and cost $0, so a result whose calls do not ship is checked by running
    # again: the shortest question of each such result and its shortest one judged correct (if any), from an empty local cache
    # and no shipped subset, must get the committed answers, judgments, shown lines, sources and scores at every k.
    root = REPO_ROOT / "results" / "offline" / "longmemeval" / "oracle"
    unshipped = [p for p in sorted(root.rglob("*.json")) if not p.with_suffix(".calls.txt").exists()]
    committed = {p: read_result(p) for p in unshipped}
    assert {r.arm for r in committed.values()} == WITHOUT_CALLS, sorted(str(p) for p in unshipped)
    oracle = {part.conversation: part for part in load_slice("longmemeval:oracle").parts}
    chosen: dict[Path, set[str]] = {}  # result -> the ids of its shortest question and its shortest judged correct
    for path, result in committed.items():
        assert result.slice.startswith("longmemeval:oracle") and len(result.answers) >= 30
        assert result.provenance.git_commit and not result.provenance.git_dirty
        assert result.calls.keys_file and not (path.parent / result.calls.keys_file).exists()
        shortest = sorted(result.answers, key=lambda a: (len(oracle[a.question_id].messages), a.question_id))
        # single-session-preference has none judged correct: its shortest question alone
        chosen[path] = {shortest[0].question_id, *[a.question_id for a in shortest if a.correct][:1]}
    parts = tuple(oracle[qid] for qid in sorted(set().union(*chosen.values())))
    again = pooled("longmemeval:oracle", parts, {"questions": len(parts)})
    out = tmp_path / "out"
    options = run_args(
        stack="offline",
        out=out,
        runs_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        subsets=(),
        progress=False,
        slice_loader=lambda name: again,
    )
    run_arm("engram", "longmemeval:oracle", *options)
    rerun = {path.name: {a.question_id: a for a in read_result(path).answers} for path in out.glob("*.json")}
    for path, result in committed.items():
        for answer in (a for a in result.answers if a.question_id in chosen[path]):
            again_answered = rerun[path.name][answer.question_id]
            assert again_answered == answer, f"{path.relative_to(REPO_ROOT)}: {answer.question_id} differs re-recorded"
