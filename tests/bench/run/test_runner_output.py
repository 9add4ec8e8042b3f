"""Runs never clobber what is committed or what another run is doing: each run gets its own folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from bench.cli.program import main
from bench.data.slices import Slice, load_slice
from bench.errors import ConfigError, ResultError, WriteFailed
from bench.results.schema import Provenance, Result, read_result, result_path, write_result
from bench.run.output import output_dir
from bench.run.runner import run_arm
from bench.vocab import REPO_ROOT
from tests.bench.run_args import RunArgs, changed, run_args


def first_session() -> Slice:
    dev = load_slice("dev")
    messages = tuple(m for m in dev.messages if m.session == 1)
    ids = {m.id for m in messages}
    questions = tuple(replace(q, asked_at=(1,)) for q in dev.questions if q.evidence and set(q.evidence) <= ids)
    return replace(dev, messages=messages, questions=questions, checkpoints=(1,))


@pytest.fixture()
def ws(tmp_path: Path) -> dict[str, Path]:
    arms = tmp_path / "arms"
    arms.mkdir()
    (arms / "turns.toml").write_text('system = "raw-turn-rag"\nk = [2, 5]\n', encoding="utf-8")
    return {"arms": arms, "results": tmp_path / "results", "runs": tmp_path / "runs", "cache": tmp_path / "cache"}


def options(ws: dict[str, Path], **changes: object) -> RunArgs:
    base = run_args(
        results_root=ws["results"],
        runs_root=ws["runs"],
        cache_dir=ws["cache"],
        subsets=(),
        arms_dir=ws["arms"],
        progress=False,
        slice_loader=lambda name: first_session(),
        say=lambda _: None,
    )
    return changed(base, **changes)


def committed(ws: dict[str, Path], k: int, tag: str | None) -> Path:
    path = result_path(ws["results"], "offline", "dev", "turns", k)
    result = Result.build(
        arm="turns",
        system="raw-turn-rag",
        stack="offline",
        slice="dev",
        k=k,
        arm_hash=None,
        settings={},
        models={},
        standins=[],
        provenance=Provenance(origin="test", git_tag=tag),
        answers=[],
    )
    return write_result(path, result)


def test_a_plain_run_writes_a_fresh_folder_per_run_and_leaves_committed_results_alone(ws: dict[str, Path]) -> None:
    mine = committed(ws, 2, tag=None)
    before = mine.read_bytes()

    first = run_arm("turns", "dev", *options(ws))
    second = run_arm("turns", "dev", *options(ws))

    assert mine.read_bytes() == before
    assert first[0].parent != second[0].parent
    for written in (first, second):
        folder = written[0].parent
        assert folder.parent == ws["runs"] / "offline" / "dev" / "turns"
        assert [p.name for p in written] == ["turns__k2.json", "turns__k5.json"]
        assert (folder / "store").is_dir()  # the run's own store, beside its results
        assert read_result(written[0]).calls.keys_file == "turns__k2.calls.txt"
        assert (folder / "turns__k2.calls.txt").is_file()


def test_the_output_folder_rule_is_one_function() -> None:
    runs, results = Path("/r/runs"), Path("/r/results")
    args = ("offline", "heldout:conv-30", "mem0", "20261202T000000Z-abc")
    assert output_dir(*args, runs_root=runs) == runs / "offline/heldout/conv-30/mem0/20261202T000000Z-abc"
    assert output_dir(*args, out=Path("/x"), runs_root=runs) == Path("/x")
    assert output_dir(*args, update_committed=True, results_root=results) == results / "offline/heldout/conv-30"


def test_update_committed_rewrites_an_untagged_result_but_never_a_tag_stamped_one(ws: dict[str, Path]) -> None:
    plain = committed(ws, 2, tag=None)
    run_arm("turns", "dev", *options(ws, update_committed=True))
    assert read_result(plain).answers  # rewritten with real answers

    tagged = committed(ws, 5, tag="heldout-offline-2")
    before = tagged.read_bytes()
    with pytest.raises(ResultError, match="stamped with tag 'heldout-offline-2'"):
        run_arm("turns", "dev", *options(ws, update_committed=True))
    assert tagged.read_bytes() == before


def test_out_never_overwrites_a_result_already_in_the_folder(ws: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "mine"
    run_arm("turns", "dev", *options(ws, out=out, ks=(2,)))
    before = (out / "turns__k2.json").read_bytes()
    with pytest.raises(ResultError, match="expected --out to name a folder without this result"):
        run_arm("turns", "dev", *options(ws, out=out, ks=(2,)))
    assert (out / "turns__k2.json").read_bytes() == before


def test_limit_answers_the_first_questions_and_says_so(ws: dict[str, Path]) -> None:
    full = first_session()
    [path] = run_arm("turns", "dev", *options(ws, ks=(2,), limit=2))
    result = read_result(path)
    assert [a.question_id for a in result.answers] == [q.id for q in full.questions[:2]]
    assert result.extras["limit"] == {"questions": 2, "of": len(full.questions)}
    assert result.extras["messages"] == len(full.messages)  # the ingestion stays whole


def test_messages_ingests_only_the_first_turns_and_asks_every_question_after_them(ws: dict[str, Path]) -> None:
    """`run --messages 7`: a quick try for a model that is slow per write; the result says it was cut."""
    dev = load_slice("dev")
    opts = options(ws, ks=(2,), messages=7, limit=4, slice_loader=load_slice)
    [path] = run_arm("turns", "dev", *opts)
    result = read_result(path)
    assert result.extras["messages"] == 7 and result.extras["first_messages"] == 7
    assert [a.question_id for a in result.answers] == [q.id for q in dev.questions[:4]]
    kept = {m.id for m in dev.messages[:7]}
    assert all(source in kept for a in result.answers for lines in a.sources for source in lines)


def test_messages_past_a_session_break_asks_after_the_last_kept_turn() -> None:
    from bench.data.slices import first_messages_of

    dev = load_slice("dev")
    second = next(i for i, m in enumerate(dev.messages) if m.session == 2)
    cut = first_messages_of(dev, second + 3)
    assert cut.checkpoints == (2,) and cut.last_message_of(2) == cut.messages[-1]
    assert {q.asked_at for q in cut.questions} == {(2,)} and len(cut.questions) == len(dev.questions)


@pytest.mark.parametrize("extra", [0, 1, 40])
def test_a_limit_at_or_above_the_question_count_is_a_full_run_and_says_nothing(ws: dict[str, Path], extra: int) -> None:
    everything = len(first_session().questions)
    [path] = run_arm("turns", "dev", *options(ws, ks=(2,), limit=everything + extra))
    result = read_result(path)
    assert len(result.answers) == everything
    assert "limit" not in result.extras


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"limit": 0}, "--limit: expected a positive number"),
        ({"limit": 3, "update_committed": True}, "expected no --limit when updating committed files"),
        ({"out": Path("x"), "update_committed": True}, "expected at most one of them"),
        ({"mode": "bogus"}, "--mode: expected one of live, replay, record"),
        ({"concurrency": 0}, "--concurrency: expected a positive integer"),
        ({"messages": 0}, "--messages: expected a positive number of messages"),
        ({"messages": 5, "update_committed": True}, "expected no --messages when updating committed files"),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(
    ws: dict[str, Path], changes: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        run_arm("turns", "dev", *options(ws, **changes))
    assert not ws["runs"].exists() and not ws["results"].exists() and not ws["cache"].exists()


HOLD_THE_LOCK = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bench.run.output import run_lock
    with run_lock(Path(sys.argv[1]), "offline", "dev", "raw-turn-rag"):
        print("holding", flush=True)
        time.sleep(120)
    """
)


