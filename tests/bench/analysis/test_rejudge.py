"""A researcher checks how much a number depends on the judge: `engram-bench rejudge` grades stored answers again
(the lexical stand-in, mem0's lenient prompt, a strict prompt) into new files that point at the originals, and
`compare ORIGINAL REJUDGED` reports how far the two judgings agree."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakeservers import MESSAGES, FakeModelServer, default_responder, fake_message

from bench.results.schema import Answer, Provenance, Result, read_result, write_result
from tests.cli_main import exit_code_of


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    code = exit_code_of(args, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# question, gold, answer: two exact, two on the topic but with a changed fact, two wrong
ROWS = [
    ("When did Caroline go to the support group?", "7 May 2023", "She went on 7 May 2023."),
    ("What did Melanie paint?", "a lake sunrise", "Melanie painted a lake sunrise."),
    ("Where did Jon travel?", "Paris and Rome", "Jon travelled to Paris."),
    ("How many kids does Melanie have?", "3", "Melanie has kids, maybe 2."),
    ("What is Caroline's job?", "counselor", "She did not say."),
    ("What pet does Jon own?", "a dog named Max", "No information available."),
]


def answers_file(path: Path, labels: list[str]) -> Path:
    answers = [
        Answer(
            question_id=f"conv-26:{i}",
            conversation="conv-26",
            category="single-hop",
            scored=True,
            question=q,
            gold=g,
            answer=a,
            label=label,
            f1=0.25,
        )
        for i, ((q, g, a), label) in enumerate(zip(ROWS, labels, strict=True))
    ]
    result = Result.build(
        answers=answers,
        arm="mem0",
        system="mem0",
        stack="offline",
        slice="locomo:conv-26",
        k=20,
        arm_hash=None,
        settings={},
        models={"judge": "offline/lexical-judge-standin-v1", "answer": "offline/extractive-answerer-standin-v1"},
        standins=["answer", "judge"],
        provenance=Provenance(origin="test"),
        metrics={"judge:lexical-judge-standin-v1:rules-v2": {"field": "answers[].label"}},
    )
    return write_result(path, result)


def test_a_lexical_rejudging_is_a_new_file_pointing_at_the_untouched_original(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = answers_file(tmp_path / "mem0__k20.json", ["CORRECT"] * 6)  # a generous first judging
    before = original.read_bytes()

    code, out, err = run_cli(
        ["rejudge", str(original), "--judge", "lexical", "--out", str(tmp_path / "rj")], capsys, monkeypatch
    )

    assert code == 0, err
    [target] = (tmp_path / "rj" / "lexical").rglob("mem0__k20.json")
    assert original.read_bytes() == before
    again = read_result(target)
    assert again.provenance.origin == "rejudge"
    assert again.provenance.sources[0].sha256 == hashlib.sha256(before).hexdigest()
    assert again.extras["rejudge"]["judge_before"] == "judge:lexical-judge-standin-v1:rules-v2"
    assert [a.answer for a in again.answers] == [r[2] for r in ROWS] and {a.f1 for a in again.answers} == {0.25}
    labels = [a.label for a in again.answers]
    assert labels[:2] == ["CORRECT", "CORRECT"] and labels[4:] == ["WRONG", "WRONG"]
    assert again.accuracy.correct == labels.count("CORRECT")

    code, out, _ = run_cli(["compare", str(original), str(target)], capsys, monkeypatch)
    wrong = labels.count("WRONG")
    assert f"percent agreement {100 * (6 - wrong) / 6:.1f}% ({6 - wrong}/6)" in out
    assert f"A CORRECT / B WRONG {wrong}, A WRONG / B CORRECT 0" in out
    assert "Cohen's kappa 0.000" in out  # the first judging said CORRECT throughout: no agreement beyond chance


def judge_server_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """A judge that is generous with mem0's prompt (same topic is enough) and strict with ours (every fact)."""
    if path != MESSAGES:
        return default_responder(path, body)
    content = body["messages"][0]["content"]
    strict = "Be strict" in content
    # the last occurrence: mem0's prompt shows a worked example (its own "Gold answer:") before the real one
    gold = re.findall(r"(?:Gold|Reference) answer: (.*)", content)[-1]
    answer = re.findall(r"(?:Generated answer|Answer to grade): (.*)", content)[-1]
    exact = gold.lower().removeprefix("a ") in answer.lower()
    on_topic = exact or any(word in answer for word in ("Paris", "kids"))
    label = "CORRECT" if (exact if strict else on_topic) else "WRONG"
    return 200, {}, fake_message(body, f'Checked. {{"label": "{label}"}}')


