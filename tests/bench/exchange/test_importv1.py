"""`engram-bench import-v1`: the article's v1 files become schema-v1 result files, byte-identical on every import,
with a manifest naming each source file, its hash and license."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.errors import DataError
from bench.exchange.importv1 import V1_DATA_DIR, V1_RESULTS_DIR, import_v1, parse_v1_name, sha256_of
from bench.results.schema import iter_results, read_result


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "v1"
    import_v1(V1_DATA_DIR, out)
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_fresh_import_equals_the_committed_results_byte_for_byte(imported: Path) -> None:
    assert _files(imported) == _files(V1_RESULTS_DIR)


def test_the_manifest_names_every_file_with_its_sources_and_license(imported: Path) -> None:
    manifest = json.loads((imported / "MANIFEST.json").read_text())
    listed = {Path(e["path"]).name for e in manifest["files"]}
    assert "article_numbers.tsv" in listed and "calibration_items.json" in listed
    for entry in manifest["files"]:
        assert entry["sources"], entry["path"]
        for src in entry["sources"]:
            assert src["path"].startswith("data/engram-eval-v1/")
            assert src["sha256"] == sha256_of(V1_DATA_DIR.parent.parent / src["path"])
            assert "CC BY-NC 4.0" in src["license"]


def test_held_out_rows_are_per_conversation_with_the_article_totals(imported: Path) -> None:
    totals: dict[tuple[str, int | None], list[int]] = {}
    for _, result in iter_results(imported / "heldout"):
        assert result.stack == "paper" and result.standins == []
        assert result.provenance.origin == "engram-eval-v1 import"
        t = totals.setdefault((result.arm, result.k), [0, 0, 0])
        t[0] += result.accuracy.correct
        t[1] += result.accuracy.n
        t[2] += sum(a.category == "adversarial" for a in result.answers)
    assert totals[("engram", 3)] == [447, 610, 190]
    assert totals[("mem0", 3)][:2] == [356, 610]
    assert totals[("mem0", 6)][:2] == [394, 610]  # the token-matched run, split per conversation
    assert totals[("engram-reranking-off", 3)][:2] == [365, 610]
    assert totals[("engram", 20)][:2] == [482, 610]


def test_v1_arm_names_map_to_ours() -> None:
    assert parse_v1_name(Path("e4_belief_v2__heldout_conv-30__k3.json"), None).arm == "engram"
    assert parse_v1_name(Path("e2_llm__dev.json"), None).arm == "engram-llm-decider"
    nodates = parse_v1_name(Path("mem0__dev_updates__nodates.json"), None)
    assert (nodates.arm, nodates.slice, nodates.k) == ("mem0-nodates", "dev_updates", None)
    assert parse_v1_name(Path("e2_jev__heldout_conv-41__k20.json"), None).slice == "heldout:conv-41"


def test_an_arm_we_do_not_know_keeps_its_own_name_and_a_badly_named_file_is_refused() -> None:
    assert parse_v1_name(Path("e9_mystery__dev.json"), None).arm == "e9_mystery"
    assert parse_v1_name(Path("Zep-Cloud__heldout_conv-44__k5.json"), None).arm == "Zep-Cloud"
    with pytest.raises(DataError, match=r"expected a v1 arm file .* found 'mystery\.json'"):
        parse_v1_name(Path("mystery.json"), None)


def test_a_broken_release_leaves_the_previous_import_alone(tmp_path: Path) -> None:
    broken = tmp_path / "release"
    shutil.copytree(V1_DATA_DIR, broken)
    (broken / "results" / "e5_unknown__dev.json").write_text("{}")
    out = tmp_path / "v1"
    out.mkdir()
    (out / "keep.txt").write_text("previous import")
    with pytest.raises(DataError, match=r"e5_unknown__dev\.json: field system is missing"):
        import_v1(broken, out)
    assert (out / "keep.txt").read_text() == "previous import"


def test_the_llm_decider_arm_records_claude_as_its_relation_decider(imported: Path) -> None:
    by_arm = {r.arm: r for _, r in iter_results(imported / "dev")}
    # The LLM decides relations; its six typed fact questions still went to Jev.
    assert by_arm["engram-llm-decider"].models["llm_decider"] == "anthropic/claude-sonnet-4-6"
    assert by_arm["engram-llm-decider"].models["decide"] == "jev/jev-1.13.0"
    assert by_arm["engram-jev"].models["decide"] == "jev/jev-1.13.0"
    assert "llm_decider" not in by_arm["engram-jev"].models


# --------------------------------------------------------------------------------- provenance of foreign files


def release_with(tmp_path: Path, name: str, raw: dict[str, object], drop: tuple[str, ...] = ()) -> Path:
    """A copy of the article's release with one more arm file in it (and optional files dropped)."""
    release = tmp_path / "release"
    shutil.copytree(V1_DATA_DIR, release)
    (release / "results" / name).write_text(json.dumps(raw))
    for gone in drop:
        (release / "results" / gone).unlink()
    return release


