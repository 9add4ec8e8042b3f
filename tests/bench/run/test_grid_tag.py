"""A grid under a frozen tag is a held-out run: it starts only at a clean checkout of the tag, runs only held-out
conversations, never overwrites a result, and stamps the tag into every file it writes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import bench.run.grid.driver as driver
from bench.cli.program import main
from bench.data.slices import Slice
from bench.errors import HeldoutRefused
from bench.results.schema import result_path
from bench.run.grid import GridSpec, run_grid
from tests.bench.models.test_paper_stack_e2e import six_message_slice


def _grid_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr("sys.argv", ["engram-bench", "grid", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2, err
    assert len(err.splitlines()) == 1, err
    return err


def test_a_grid_under_a_tag_on_an_edited_tree_is_refused_before_anything_runs(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tagged_repo / "engram.py").write_text("FROZEN = 'tweaked after the tag'\n")
    monkeypatch.setattr(driver, "REPO_ROOT", tagged_repo)
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "results"
    err = _grid_cli(
        ["--arm", "full-context", "--slice", "heldout", "--tag", "frozen-v1", "--out", str(out)], monkeypatch, capsys
    )
    assert "--tag frozen-v1: expected a clean tree" in err and "engram.py" in err
    assert not out.exists() and not (tmp_path / "cache").exists()


def test_a_grid_under_a_tag_takes_only_heldout_conversations(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(driver, "REPO_ROOT", tagged_repo)
    out = tmp_path / "results"
    err = _grid_cli(
        ["--arm", "raw-turn-rag", "--slice", "dev", "--tag", "frozen-v1", "--out", str(out)], monkeypatch, capsys
    )
    assert "--tag: expected only held-out slices under a frozen tag, found 'dev'" in err
    assert not out.exists()


def test_a_grid_under_a_tag_never_overwrites_a_heldout_result(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(driver, "REPO_ROOT", tagged_repo)
    out = tmp_path / "results"
    earlier = result_path(out, "offline", "heldout:conv-43", "full-context", None)
    earlier.parent.mkdir(parents=True)
    earlier.write_text("{}\n")  # an untagged file from some other run: still never replaced
    err = _grid_cli(
        ["--arm", "full-context", "--slice", "heldout", "--tag", "frozen-v1", "--out", str(out)], monkeypatch, capsys
    )
    assert "conv-43/full-context.json: a held-out result already exists" in err
    assert earlier.read_text() == "{}\n"
    assert sorted(p.name for p in out.rglob("*.json")) == ["full-context.json"]


def test_a_grid_under_a_tag_stamps_the_tag_into_every_result_and_a_second_grid_never_overwrites_them(
    tagged_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver, "REPO_ROOT", tagged_repo)
    small = replace(six_message_slice(), name="heldout:conv-30")

    def loader(name: str) -> Slice:  # a held-out name over six dev messages: the stamp is what is tested
        return small if name == "heldout:conv-30" else pytest.fail(f"unexpected slice {name}")

    # One worker process: the stamp is the same from one as from several, and each spawned worker pays its own start.
    spec = GridSpec(
        arms=("full-context", "raw-turn-rag"),
        slices=("heldout:conv-30",),
        tag="frozen-v1",
        out=tmp_path / "results",
        workers=1,
    )
    lines: list[str] = []
    kwargs = {"slice_loader": loader, "cache_dir": tmp_path / "cache", "progress": False, "say": lines.append}
    report = run_grid(spec, **kwargs)  # type: ignore[arg-type]
    assert report.ok, lines
    written = sorted((tmp_path / "results" / "offline" / "heldout" / "conv-30").glob("*.json"))
    results = [p for p in written if not p.name.endswith(".trace.json")]
    assert {p.name for p in results} == {"full-context.json", "raw-turn-rag__k3.json", "raw-turn-rag__k20.json"}
    for path in results:
        assert json.loads(path.read_text())["provenance"]["git_tag"] == "frozen-v1", path

    with pytest.raises(HeldoutRefused):  # another grid under the tag would have to overwrite them: refused
        run_grid(GridSpec(arms=("full-context",), slices=("heldout:conv-30",), tag="frozen-v1",
                          out=tmp_path / "results", executor="local", workers=1), **kwargs)  # type: ignore[arg-type]  # fmt: skip