def test_lenient_and_strict_prompts_disagree_where_a_fact_changed_and_kappa_says_how_much(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = answers_file(tmp_path / "mem0__k20.json", ["WRONG"] * 6)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-FAKE-0123456789abcdef")
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    with FakeModelServer(judge_server_responder) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for prompt in ("mem0-lenient", "strict"):
            code, _, err = run_cli(
                ["rejudge", str(original), "--judge", prompt, "--stack", "paper", "--yes", "--out", str(tmp_path)],
                capsys,
                monkeypatch,
            )
            assert code == 0, err
        judged = len([r for r in server.requests if r.path == MESSAGES])
    assert judged == 12
    lenient = next((tmp_path / "paper-mem0-lenient").rglob("mem0__k20.json"))
    strict = next((tmp_path / "paper-strict").rglob("mem0__k20.json"))
    assert [a.label for a in read_result(lenient).answers] == ["CORRECT"] * 4 + ["WRONG"] * 2
    assert [a.label for a in read_result(strict).answers] == ["CORRECT"] * 2 + ["WRONG"] * 4
    assert read_result(strict).models["judge"] == "anthropic/claude-sonnet-4-6"
    assert read_result(strict).standins == ["answer"]

    code, out, _ = run_cli(["compare", str(lenient), str(strict), "--json"], capsys, monkeypatch)
    [report] = json.loads(out)
    agreement = report["judge_agreement"]
    # table: both CORRECT 2, lenient only 2, strict only 0, both WRONG 2. p_o = 4/6; p_e = (4/6)(2/6) + (2/6)(4/6)
    # = 16/36; kappa = (24/36 - 16/36) / (20/36) = 0.4
    assert (agreement["agree"], agreement["correct_a_only"], agreement["correct_b_only"]) == (4, 2, 0)
    assert agreement["percent_agreement"] == pytest.approx(4 / 6)
    assert agreement["kappa"] == pytest.approx(0.4)
    assert agreement["judge_a"].startswith("judge:anthropic/claude-sonnet-4-6:")
    assert agreement["judge_a"] != agreement["judge_b"]  # the prompt id differs

    # replay: the recorded judgings serve a second run without the server or a key
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    code, _, err = run_cli(
        [
            "rejudge",
            str(original),
            "--judge",
            "strict",
            "--stack",
            "paper",
            "--mode",
            "replay",
            "--out",
            str(tmp_path / "again"),
        ],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    replayed = next((tmp_path / "again").rglob("mem0__k20.json"))
    assert [a.label for a in read_result(replayed).answers] == [a.label for a in read_result(strict).answers]


def test_bad_rejudge_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = answers_file(tmp_path / "mem0__k20.json", ["WRONG"] * 6)
    raw = json.loads(original.read_text())
    raw["answers"][3]["answer"] = None
    textless = tmp_path / "textless.json"
    textless.write_text(json.dumps(raw))
    out = tmp_path / "rj"
    cases = [
        (["rejudge", str(original), str(textless), "--judge", "lexical"], f"{textless}: field answers[3].answer"),
        (["rejudge", str(original), "--judge", "strict"], "a judge prompt needs a language-model judge"),
        (["rejudge", str(original), "--judge", "kind"], "expected lexical or a judge prompt"),
        (["rejudge", str(original), "--judge", "strict", "--stack", "paper"], "pass --yes"),
    ]
    for argv, message in cases:
        code, _, err = run_cli([*argv, "--out", str(out)], capsys, monkeypatch)
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, (argv, err)
    assert not out.exists()