def article_file(name: str) -> dict[str, object]:
    raw: dict[str, object] = json.loads((V1_DATA_DIR / "results" / name).read_text())
    return raw


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ({"model": "gpt-4o-mini", "provider": "openai"}, "openai/gpt-4o-mini"),
        ({"models": {"answer": "openai/gpt-4o-mini", "judge": "openai/gpt-4o-mini"}}, "openai/gpt-4o-mini"),
        ({"options": {"answer_model": "gpt-4o-mini"}}, "gpt-4o-mini"),  # no provider stated: kept as written
    ],
)
def test_a_file_answered_by_another_model_keeps_its_models_and_is_not_the_paper_stack(
    tmp_path: Path, statement: dict[str, object], expected: str
) -> None:
    raw = {**article_file("mem0__dev.json"), **statement, "arm": "mem0-gpt"}
    release = release_with(tmp_path, "mem0-gpt__heldout_conv-44__k20.json", raw)

    report = import_v1(release, tmp_path / "v1")

    imported = read_result(tmp_path / "v1" / "heldout" / "conv-44" / "mem0-gpt__k20.json")
    assert imported.stack == "imported" and imported.arm == "mem0-gpt"
    assert imported.models["answer"] == expected
    assert "anthropic/claude-sonnet-4-6" not in imported.models.values()
    assert not any("mem0-gpt" in note for note in report.notes)
    # the article's own files keep the paper stack
    assert read_result(tmp_path / "v1" / "dev" / "mem0.json").stack == "paper"


def test_compare_warns_that_stacks_and_models_differ_for_an_imported_gpt_file(tmp_path: Path) -> None:
    from bench.analysis.compare import load_result_set, stack_warnings

    raw = {**article_file("mem0__dev.json"), "model": "gpt-4o-mini", "provider": "openai"}
    import_v1(release_with(tmp_path, "mem0__heldout_conv-44__k3.json", raw), tmp_path / "v1")
    ours = load_result_set(str(tmp_path / "v1" / "heldout" / "conv-44" / "mem0__k3.json"))
    article = load_result_set(str(tmp_path / "v1" / "dev" / "mem0.json"))

    warnings = stack_warnings(article, ours)

    assert any(w.startswith("STACKS DIFFER: A runs on 'paper', B on 'imported'") for w in warnings), warnings
    assert any("answer: anthropic/claude-sonnet-4-6 vs openai/gpt-4o-mini" in w for w in warnings), warnings


def test_a_file_stating_no_models_that_is_not_the_articles_gets_no_models_and_a_note(tmp_path: Path) -> None:
    raw = article_file("e2_jev__dev.json")  # the article's content, but not its bytes: another copy, another run
    release = release_with(tmp_path, "e2_jev__heldout_conv-47.json", raw)

    report = import_v1(release, tmp_path / "v1")

    imported = read_result(tmp_path / "v1" / "heldout" / "conv-47" / "engram-jev.json")
    assert imported.stack == "imported" and imported.models == {}
    assert imported.extras["models_note"].startswith("the source file states no models")
    assert [n for n in report.notes if "e2_jev__heldout_conv-47.json" in n], report.notes


def test_a_release_without_its_optional_files_imports_with_one_line_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.cli.program import main

    release = tmp_path / "release"
    shutil.copytree(V1_DATA_DIR, release)
    (release / "results" / "heldout_extra.json").unlink()
    (release / "results" / "tradeoff_inputs.json").unlink()
    monkeypatch.setattr(
        "sys.argv", ["engram-bench", "import-v1", "--source", str(release), "--out", str(tmp_path / "v1")]
    )
    with pytest.raises(SystemExit) as exited:
        main()
    out = capsys.readouterr().out.splitlines()
    assert exited.value.code == 0

    notes = [line for line in out if line.startswith("import-v1: note:")]
    assert any("heldout_extra.json: not found (optional)" in n for n in notes), out
    assert any("tradeoff_inputs.json: not found (optional)" in n for n in notes), out
    assert not (tmp_path / "v1" / "supplementary" / "tradeoff_inputs.json").exists()
    assert (tmp_path / "v1" / "heldout" / "conv-30" / "engram__k3.json").is_file()


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (lambda raw: raw["answers"][2].pop("label"), r"answers\[2\]: field label is missing"),
        (lambda raw: raw["answers"][0].update(label="MAYBE"), r"answers\[0\]: field label: expected CORRECT or WRONG"),
        (lambda raw: raw.update(answers="none"), r"field answers: expected a list of answer records"),
        (lambda raw: raw.update(model=""), r"field model: expected a model name"),
    ],
)
def test_a_damaged_foreign_file_is_one_line_naming_the_file_and_field(
    tmp_path: Path, damage: object, field: str
) -> None:
    raw = article_file("mem0__dev.json")
    damage(raw)  # type: ignore[operator]
    release = release_with(tmp_path, "other__dev.json", raw)
    out = tmp_path / "v1"
    with pytest.raises(DataError, match=r"other__dev\.json: " + field):
        import_v1(release, out)
    assert not out.exists()