def test_a_second_run_of_the_same_arm_is_refused_naming_the_first_runs_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(runs)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        monkeypatch.setenv("ENGRAM_RUNS_DIR", str(runs))
        monkeypatch.setattr("sys.argv", ["engram-bench", "run", "raw-turn-rag", "--slice", "dev", "--quiet"])
        with pytest.raises(SystemExit) as exited:
            main()
    finally:
        holder.kill()
        holder.wait()
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert exited.value.code == 2
    assert captured.out.startswith("run raw-turn-rag on dev")  # the banner said what was about to run
    assert len(err) == 1 and f"holds this lock (pid {holder.pid})" in err[0]
    assert [p.name for p in (runs / "offline" / "dev" / "raw-turn-rag").iterdir() if not p.name.startswith(".")] == []


def test_the_lock_is_released_when_its_holder_dies(tmp_path: Path, ws: dict[str, Path]) -> None:
    runs = tmp_path / "runs"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(runs)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    holder.kill()
    holder.wait()
    (ws["arms"] / "raw-turn-rag.toml").write_text('system = "raw-turn-rag"\nk = 2\n', encoding="utf-8")
    assert run_arm("raw-turn-rag", "dev", *options(ws, runs_root=runs))


def test_an_arm_name_that_leaves_arms_is_refused_before_anything_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An arm file and a folder of the same name outside the repo; enough '..' reach / from any folder.
    victim = tmp_path / "victim"
    (victim / "precious").mkdir(parents=True)
    (tmp_path / "victim.toml").write_text('system = "raw-turn-rag"\n', encoding="utf-8")
    escaping = "../" * 40 + str(victim).lstrip("/")
    attempts = [([name], "expected a plain arm name") for name in (escaping, str(victim), "sub/dir")]
    attempts.append(([escaping, "--mode", "bogus"], "--mode: expected one of"))
    for args, fragment in attempts:
        monkeypatch.setattr("sys.argv", ["engram-bench", "run", *args, "--slice", "dev"])
        with pytest.raises(SystemExit) as exited:
            main()
        err = capsys.readouterr().err.strip()
        assert exited.value.code == 2 and len(err.splitlines()) == 1
        assert fragment in err
        assert (victim / "precious").is_dir()


