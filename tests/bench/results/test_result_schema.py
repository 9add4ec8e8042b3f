"""A researcher outside the project reads the result files with any JSON Schema tool: the schema is published,
generated from the one definition in bench.results.schema, and every committed result file satisfies it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.cli.commands.schema import schema_text
from bench.errors import ResultError
from bench.results.schema import result_from_dict, result_json_schema
from bench.vocab import DOCS_DIR, RESULTS_DIR
from tests.bench.analysis.test_compare import run_cli

PUBLISHED = DOCS_DIR / "result.schema.json"


def committed_results(share: int, shares: int) -> list[tuple[Path, Any]]:
    """Every `shares`-th JSON file under results/ from the `share`-th on that is a result file (it has a
    schema_version), with what it holds: each file is read once, by the share it falls in."""
    found = []
    for path in sorted(RESULTS_DIR.rglob("*.json"))[share::shares]:
        held = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(held, dict) and "schema_version" in held:
            found.append((path, held))
    return found


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = result_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_published_schema_is_the_generated_one() -> None:
    assert PUBLISHED.read_text(encoding="utf-8") == schema_text(), (
        "docs/result.schema.json is stale: run `engram-bench schema --out docs/result.schema.json`"
    )


def test_the_cli_prints_the_schema(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_cli(["schema"], capsys, monkeypatch)
    assert code == 0 and json.loads(out) == result_json_schema()


# The committed files (about 100 MB of JSON) are validated in a few shares, every SHARES-th file in each, so that
# pytest-xdist's workers take them side by side instead of one worker validating them all.
SHARES = 4


@pytest.mark.parametrize("share", range(SHARES))
def test_every_committed_result_file_satisfies_the_schema(
    validator: jsonschema.Draft202012Validator, share: int
) -> None:
    results = committed_results(share, SHARES)
    assert len(results) > 100 // SHARES  # v1, v3 and the offline runs, not an empty folder
    failures = []
    for path, held in results:
        error = jsonschema.exceptions.best_match(validator.iter_errors(held))
        if error is not None:
            failures.append(f"{path.relative_to(RESULTS_DIR)}: {error.json_path}: {error.message[:120]}")
    assert failures == []


def _dev_result() -> dict[str, Any]:
    return json.loads((RESULTS_DIR / "offline" / "dev" / "mem0__k3.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("doctor", "field"),
    [
        (lambda d: d.update(stack="cloud"), "stack"),
        (lambda d: d.update(surprise=1), "surprise"),
        (lambda d: d.pop("answers"), "answers"),
        (lambda d: d["answers"][0].update(label="MAYBE"), "label"),
        (lambda d: d["provenance"].update(commit_hash="abc"), "commit_hash"),
        (lambda d: d.update(schema_version=2), "schema_version"),
    ],
    ids=["unknown-stack", "extra-field", "no-answers", "unknown-label", "extra-nested", "v2"],
)
def test_a_doctored_file_fails_the_schema_and_the_loader_alike(
    validator: jsonschema.Draft202012Validator, doctor: Any, field: str
) -> None:
    doctored = copy.deepcopy(_dev_result())
    doctor(doctored)
    errors = list(validator.iter_errors(doctored))
    assert errors, f"the schema accepted a file with a bad {field}"
    with pytest.raises(ResultError):
        result_from_dict(doctored, where="doctored.json")


def test_categories_are_an_open_set_in_the_schema_and_checked_against_the_datasets_by_the_loader(
    validator: jsonschema.Draft202012Validator,
) -> None:
    # Installed packages add datasets, so the published schema cannot close the list; the loader asks the registry.
    doctored = copy.deepcopy(_dev_result())
    doctored["answers"][0]["category"] = "trivia"
    assert "enum" not in result_json_schema()["$defs"]["Answer"]["properties"]["category"]
    with pytest.raises(ResultError, match=r"answers\[0\]\.category: expected a category a registered dataset declares"):
        result_from_dict(doctored, where="doctored.json")
