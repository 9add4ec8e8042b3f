"""A researcher points the harness at LongMemEval's published files (`--slice longmemeval:<file>`, the folder in
$ENGRAM_LONGMEMEVAL_DIR). The data cannot be downloaded here, so these tests write a small file in its layout."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.cli.program import main
from bench.data.slices import load_slice
from bench.errors import DataError
from bench.results.schema import read_result


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


@pytest.fixture
def lme_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "longmemeval"
    folder.mkdir()
    (folder / "longmemeval_s.json").write_text(json.dumps(ENTRIES))
    monkeypatch.setenv("ENGRAM_LONGMEMEVAL_DIR", str(folder))
    return folder


def test_each_question_is_a_part_with_its_own_haystack_types_and_evidence(lme_dir: Path) -> None:
    the_slice = load_slice("longmemeval:longmemeval_s")
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


def test_an_arm_runs_on_it_offline_with_longmemeval_categories_and_evidence_recall(
    lme_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["engram-bench", "run", "full-context", "--slice", "longmemeval:longmemeval_s", "--out", str(out)]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    result = read_result(out / "full-context.json")
    assert result.slice == "longmemeval:longmemeval_s" and result.stack == "offline"
    by_id = {a.question_id: a for a in result.answers}
    assert by_id["q-car"].category == "single-session-user" and by_id["q-car"].evidence_recall == 1.0
    assert by_id["q-move_abs"].evidence_recall is None  # an abstention question has no evidence turn
    assert set(result.accuracy_by_category) == {"single-session-user", "knowledge-update", "temporal-reasoning"}
    assert by_id["q-days"].f1 is not None  # LLM-free metrics are computed as for any non-LoCoMo question


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
    (lme_dir / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(DataError, match=field):
        load_slice("longmemeval:broken")
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["engram-bench", "run", "raw-turn-rag", "--slice", "longmemeval:broken", "--out", str(out)]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and "broken.json" in err, err
    assert not out.exists()


def test_a_missing_file_names_the_folder_to_set(lme_dir: Path) -> None:
    with pytest.raises(
        DataError, match=r"longmemeval_oracle\.json: expected a LongMemEval file .*\$ENGRAM_LONGMEMEVAL_DIR"
    ):
        load_slice("longmemeval:longmemeval_oracle")
