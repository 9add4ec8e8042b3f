"""`engram-bench import-v1`: the article's v1 files become schema-v1 result files, byte-identical on every import,
with a manifest naming each source file, its hash and license."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.errors import DataError
from bench.importv1 import V1_DATA_DIR, V1_RESULTS_DIR, import_v1, parse_v1_name, sha256_of
from bench.results import iter_results


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


def test_an_unknown_v1_file_is_refused_with_its_name() -> None:
    with pytest.raises(DataError, match=r"expected a v1 arm file .* found 'e9_mystery__dev\.json'"):
        parse_v1_name(Path("e9_mystery__dev.json"), None)


def test_a_broken_release_leaves_the_previous_import_alone(tmp_path: Path) -> None:
    broken = tmp_path / "release"
    shutil.copytree(V1_DATA_DIR, broken)
    (broken / "results" / "e5_unknown__dev.json").write_text("{}")
    out = tmp_path / "v1"
    out.mkdir()
    (out / "keep.txt").write_text("previous import")
    with pytest.raises(DataError, match="e5_unknown__dev.json"):
        import_v1(broken, out)
    assert (out / "keep.txt").read_text() == "previous import"


def test_the_llm_decider_arm_records_claude_as_its_relation_decider(imported: Path) -> None:
    by_arm = {r.arm: r for _, r in iter_results(imported / "dev")}
    # The LLM decides relations; its six typed fact questions still went to Jev.
    assert by_arm["engram-llm-decider"].models["llm_decider"] == "anthropic/claude-sonnet-4-6"
    assert by_arm["engram-llm-decider"].models["decide"] == "jev/jev-1.13.0"
    assert by_arm["engram-jev"].models["decide"] == "jev/jev-1.13.0"
    assert "llm_decider" not in by_arm["engram-jev"].models
