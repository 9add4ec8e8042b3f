"""A researcher compares and views two committed LongMemEval results: the report speaks of LongMemEval's question
types, all of them scored, and says nothing of LoCoMo's numbering, its adversarial category 5 or its audit, which
are about LoCoMo's questions only. The same commands on LoCoMo results still say all of that."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from bench.vocab import REPO_ROOT
from tests.bench.data.test_longmemeval import _cli  # the one CLI runner of the LongMemEval tests

SAMPLE = REPO_ROOT / "results" / "offline" / "longmemeval" / "oracle" / "sample"
DEV = REPO_ROOT / "results" / "offline" / "dev"
LOCOMO_WORDS = ("LoCoMo", "category 5", "without 5", "adversarial", "audited")


def _page_text(page: Path) -> str:
    text = re.sub(r"<(script|style).*?</\1>", "", page.read_text(), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def test_comparing_two_longmemeval_results_speaks_of_question_types_only(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    said = _cli(
        monkeypatch, capsys, "compare", str(SAMPLE / "raw-turn-rag__k20.json"), str(SAMPLE / "full-context.json")
    )
    assert "task-averaged" in said and "temporal-reasoning" in said
    assert "gold: official (the dataset's gold as published)" in said
    assert [word for word in LOCOMO_WORDS if word in said] == []


def test_viewing_two_longmemeval_results_marks_no_question_type_unscored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    page = tmp_path / "report.html"
    _cli(
        monkeypatch,
        capsys,
        "view",
        str(SAMPLE / "raw-turn-rag__k20.json"),
        str(SAMPLE / "full-context.json"),
        "--out",
        str(page),
    )
    text = _page_text(page)
    assert "knowledge-update" in text and "task-averaged" in text
    assert "unscored" not in text
    assert [word for word in LOCOMO_WORDS if word in text] == []
    assert "12 questions: 6/12 = 50.0%" in text


def test_locomo_results_still_name_their_numbering_category_5_and_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    said = _cli(monkeypatch, capsys, "compare", str(DEV / "mem0__k20.json"), str(DEV / "raw-turn-rag__k20.json"))
    assert "categories in LoCoMo's numbering" in said and "by category 5" in said
    assert "per category: (LoCoMo codes" in said and "LoCoMo's gold as published" in said
    page = tmp_path / "report.html"
    _cli(monkeypatch, capsys, "view", str(DEV / "mem0__k20.json"), "--out", str(page))
    text = _page_text(page)
    assert "category (LoCoMo's numbering)" in text and "the LoCoMo audit's errata" in text
    assert "without 5:" in text
