"""A researcher turns result files into one self-contained HTML report, or a gallery for a folder."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from bench.results.schema import read_result
from bench.view.model import load_side
from bench.view.report import render_report, unpack_json, write_report
from tests.bench.analysis.test_compare import run_cli
from tests.conftest import REPO_ROOT

V1 = REPO_ROOT / "results" / "v1" / "heldout" / "conv-30"
OFFLINE_DEV = REPO_ROOT / "results" / "offline" / "dev"


def embedded_payload(html: str) -> dict:
    match = re.search(r'<script type="application/octet-stream" id="payload">(.*?)</script>', html, re.S)
    assert match, "the report embeds its data"
    return unpack_json(match.group(1))


def test_the_v1_pair_report_is_one_offline_file_with_a_row_per_question(tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "review" / "engram-vs-mem0.html"
    code, printed, _ = run_cli(
        ["view", str(V1 / "engram__k3.json"), str(V1 / "mem0__k6.json"), "--out", str(out)], capsys, monkeypatch
    )
    assert code == 0 and str(out) in printed
    html = out.read_text(encoding="utf-8")
    answers = read_result(V1 / "engram__k3.json").answers
    assert html.count('<div class="row q"') == len(answers)
    # Self-contained: no external stylesheet, script or image, nothing fetched.
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    assert "http://" not in html and "https://" not in html
    assert "Wilson 95%" in html and "exact McNemar p" in html
    assert "OFFLINE STAND-INS" not in html  # both sides are the article's stack
    payload = embedded_payload(html)
    assert len(payload["rows"]) == len(answers)
    first = payload["rows"][0]["s"]
    assert first[0]["why"] == "not recorded: the v1 release publishes only how many lines were shown (3)"
    assert first[1]["why"].endswith("(6)")
    assert payload["sides"][0]["trace_note"] == "no trace: the v1 release records no per-line decisions"


def test_an_offline_result_is_labelled_as_stand_ins_and_its_lines_are_embedded_once(tmp_path) -> None:
    path = OFFLINE_DEV / "engram__k20.json"
    html = write_report([path], tmp_path / "r.html").read_text(encoding="utf-8")
    assert (
        "OFFLINE STAND-INS — NOT THE PAPER&#39;S NUMBERS" in html
        or "OFFLINE STAND-INS — NOT THE PAPER'S NUMBERS" in html
    )
    payload = embedded_payload(html)
    result = read_result(path)
    shown = [line for a in result.answers for line in a.lines or []]
    assert sorted(payload["strings"]) == sorted(set(shown))  # each distinct line once
    rebuilt = [payload["strings"][cell[0]] for row in payload["rows"] for cell in row["s"][0]["l"]]
    assert rebuilt == shown
    # each model by the name its stack writes, with the stand-in version that ran (the file records the counter as
    # offline/local-token-counter-standin-v1 and the decider as offline/rules-standin-v9)
    assert "count_tokens=offline/wordpiece-counter (stand-in v1)" in html
    assert "decide=offline/rules-decider (stand-in v9)" in html
    assert "local-token-counter" not in html


def test_a_traced_engram_result_carries_decisions_and_the_superseded_chain(traced_engram: Path, tmp_path) -> None:
    html = write_report([traced_engram], tmp_path / "t.html").read_text(encoding="utf-8")
    payload = embedded_payload(html)
    items = payload["items"][0]["conv-26"]
    where = next(r for r in payload["rows"] if r["k"] == "conv-26:900")
    assert where["ev"] == ["T:4"]
    details = [line[2] for line in where["s"][0]["l"]]
    assert all(d["fact_id"] in items for d in details)
    closed = [items[d["fact_id"]] for d in details if items[d["fact_id"]]["fact"]["closed_by"]]
    assert closed and closed[0]["fact"]["source_message_id"] == "T:1"
    closer = items[closed[0]["fact"]["closed_by"]]
    assert closed[0]["fact"]["id"] in closer["superseded"]
    assert payload["turns"]["conv-26"]["T:1"]["text"] == "I live in Paris."
    # a decision's model (the trace records the decider's id, rules-standin-vN) by its stand-in's one name
    deciders = {model for item in items.values() for model in item["models"]}
    assert deciders and all(m.startswith("offline/rules-decider (stand-in v") for m in deciders), deciders


def test_html_in_the_data_cannot_break_out_of_the_page() -> None:
    side = load_side(OFFLINE_DEV / "engram__k3.json")
    evil = replace(
        side.result.answers[0],
        question="</script><script>alert(1)</script>",
        lines=["<img src=x onerror=alert(1)>"],
        sources=None,
    )
    hacked = replace(side, result=replace(side.result, answers=[evil, *side.result.answers[1:]]), trace=None)
    html = render_report([hacked])
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert embedded_payload(html)["strings"][0] == "<img src=x onerror=alert(1)>"


def test_a_folder_becomes_a_gallery_linking_every_report(tmp_path, capsys, monkeypatch) -> None:
    code, printed, _ = run_cli(["view", str(V1.parent), "--out", str(tmp_path / "g")], capsys, monkeypatch)
    assert code == 0
    index = (tmp_path / "g" / "index.html").read_text(encoding="utf-8")
    files = sorted(p.relative_to(V1.parent) for p in V1.parent.rglob("*.json"))
    links = re.findall(r'<a href="([^"]+)">', index)
    assert sorted(links) == sorted(f.with_suffix(".html").as_posix() for f in files)
    for link in links:
        report = (tmp_path / "g" / link).read_text(encoding="utf-8")
        assert '<div class="row q"' in report
    assert index.count('<tr class="g">') == len(files)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("bad_schema", r"field answers\[0\]\.label: expected CORRECT or WRONG"),
        ("other_questions", r"question sets differ: .*found .conv-26:0. in A \(.*\) but not in B"),
        ("three", r"expected RESULT \[RESULT_B\] or one results folder, found 3 arguments"),
        ("missing", r"result file not found"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_html(case, expected, tmp_path, capsys, monkeypatch) -> None:
    good = OFFLINE_DEV / "engram__k3.json"
    data = json.loads(good.read_text(encoding="utf-8"))
    if case == "bad_schema":
        data["answers"][0]["label"] = "MAYBE"
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        args = [str(good), str(bad)]
    elif case == "other_questions":
        args = [str(good), str(REPO_ROOT / "results" / "offline" / "heldout" / "conv-30" / "engram__k3.json")]
    elif case == "three":
        args = [str(good)] * 3
    else:
        args = [str(tmp_path / "nowhere.json")]
    out = tmp_path / "report.html"
    code, printed, err = run_cli(["view", *args, "--out", str(out)], capsys, monkeypatch)
    assert code == 2 and printed == ""
    assert len(err.strip().splitlines()) == 1 and re.search(expected, err)
    assert not out.exists() and not list(tmp_path.glob(".report.html*"))
