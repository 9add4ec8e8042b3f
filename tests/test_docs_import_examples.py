"""docs/importing.md shows one file of each import format: each imports as shown, with --format and without it
(detection), into the one question it names, and the doc leaves out no format the command reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.exchange.import_results import FORMATS
from bench.results.schema import read_result
from tests.cli_main import exit_code_of
from tests.conftest import REPO_ROOT

DOC = REPO_ROOT / "docs" / "importing.md"
EXAMPLE = re.compile(r"```json (?P<format>[a-z0-9-]+)\n(?P<body>.*?)\n```", re.DOTALL)
EXAMPLES = {m["format"]: m["body"] for m in EXAMPLE.finditer(DOC.read_text(encoding="utf-8"))}
# recognised only to be refused, pointing at the file that holds the judgments
REFUSED_ON_PURPOSE = {"zep-responses", "longmemeval-hypotheses"}
# where each example's one answer lands, and what it is (LoCoMo formats: conv-26's first question)
LANDS = {"longmemeval": ("longmemeval/peer.json", "gpt4_2655b836", "The GPS system was not working.")}
LOCOMO_LANDING = ("locomo/conv-26/peer.json", "conv-26:0", "On 7 May 2023")


def test_the_doc_shows_every_format_the_command_reads() -> None:
    assert set(EXAMPLES) == set(FORMATS) - REFUSED_ON_PURPOSE


@pytest.mark.parametrize("fmt", sorted(EXAMPLES))
@pytest.mark.parametrize("detected", [False, True], ids=["--format", "detected"])
def test_each_example_imports_into_the_question_it_names(
    fmt: str, detected: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / f"example-{fmt}.json"
    source.write_text(EXAMPLES[fmt], encoding="utf-8")
    argv = ["import-results", str(source), "--out", str(tmp_path / "out"), "--name", "peer"]
    code = exit_code_of(argv if detected else [*argv, "--format", fmt], monkeypatch)
    assert code == 0
    where, question, answer = LANDS.get(fmt, LOCOMO_LANDING)
    result = read_result(tmp_path / "out" / where)
    assert [(a.question_id, a.answer, a.label) for a in result.answers] == [(question, answer, "CORRECT")]
