"""A researcher asks how lenient a judge is before trusting its accuracy: `engram-bench judge-probe` grades answers
planted to be wrong (a shifted date, a swapped name or count, a vague answer on the right topic, the LoCoMo audit's
probe set) and reports the share the judge accepted, with Wilson intervals, overall, per kind and per category."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.analysis.judge_probe import (
    AUDIT_PROBE_FILE,
    audit_items,
    read_report,
    summary_rows,
)
from bench.analysis.planted import (
    SPECIFIC_BUT_WRONG,
    VAGUE_BUT_TOPICAL,
    hedged_range,
    hypernym,
    plants_for,
    shifted_date,
    swapped_name,
    swapped_number,
)
from bench.vocab import DATA_DIR
from tests.cli_main import exit_code_of


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    code = exit_code_of(args, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- the planted answers ---------------------------------------------------------------------------------------


def test_a_date_is_moved_by_a_few_days_a_month_or_a_year_never_left_as_it_was() -> None:
    assert shifted_date("Ottilie repotted the fern on 12 March 2021") == "Ottilie repotted the fern on 15 March 2021"
    assert shifted_date("the 29th of nothing, then 28 February 2019") == "the 29th of nothing, then 25 February 2019"
    assert shifted_date("September 3, 2020") == "September 6, 2020"
    assert shifted_date("late December 2018") == "late January 2018"
    assert shifted_date("in 1998") == "in 1997"
    assert shifted_date("a rainy afternoon") is None


def test_a_vague_answer_widens_a_date_to_its_season_and_a_count_to_a_handful() -> None:
    assert hedged_range("4 August 2022") == "Sometime around the summer of 2022"
    assert hedged_range("2011") == "Some time in the 2010s"
    assert hedged_range("three goldfish") == "A handful, more or less"
    # a long answer that merely contains a number word is not a count
    assert hedged_range("He said one day he would sail around the cape with his uncle and aunt") is None


def test_a_count_changes_but_the_day_of_a_date_is_left_to_the_date_generator() -> None:
    assert swapped_number("two ferrets") == "four ferrets"
    assert swapped_number("7 bikes") == "8 bikes"
    assert swapped_number("The week before 6 July 2023") is None
    assert swapped_number("It was one of the reasons she stayed in the choir for so long") is None


def test_a_name_is_swapped_for_the_other_person_of_the_conversation() -> None:
    assert swapped_name("Bram's cousin from Ghent", ["Odile", "Bram"]) == "Odile's cousin from Ghent"
    assert swapped_name("nobody named here", ["Odile", "Bram"]) is None
    assert swapped_name("Bram", ["Bram"]) is None  # one person: nobody to swap with


def test_a_concrete_thing_becomes_its_broad_class() -> None:
    assert hypernym("She bought a ukulele") == "Something to do with a musical instrument"
    assert hypernym("Kayaking on the river") == "Something to do with an outdoor activity"
    assert hypernym("Quantum chromodynamics") is None


def test_every_plant_is_wrong_and_names_its_family() -> None:
    plants = plants_for("Wenceslas adopted two kittens on 9 June 2020", ["Wenceslas", "Marit"])
    kinds = {p.kind: p for p in plants}
    assert set(kinds) == {"shifted-date", "swapped-name", "hedged-range", "hypernym"}  # 8 words: not a count
    assert kinds["shifted-date"].family == SPECIFIC_BUT_WRONG
    assert kinds["hypernym"].family == VAGUE_BUT_TOPICAL
    for plant in plants:
        assert "9 June 2020" not in plant.answer or "Wenceslas" not in plant.answer
    # an answer that would still contain the gold is never planted
    assert plants_for("pets") == []


# --- the audit's probe set --------------------------------------------------------------------------------------


def test_the_audit_probe_set_maps_to_our_questions_and_its_recorded_rate_is_the_files_own() -> None:
    document = json.loads((DATA_DIR / AUDIT_PROBE_FILE).read_text(encoding="utf-8"))
    items = audit_items()
    assert len(items) == document["total_questions"]
    assert all(item.category in (1, 2, 3, 4) for item in items)
    recorded = sum(item.recorded or 0.0 for item in items) / len(items)
    assert recorded == pytest.approx(document["accuracy"], abs=1e-12)
    first = next(item for item in items if item.question_id == "conv-26:0")
    assert first.gold == "7 May 2023"


def _digits(text: object) -> list[str]:
    return re.findall(r"\d+", str(text))


def _eval_results(rows: list[dict]) -> dict:
    return {
        "total_questions": len(rows),
        "correct": 0,
        "accuracy": 0.0,
        "detailed_results": {"locomo_exp_user_0": rows},
    }


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([{"question_id": "locomo_0_qa99999", "generated_answer": "x", "category": "2"}], "no such question"),
        ([{"question_id": "locomo_42_qa0", "generated_answer": "x"}], "expected a conversation index below 10"),
        (
            [
                {"question_id": "locomo_0_qa0", "generated_answer": "x", "category": "2"},
                {"question_id": "locomo_0_qa0", "generated_answer": "y", "category": "2"},
            ],
            "expected each question once",
        ),
        ([{"question_id": "locomo_0_qa0", "generated_answer": "x", "category": "4"}], "expected LoCoMo's category 2"),
    ],
)
def test_a_bad_answers_file_is_one_line_and_exit_2_with_nothing_written(
    rows: list[dict], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = tmp_path / "planted.json"
    answers.write_text(json.dumps(_eval_results(rows)), encoding="utf-8")
    out = tmp_path / "probe.json"
    code, _, err = run_cli(
        ["judge-probe", "--judge", "lexical", "--answers", str(answers), "--out", str(out)], capsys, monkeypatch
    )
    assert code == 2
    assert expected in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


# --- grading --------------------------------------------------------------------------------------------------


def test_the_lexical_judge_rejects_every_shifted_date_and_the_report_adds_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "lexical.json"
    code, printed, err = run_cli(
        ["judge-probe", "--judge", "lexical", "--source", "generated", "--slice", "dev", "--out", str(out)],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    report = read_report(out)
    items = report["items"]
    assert report["judge"]["standin"] is True and report["judge"]["metric"].startswith("judge:lexical-judge")
    assert items and all(item["source"] == "generated" for item in items)
    # the lexical stand-in needs every digit of the gold, so a moved day or year is never accepted ...
    digits = [
        item for item in items if item["kind"] == "shifted-date" and _digits(item["gold"]) != _digits(item["answer"])
    ]
    assert digits and all(item["label"] == "WRONG" for item in digits)
    # ... but a moved month is, when the year alone is half the gold's content words: the probe finds that leniency
    assert any(item["label"] == "CORRECT" and item["gold"] == "June 2023" for item in items)
    rows = {row.group.strip(): row for row in summary_rows(report)}
    assert rows["all"].n == len(items)
    assert sum(row.n for name, row in rows.items() if name.startswith("category")) == len(items)
    assert rows["all"].low <= rows["all"].rate <= rows["all"].high
    assert "OFFLINE STAND-IN" in printed and "false-accept rate" in printed


def test_rejudge_prints_the_rate_a_probe_measured_for_its_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.analysis.judge_probe import rate_line

    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    probes = tmp_path / "probes"
    out = probes / "offline" / "lexical.json"
    code, _, err = run_cli(
        [
            "judge-probe",
            "--judge",
            "lexical",
            "--source",
            "generated",
            "--slice",
            "dev",
            "--limit",
            "12",
            "--out",
            str(out),
        ],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    metric = read_report(out)["judge"]["metric"]
    line = rate_line(metric, roots=[probes])
    assert "of 12 planted wrong answers" in line and str(out.name) in line
    assert "not measured" in rate_line("judge:someone-else:abc", roots=[probes])


def test_only_a_judge_on_a_billing_provider_asks_for_yes() -> None:
    from bench.analysis.rejudge import judge_bills, judge_choice

    assert judge_bills(judge_choice("strict", "paper")) is True
    assert judge_bills(judge_choice("mem0-lenient", "local")) is False  # a server on this machine bills nothing
    assert judge_bills(judge_choice("lexical", None)) is False


def test_a_judge_whose_replies_hold_no_label_is_flagged_not_praised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakeservers import CHAT_COMPLETIONS, FakeModelServer, fake_chat_completion

    def shrugging(path: str, body: object) -> tuple[int, dict[str, str], object]:
        if path == CHAT_COMPLETIONS:
            return 200, {}, fake_chat_completion(body, "Hard to say, honestly.")
        return 404, {}, {"error": {"message": path}}

    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-for-the-test-server")
    answers = tmp_path / "planted.jsonl"
    answers.write_text(
        "\n".join(json.dumps({"question_id": f"conv-26:{i}", "answer": "Sometime that year"}) for i in range(3)),
        encoding="utf-8",
    )
    out = tmp_path / "probe.json"
    with FakeModelServer(shrugging) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        code, printed, err = run_cli(
            ["judge-probe", "--judge", "strict", "--stack", "openai", "--answers", str(answers), "--out", str(out)]
            + ["--mode", "record", "--yes"],
            capsys,
            monkeypatch,
        )
    assert code == 0, err
    items = read_report(out)["items"]
    assert [item["label"] for item in items] == ["WRONG"] * 3 and not any(item["readable"] for item in items)
    assert "WARNING: 3 of 3 judge replies held no readable label" in printed
