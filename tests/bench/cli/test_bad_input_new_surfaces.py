"""A new user's mistakes on the newer surfaces (judge-probe, import-results, the paper's tables and appendix,
--errata and --categories, the environment variables engram and the stacks read): each ends in exit 2 and one line
that names the option or variable and what was found, with nothing written anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.cli.test_fuzz_bad_input import assert_refused, cli, snapshot

PROBE = "data/locomo-audit/ap-baseline-v2/ap_eval_results_scored.json"
A = "results/offline/dev/mem0__k3.json"
B = "results/offline/dev/engram-jev.json"


def _files(tmp: Path) -> dict[str, Path]:
    """Small bad input files a user might really have at hand."""
    files = {
        "empty": tmp / "empty.jsonl",
        "one_line": tmp / "one-line.jsonl",
        "no_errata": tmp / "errata.json",
        "no_rows": tmp / "eval_results.json",
    }
    files["empty"].write_text("")
    files["one_line"].write_text(json.dumps({"question_id": "conv-26:0"}) + "\n")  # no answer
    files["no_errata"].write_text("[]\n")
    files["no_rows"].write_text(json.dumps({"total_questions": 0, "detailed_results": {}}))
    return files


# (argv with {placeholders} for the files above and {tmp}; the words the one line must hold)
CASES = {
    "judge-probe, unknown judge": (["judge-probe", "--judge", "nope"], "judge-probe --judge: expected lexical"),
    "judge-probe, empty answers": (
        ["judge-probe", "--judge", "lexical", "--answers", "{empty}", "--out", "{tmp}/probe.json"],
        "expected planted answers, found none",
    ),
    "judge-probe, one line without an answer": (
        ["judge-probe", "--judge", "lexical", "--answers", "{one_line}", "--out", "{tmp}/probe.json"],
        "one-line.jsonl:1: expected question_id and a text answer",
    ),
    "compare, an empty errata list": (
        ["compare", A, B, "--gold", "audited", "--errata", "{no_errata}"],
        "expected at least one errata object, found an empty list",
    ),
    "compare, empty categories": (["compare", A, B, "--categories", ""], "--categories: expected LoCoMo category"),
    "view, blank categories": (["view", A, "--categories", " ", "--out", "{tmp}/r.html"], "found nothing"),
    "paper table, unknown table": (["paper", "table", "NOPE", "--out", "{tmp}/paper"], "unknown table 'NOPE'"),
    # the unknown name is the mistake to name, not the --out not yet given
    "paper table, unknown table, no --out": (["paper", "table", "NOPE"], "paper table: unknown table 'NOPE'"),
    "paper appendix run, unknown entry, no --out": (
        ["paper", "appendix", "run", "NOPE"],
        "paper appendix run: expected an entry of appendix_e/INDEX.md",
    ),
    "paper appendix run, unknown entry": (
        ["paper", "appendix", "run", "NOPE", "--out", "{tmp}/paper"],
        "paper appendix run: expected an entry of appendix_e/INDEX.md",
    ),
    "import-results, no rows": (
        ["import-results", "{no_rows}", "--format", "eval-results", "--out", "{tmp}/imported"],
        "expected at least one question, found none",
    ),
    "import-results, a name that climbs out": (
        ["import-results", PROBE, "--format", "eval-results", "--out", "{tmp}/imported", "--name", "../../x"],
        "import-results --name '../../x': expected a plain name",
    ),
    "view of a folder, out named like a file": (
        ["view", "results/offline/dev", "--out", "{tmp}/gallery.html"],
        "expected a folder for the gallery",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_mistake_on_a_newer_command_is_one_line_and_writes_nothing(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv, words = CASES[case]
    places = {name: str(path) for name, path in _files(tmp_path).items()} | {"tmp": str(tmp_path)}
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    before = snapshot(tmp_path)
    code, err = cli([arg.format(**places) for arg in argv], monkeypatch)
    assert_refused(code, err)
    assert words in err, err
    assert snapshot(tmp_path) == before and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("ENGRAM_EMBED_THREADS", "zero", "expected a whole number of threads from 1 to 256, found 'zero'"),
        ("ENGRAM_EMBED_THREADS", "999999", "found '999999'"),  # once a segmentation fault, its lock left behind
        ("ENGRAM_TORCH_THREADS", "0", "found '0'"),
        ("ENGRAM_STACKS_DIR", "{tmp}/my-stacks-typo", "expected an existing folder"),
    ],
)
@pytest.mark.parametrize("argv", [["stacks"], ["run", "raw-turn-rag", "--slice", "dev", "--limit", "1"]])
def test_a_bad_variable_is_named_before_any_command_starts(
    variable: str, value: str, words: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(variable, value.format(tmp=tmp_path))
    code, err = cli(argv, monkeypatch)
    assert_refused(code, err)
    assert f"environment {variable}: " in err and words in err, err
    assert list(tmp_path.iterdir()) == []  # no run folder, no lock, no cache