def test_run_results_by_default_stay_out_of_the_checkout(ws: dict[str, Path]) -> None:
    # The suite points $ENGRAM_RUNS_DIR at a temporary folder (tests/conftest.py); a user's default is runs/.
    assert os.environ["ENGRAM_RUNS_DIR"]
    path = run_arm("turns", "dev", *changed(options(ws, ks=(2,)), runs_root=Path(os.environ["ENGRAM_RUNS_DIR"])))[0]
    assert REPO_ROOT not in path.parents
    assert json.loads(path.read_text())["k"] == 2


def test_a_result_the_full_disk_refuses_leaves_no_key_list_or_trace_without_it(
    ws: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(path: Path, text: str) -> Path:
        raise WriteFailed(f"{path}: could not write the result (No space left on device)")

    monkeypatch.setattr("bench.run.provenance.write_text", disk_full)
    with pytest.raises(WriteFailed):
        run_arm("turns", "dev", *options(ws))
    left = [p.name for p in ws["runs"].rglob("*") if p.name.endswith((".calls.txt", ".trace.json.gz", ".json"))]
    assert not any(name.startswith("turns__k") for name in left), left


def test_a_rerun_the_full_disk_refuses_leaves_the_earlier_result_with_its_own_key_list_and_trace(
    ws: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # --update-committed over a result replaces its key list and trace before the result itself; a disk that then
    # refuses the result must not leave the earlier result beside the new run's sidecars.
    [first, *_] = run_arm("turns", "dev", *options(ws, update_committed=True))
    sidecars = [first.with_suffix(".calls.txt"), *first.parent.glob(f"{first.stem}.trace.json.gz")]
    before = {p: p.read_bytes() for p in [first, *sidecars]}
    first.with_suffix(".calls.txt").write_text("0" * 64 + "\n")  # a key list only the earlier result could name
    before[first.with_suffix(".calls.txt")] = first.with_suffix(".calls.txt").read_bytes()

    def disk_full(path: Path, text: str) -> Path:
        raise WriteFailed(f"{path}: could not write the result (No space left on device)")

    monkeypatch.setattr("bench.run.provenance.write_text", disk_full)
    with pytest.raises(WriteFailed):
        run_arm("turns", "dev", *options(ws, update_committed=True))
    assert {p: p.read_bytes() for p in before} == before
