"""A harness writes a result file, a reader gets it back; bad files are refused with one line naming the field."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.errors import ResultError
from bench.results.schema import (
    Answer,
    Provenance,
    Result,
    Tally,
    read_result,
    result_path,
    write_result,
)


def _answer(i: int, label: str, category: str = "single-hop", scored: bool = True) -> Answer:
    return Answer(
        question_id=f"conv-30:{i}",
        conversation="conv-30",
        category=category,
        scored=scored,
        question=f"q{i}?",
        gold="g",
        answer="a",
        label=label,
        lines_shown=3,
        retrieved_tokens=100 + i,
    )


def _result(answers: list[Answer]) -> Result:
    return Result.build(
        arm="engram",
        system="engram",
        stack="offline",
        slice="heldout:conv-30",
        k=3,
        arm_hash="abc",
        settings={"flags": {}},
        models={"extract": "rules-extractor-standin-v1"},
        standins=["extract"],
        provenance=Provenance(origin="test"),
        answers=answers,
    )


def test_a_written_result_reads_back_equal_and_byte_stable(tmp_path: Path) -> None:
    result = _result(
        [_answer(0, "CORRECT"), _answer(1, "WRONG", "temporal"), _answer(2, "CORRECT", "adversarial", scored=False)]
    )
    path = result_path(tmp_path, "offline", result.slice, result.arm, result.k)
    assert path == tmp_path / "offline" / "heldout" / "conv-30" / "engram__k3.json"
    write_result(path, result)
    first = path.read_bytes()
    assert read_result(path) == result
    write_result(path, read_result(path))
    assert path.read_bytes() == first
    # adversarial answers are kept but not scored
    assert result.accuracy == Tally(correct=1, n=2, value=0.5)
    assert result.accuracy_by_category["adversarial"] == Tally(1, 1, 1.0)


def test_a_flipped_label_behind_a_stale_summary_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_result(path, _result([_answer(0, "CORRECT"), _answer(1, "CORRECT")]))
    data = json.loads(path.read_text())
    data["answers"][1]["label"] = "WRONG"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=r"r\.json: field accuracy: expected 1/2 as counted from answers"):
        read_result(path)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(schema_version=2), "field schema_version: expected 1"),
        (lambda d: d.pop("arm"), "field arm is missing"),
        (
            lambda d: d.update(stack="cloud"),
            "field stack: expected imported or local or offline or openai or paper or paper-v3",
        ),
        (lambda d: d["answers"][0].update(label="RIGHT"), r"field answers\[0\]\.label: expected CORRECT or WRONG"),
        (
            lambda d: d["answers"][0].update(category="5"),
            r"field answers\[0\]\.category: expected a category a registered dataset declares \(.*multi-hop.*\), found .5.",
        ),
        (lambda d: d.update(surprise=1), "field surprise is not in schema v1"),
        (lambda d: d["answers"][0].update(retrieved_tokens=True), r"answers\[0\]\.retrieved_tokens: expected an int"),
    ],
)
def test_malformed_files_name_the_field(tmp_path: Path, mutate, message: str) -> None:
    path = tmp_path / "r.json"
    write_result(path, _result([_answer(0, "CORRECT")]))
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=message) as info:
        read_result(path)
    assert "\n" not in str(info.value)


def test_the_paper_stack_cannot_carry_standins_and_nothing_is_written(tmp_path: Path) -> None:
    bad = replace(_result([_answer(0, "CORRECT")]), stack="paper")
    path = tmp_path / "paper.json"
    with pytest.raises(ResultError, match="standins: expected the roles served by stand-in providers on the paper"):
        write_result(path, bad)
    assert not path.exists()


def test_a_mixed_stack_lists_exactly_the_roles_its_stand_ins_served(tmp_path: Path) -> None:
    base = _result([_answer(0, "CORRECT")])
    models = {role: "openai/gpt-4o-mini" for role in base.models} | {"decide": "offline/rules-standin-v5"}
    honest = replace(base, stack="openai", models=models, standins=["decide"])
    write_result(tmp_path / "honest.json", honest)
    for claimed in ([], ["decide", "answer"]):
        hidden = replace(honest, standins=claimed)
        with pytest.raises(ResultError, match="standins: expected the roles served by stand-in providers"):
            write_result(tmp_path / "hidden.json", hidden)
    assert not (tmp_path / "hidden.json").exists()
