"""Held-out runs happen once, under a frozen tag, on a clean tree, and never overwrite a result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import bench.cli.commands.heldout as heldout_command
from bench.cli.commands.heldout import frozen_commit, refuse_overwrites
from bench.cli.program import main
from bench.errors import HeldoutRefused
from bench.results.schema import result_path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_a_clean_checkout_of_the_tag_is_accepted(tagged_repo: Path) -> None:
    assert frozen_commit(tagged_repo, "frozen-v1") == git(tagged_repo, "rev-parse", "HEAD")


def test_results_written_during_the_run_do_not_make_the_tree_dirty(tagged_repo: Path) -> None:
    (tagged_repo / "results" / "offline").mkdir(parents=True)
    (tagged_repo / "results" / "offline" / "r.json").write_text("{}")
    assert frozen_commit(tagged_repo, "frozen-v1")


def test_a_commit_after_the_tag_is_refused(tagged_repo: Path) -> None:
    (tagged_repo / "engram.py").write_text("FROZEN = False\n")
    git(tagged_repo, "commit", "-qam", "tweak after freezing")
    with pytest.raises(HeldoutRefused, match="expected HEAD at the tagged commit"):
        frozen_commit(tagged_repo, "frozen-v1")


def test_a_modified_file_is_refused(tagged_repo: Path) -> None:
    (tagged_repo / "engram.py").write_text("FROZEN = 'almost'\n")
    with pytest.raises(HeldoutRefused, match="expected a clean tree.*engram.py"):
        frozen_commit(tagged_repo, "frozen-v1")


def test_an_untracked_module_is_refused(tagged_repo: Path) -> None:
    (tagged_repo / "sneaky.py").write_text("x = 1\n")
    with pytest.raises(HeldoutRefused, match="sneaky.py"):
        frozen_commit(tagged_repo, "frozen-v1")


def test_an_unknown_tag_is_refused(tagged_repo: Path) -> None:
    with pytest.raises(HeldoutRefused, match="--tag nope: expected an existing git tag"):
        frozen_commit(tagged_repo, "nope")


def test_an_existing_heldout_result_is_never_overwritten(tmp_path: Path) -> None:
    import json

    from bench.results.schema import Provenance, Result, write_result

    path = result_path(tmp_path, "offline", "heldout:conv-41", "mem0", 3)
    write_result(
        path,
        Result.build(
            arm="mem0",
            system="mem0",
            stack="offline",
            slice="heldout:conv-41",
            k=3,
            arm_hash=None,
            settings={},
            models={},
            standins=[],
            provenance=Provenance(origin="test", git_tag="frozen-v1"),
            answers=[],
        ),
    )
    before = path.read_bytes()
    with pytest.raises(HeldoutRefused, match="conv-41.*already exists \\(tag frozen-v1\\)"):
        refuse_overwrites(tmp_path, "offline", "mem0", (3, 20), ("conv-30", "conv-41"))
    assert path.read_bytes() == before
    assert json.loads(before)["provenance"]["git_tag"] == "frozen-v1"


def test_the_cli_refuses_a_dirty_tree_with_exit_2_and_writes_nothing(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tagged_repo / "engram.py").write_text("FROZEN = 'edited'\n")
    results = tmp_path / "results"
    monkeypatch.setattr(heldout_command, "REPO_ROOT", tagged_repo)
    monkeypatch.setattr(heldout_command, "RESULTS_DIR", results)

    monkeypatch.setattr("sys.argv", ["engram-bench", "heldout", "raw-turn-rag", "--tag", "frozen-v1"])

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 2
    assert "expected a clean tree" in capsys.readouterr().err
    assert not results.exists()


def test_a_changed_cache_subset_counts_as_a_dirty_tree(tagged_repo: Path) -> None:
    subset = tagged_repo / "cache" / "dev"
    subset.mkdir(parents=True)
    (subset / "manifest.json").write_text('{"sha256": "a"}\n')
    git(tagged_repo, "add", "cache")
    git(tagged_repo, "commit", "-qm", "ship a subset")
    git(tagged_repo, "tag", "-f", "frozen-v1")
    assert frozen_commit(tagged_repo, "frozen-v1")

    (subset / "manifest.json").write_text('{"sha256": "b"}\n')
    with pytest.raises(HeldoutRefused, match="expected a clean tree.*cache/dev/manifest.json"):
        frozen_commit(tagged_repo, "frozen-v1")


def test_every_conversation_is_checked_before_any_is_run(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    existing = result_path(results, "offline", "heldout:conv-41", "mem0-token-matched", 5)
    existing.parent.mkdir(parents=True)
    existing.write_text("{}")
    started: list[str] = []
    monkeypatch.setattr(heldout_command, "REPO_ROOT", tagged_repo)
    monkeypatch.setattr(heldout_command, "RESULTS_DIR", results)
    monkeypatch.setattr(heldout_command, "run_arm", lambda arm, slice_name, options: started.append(slice_name))
    argv = ["engram-bench", "heldout", "mem0-token-matched", "--tag", "frozen-v1"]
    monkeypatch.setattr("sys.argv", [*argv, "--conversation", "conv-30", "--conversation", "conv-41"])

    with pytest.raises(SystemExit) as exited:
        main()

    assert exited.value.code == 2
    assert "conv-41/mem0-token-matched__k5.json: a held-out result already exists" in capsys.readouterr().err
    assert started == []


README_TAG = "heldout-offline-5"
CHECKOUT = Path(__file__).resolve().parents[3]
RESTORE_TAGS = CHECKOUT / "scripts" / "heldout_tags.py"


def _in_git_checkout() -> bool:
    return subprocess.run(["git", "rev-parse", "--git-dir"], cwd=CHECKOUT, capture_output=True).returncode == 0


def _has_tag(repo: Path, tag: str) -> bool:
    probe = ["git", "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}"]
    return subprocess.run(probe, cwd=repo, capture_output=True).returncode == 0


def _stamps() -> set[tuple[str, str]]:
    import json

    return {
        (data["provenance"]["git_tag"], data["provenance"]["git_commit"])
        for path in sorted((CHECKOUT / "results" / "offline" / "heldout").glob("*/*.json"))
        for data in [json.loads(path.read_text(encoding="utf-8"))]
    }


def _clone_without_tags(tmp_path: Path) -> Path:
    # What CI and some mirrors hand a newcomer: every commit, no tags.
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-tags", str(CHECKOUT), str(clone)], check=True, capture_output=True
    )
    assert not _has_tag(clone, README_TAG)
    return clone


def _restore_tags(repo: Path) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "scripts/heldout_tags.py"], cwd=repo, capture_output=True, text=True)


needs_git = pytest.mark.skipif(not _in_git_checkout(), reason="not a git checkout (an unpacked archive has no history)")


@needs_git
def test_every_committed_heldout_result_names_the_readme_tag_and_one_commit_of_this_history() -> None:
    assert f"`{README_TAG}`" in (CHECKOUT / "README.md").read_text(encoding="utf-8")
    stamps = _stamps()
    assert {tag for tag, _ in stamps} == {README_TAG}
    assert len(stamps) == 1, f"the results were stamped with several commits: {sorted(stamps)}"
    [(_, commit)] = stamps
    ancestry = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=CHECKOUT, capture_output=True)
    assert ancestry.returncode == 0, f"{commit[:12]} is not in HEAD's history"


@needs_git
def test_the_readme_tag_if_this_clone_has_it_is_annotated_and_names_the_stamped_commit() -> None:
    if not _has_tag(CHECKOUT, README_TAG):
        pytest.skip(f"this clone has no tag {README_TAG} (`git fetch --tags` or `make heldout-tags` restores it)")
    assert git(CHECKOUT, "cat-file", "-t", f"refs/tags/{README_TAG}") == "tag"  # annotated: it says what it froze
    assert _stamps() == {(README_TAG, git(CHECKOUT, "rev-parse", f"{README_TAG}^{{commit}}"))}


@needs_git
def test_a_clone_without_tags_gets_the_heldout_tag_back_at_the_commit_its_results_were_stamped_with(
    tmp_path: Path,
) -> None:
    clone = _clone_without_tags(tmp_path)
    [(_, stamped)] = _stamps()

    restored = _restore_tags(clone)
    again = _restore_tags(clone)

    assert restored.returncode == 0, restored.stderr
    assert f"{README_TAG}: restored at {stamped[:12]}" in restored.stdout
    assert git(clone, "cat-file", "-t", f"refs/tags/{README_TAG}") == "tag"
    assert git(clone, "rev-parse", f"{README_TAG}^{{commit}}") == stamped
    assert again.returncode == 0 and f"{README_TAG}: present at {stamped[:12]}" in again.stdout


@needs_git
def test_a_tag_that_names_another_commit_than_the_stamp_is_reported_and_left_alone(tmp_path: Path) -> None:
    clone = _clone_without_tags(tmp_path)
    git(clone, "tag", README_TAG, "HEAD")  # a local tag of the same name somewhere else
    [(_, stamped)] = _stamps()

    refused = _restore_tags(clone)

    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f"heldout-tags: tag {README_TAG}: expected commit {stamped[:12]}")
    assert git(clone, "rev-parse", f"{README_TAG}^{{commit}}") == git(clone, "rev-parse", "HEAD")


@needs_git
def test_a_newcomers_clone_at_the_readme_tag_passes_that_tags_own_heldout_guard(tmp_path: Path) -> None:
    # What the README tells a newcomer: restore the tag if the clone lacks it, check it out, move the earlier
    # results out of the way (results/ does not count as a change), then `heldout --tag`. The guard that runs is
    # the tag's own code.
    clone = _clone_without_tags(tmp_path)
    assert _restore_tags(clone).returncode == 0
    git(clone, "checkout", "--quiet", README_TAG)
    subprocess.run(["rm", "-r", "results/offline/heldout"], cwd=clone, check=True)
    # The tag's own code: its guard lives where that commit's layout put it (before or after bench/ was split into
    # packages).
    old_layout = (clone / "bench" / "commands" / "heldout.py").is_file()
    guard = "bench.commands.heldout" if old_layout else "bench.cli.commands.heldout"  # rewrite-imports: keep
    probe = (
        f"from pathlib import Path; from {guard} import frozen_commit, refuse_overwrites; "
        f"print(frozen_commit(Path('.'), {README_TAG!r})); "
        "refuse_overwrites(Path('results'), 'offline', 'raw-turn-rag', (3, 20), ('conv-30', 'conv-41', 'conv-42', 'conv-43'))"
    )
    import sys

    done = subprocess.run([sys.executable, "-c", probe], cwd=clone, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    [(_, stamped)] = _stamps()
    assert done.stdout.strip() == stamped
