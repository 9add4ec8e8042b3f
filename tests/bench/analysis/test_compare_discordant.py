"""`engram-bench compare A B --list-discordant`: which questions only one side got right."""

from __future__ import annotations

import json

from tests.bench.analysis.test_compare import run_cli, write_set


def test_list_discordant_names_a_right_b_wrong_then_b_right_a_wrong(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": True, "c2:0": False, "c2:1": True})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": True, "c2:0": True, "c2:1": True})
    code, out, _ = run_cli(["compare", str(a), str(b), "--list-discordant", "--draws", "50"], capsys, monkeypatch)
    assert code == 0
    tail = out[out.index("A right / B wrong") :].splitlines()
    assert tail[0].startswith("A right / B wrong (engram k=3 [offline]): 1")
    assert tail[1].split() == ["c1:0", "c1", "single-hop"]
    assert tail[2].startswith("B right / A wrong (mem0 k=3 [offline]): 1")
    assert tail[3].split() == ["c2:0", "c2", "single-hop"]


def test_list_discordant_in_json_carries_the_question_ids(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": False})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": False})
    code, out, _ = run_cli(
        ["compare", str(a), str(b), "--json", "--list-discordant", "--draws", "50"], capsys, monkeypatch
    )
    assert code == 0
    (report,) = json.loads(out)
    assert report["discordant"] == [
        {"question_id": "c1:0", "conversation": "c1", "category": "single-hop", "right": "A"}
    ]


def test_without_the_flag_the_report_lists_no_ids(tmp_path, capsys, monkeypatch) -> None:
    a = write_set(tmp_path / "a.json", "engram", {"c1:0": True, "c1:1": False})
    b = write_set(tmp_path / "b.json", "mem0", {"c1:0": False, "c1:1": False})
    _, out, _ = run_cli(["compare", str(a), str(b), "--draws", "50"], capsys, monkeypatch)
    assert "A right / B wrong" not in out
    _, out, _ = run_cli(["compare", str(a), str(b), "--json", "--draws", "50"], capsys, monkeypatch)
    assert "discordant" not in json.loads(out)[0]
