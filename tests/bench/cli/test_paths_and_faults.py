"""Places to write that cannot be written, a full disk, a runaway reply, a damaged cache entry and an interrupted
command: each ends in one line naming the path or entry (exit 2, or 130 for Ctrl-C), before any work, with
nothing half-written."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.analysis.scoring.mem0 import PIECE_CHARS, mem0_bleu1, pieces
from bench.cli.options import parse_ks
from bench.cli.program import app
from bench.errors import ConfigError, ReplyTooLarge
from bench.models.budget import usd
from bench.models.cache import CacheEntry, CallRequest, LocalStore
from bench.models.gateway import Gateway, LiveResponse
from bench.results.schema import result_files
from bench.vocab import REPO_ROOT
from tests.cli_main import exit_code_of


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, _, err = run_cli_both(argv, monkeypatch, capsys)
    return code, err


def run_cli_both(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = exit_code_of(argv, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def _writable(folder: Path) -> bool:
    try:
        fd, probe = tempfile.mkstemp(dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


@contextmanager
def read_only_folder(root: Path) -> Iterator[Path]:
    """A folder this process really cannot write. chmod 0555 is enough for a normal user; root ignores permission
    bits, so as root the folder is /sys (sysfs: nobody may create files there), which is how the case is
    simulated honestly there. Skipped where neither gives an unwritable folder."""
    folder = root / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if _writable(folder):
            folder = Path("/sys")
            if not folder.is_dir() or _writable(folder):
                pytest.skip("no folder this process cannot write (root without a read-only /sys)")
        yield folder
    finally:
        (root / "locked").chmod(0o755)


# Every command that takes a place to write, and whether that place is a folder or a file.
COMMANDS = {
    "run": (["run", "raw-turn-rag", "--slice", "dev", "--limit", "1", "--out"], "folder"),
    "paper build": (["paper", "build", "--stack", "offline", "--out"], "folder"),
    "view": (["view", "results/offline/dev/mem0.json", "--out"], "file"),
    "view gallery": (["view", "results/offline/dev", "--out"], "folder"),
    "schema": (["schema", "--out"], "file"),
    "export --hf": (["export", "--hf"], "folder"),
    "ENGRAM_CACHE_DIR": (["run", "raw-turn-rag", "--slice", "dev", "--limit", "1"], "env"),
    "judge-probe": (["judge-probe", "--judge", "lexical", "--limit", "1", "--out"], "file"),
    "import-results": (
        ["import-results", "data/locomo-audit/ap-baseline-v2/ap_eval_results_scored.json", "--format", "eval-results"]
        + ["--out"],
        "folder",
    ),
    "rejudge": (["rejudge", "results/offline/dev/mem0__k3.json", "--judge", "lexical", "--out"], "folder"),
    "rescore": (["rescore", "results/offline/dev/mem0__k3.json", "--gold", "audited", "--out"], "folder"),
    "cache export": (["cache", "export", "--run", "results/offline/dev/mem0__k3.json", "--out"], "folder"),
    "grid": (["grid", "--arm", "raw-turn-rag", "--slice", "dev", "--out"], "folder"),
    "paper table": (["paper", "table", "dev", "--out"], "folder"),
    "import-v1": (["import-v1", "--out"], "folder"),
    "field": (["field", "--out"], "file"),
    "import-v3": (["import-v3", "--out"], "folder"),
    "paper appendix run": (["paper", "appendix", "run", "table:dev", "--out"], "folder"),
}
WRITING_OPTIONS = ("--out", "--hf")


def _commands_that_write(group: Any, prefix: str = "") -> set[str]:
    """Every command path (`paper build`, `cache export`) with an option naming a place to write."""
    found: set[str] = set()
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(command, "commands"):  # a group (click's, as typer builds it)
            found |= _commands_that_write(command, f"{path} ")
        elif any(opt in WRITING_OPTIONS for param in command.params for opt in param.opts):
            found.add(path)
    return found


def test_every_command_with_a_place_to_write_is_in_the_property_below() -> None:
    # A new command with --out inherits the FIFO, device, symlink-loop and read-only cases by being listed here.
    listed = {name.split(" --")[0] for name in COMMANDS if not name.startswith("ENGRAM_")}
    found = _commands_that_write(typer.main.get_command(app))
    assert {"run", "schema", "paper build", "cache export"} <= found  # the walk sees nested groups
    assert found - listed == set()


BAD_PLACES = [
    "a file",
    "under a file",
    "a read-only folder",
    "a new folder in a read-only folder",
    "a folder",
    "a FIFO",
    "a symlink loop",
    "a device node",
]


def _special(root: Path, place: str, name: str) -> Path:
    """A FIFO, a symlink loop or a character device (the numbers of /dev/null, made in the test's own folder)."""
    target = root / f"special-{name}"
    if place == "a FIFO":
        os.mkfifo(target)
    elif place == "a symlink loop":
        target.symlink_to(target)
    else:
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return target


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(COMMANDS)), place=st.sampled_from(BAD_PLACES), name=st.text("qzxw-_", min_size=1))
def test_a_place_that_cannot_be_written_is_one_line_before_any_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, place: str, name: str
) -> None:
    argv, kind = COMMANDS[command]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = root / "runs"
        monkeypatch.setenv("ENGRAM_RUNS_DIR", str(runs))
        monkeypatch.setenv("ENGRAM_CACHE_DIR", str(root / "cache"))
        monkeypatch.setenv("ENGRAM_LEDGER", str(root / "ledger.jsonl"))
        a_file = root / f"{name}.txt"
        a_file.write_text("someone's notes\n")
        with read_only_folder(root) as locked:
            target = {
                "a file": a_file,
                "under a file": a_file / name,
                "a read-only folder": locked,
                "a new folder in a read-only folder": locked / f"engram-{name}",
                "a folder": root,  # only wrong where a file is expected
            }.get(place) or _special(root, place, name)
            if place == "a folder" and kind != "file":
                return  # a folder is the right answer there
            if place == "a file" and kind == "file":
                return  # writing a file over a file is what was asked
            if kind == "env":
                monkeypatch.setenv("ENGRAM_CACHE_DIR", str(target))
                full = [*argv, "--out", str(root / "out")]
            else:
                full = [
                    *argv,
                    str(target / "report.html") if place == "a read-only folder" and kind == "file" else str(target),
                ]
            before = sorted(p.name for p in root.iterdir())
            code, err = run_cli(full, monkeypatch, capsys)
            assert code == 2, err
            assert len(err.splitlines()) == 1 and err.startswith("engram-bench: "), err
            assert str(target) in err
            expected = ("expected a folder", "expected a file", "expected a regular file", "not writable")
            assert any(word in err for word in expected), err
            assert "Traceback" not in err
            assert sorted(p.name for p in root.iterdir()) == before  # no out/, runs/, cache/ or ledger
            assert a_file.read_text() == "someone's notes\n"
            if place in ("a FIFO", "a device node"):  # refused, not replaced by an ordinary file
                assert stat.S_ISFIFO(target.lstat().st_mode) or stat.S_ISCHR(target.lstat().st_mode)


def test_a_full_disk_names_the_file_and_what_was_written_and_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Simulated: the file system reports ENOSPC when the new bytes are synced (a tmpfs of a few KB needs root).
    target = tmp_path / "schema.json"
    target.write_text("the old schema\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("bench.disk.atomic.os.fsync", full)
    code, err = run_cli(["schema", "--out", str(target)], monkeypatch, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{target}: could not write" in err and "bytes" in err and "No space left on device" in err
    assert target.read_text() == "the old schema\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schema.json"]  # no temporary left behind


@pytest.mark.slow
def test_stack_files_of_ones_own_add_to_the_shipped_ones_and_a_broken_one_waits_until_used(tmp_path: Path) -> None:
    mine = tmp_path / "my-stacks"
    mine.mkdir()
    (mine / "halfway.toml").write_text('description = "unfinished\n[roles\n')
    env = {**os.environ, "ENGRAM_RUNS_DIR": str(tmp_path / "runs"), "ENGRAM_CACHE_DIR": str(tmp_path / "cache")}

    def bench(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bench", *argv],
            env={**env, "ENGRAM_STACKS_DIR": str(folder)},
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )

    for folder in (tmp_path / "nowhere", tmp_path, mine):  # missing, without offline.toml, with a broken file
        helped = bench(folder, "--help")
        assert helped.returncode == 0 and "Traceback" not in helped.stderr, helped.stderr
    planned = bench(mine, "plan", "raw-turn-rag", "--slice", "dev")  # the shipped offline stack is still there
    assert planned.returncode == 0, planned.stderr
    broken = bench(mine, "plan", "raw-turn-rag", "--slice", "dev", "--stack", "halfway")
    assert broken.returncode == 2 and len(broken.stderr.strip().splitlines()) == 1, broken.stderr
    assert "halfway.toml: expected a readable TOML stack file" in broken.stderr
    missing = bench(tmp_path / "nowhere", "plan", "raw-turn-rag", "--stack", "mine")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert "environment ENGRAM_STACKS_DIR: expected an existing folder" in missing.stderr
    # One's own offline.toml, broken: --help still shows (no stack is read to print it); a run names the file.
    (mine / "offline.toml").write_text("garbage [\n")
    assert bench(mine, "--help").returncode == 0 and bench(mine, "reproduce-dev", "--help").returncode == 0
    planned = bench(mine, "plan", "raw-turn-rag", "--slice", "dev")
    assert planned.returncode == 2 and len(planned.stderr.strip().splitlines()) == 1, planned.stderr
    assert "offline.toml: expected a readable TOML stack file" in planned.stderr


def _request(text: str) -> CallRequest:
    return CallRequest(
        provider="openai", endpoint="chat.completions", model="gpt-4o-mini", body={"q": text}, purpose="answer"
    )


def test_a_reply_over_the_providers_limit_is_refused_named_and_not_cached(tmp_path: Path) -> None:
    gateway = Gateway(local=tmp_path / "cache", subsets=[], mode="record")
    request = _request("tell me everything")
    huge = {"text": "la " * 400_000}

    with pytest.raises(ReplyTooLarge) as refused:
        gateway.call(request, lambda r: LiveResponse(body=huge, cost_usd=0.0))
    assert "openai/gpt-4o-mini answer reply" in str(refused.value) and "not cached" in str(refused.value)
    assert gateway.local is not None and gateway.local.get(request.key()) is None
    small = gateway.call(_request("a short one"), lambda r: LiveResponse(body={"text": "ok"}, cost_usd=0.0))
    assert small.body == {"text": "ok"}


def test_a_very_long_answer_scores_without_a_regex_time_limit() -> None:
    answer = "the ferry to the island leaves at noon. " * 5_000  # 200 KB, in pieces; NLTK's 5 s limit is off
    assert 0.0 < mem0_bleu1(answer, "The ferry leaves at noon.") < 0.01
    from nltk import redos

    assert redos.DEFAULT_TIMEOUT is None


@given(st.text(alphabet=st.sampled_from("ab .\n"), max_size=300), st.integers(min_value=1, max_value=40))
def test_cutting_an_answer_into_pieces_loses_nothing(text: str, size: int) -> None:
    cut = pieces(text, size)
    assert "".join(cut) == text
    assert all(len(piece) <= size for piece in cut[:-1]) and PIECE_CHARS >= 10_000


def test_a_damaged_entry_is_named_then_removed_or_re_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    request = _request("what colour was the boat?")
    gateway = Gateway(local=cache, subsets=[], mode="record")
    gateway.call(request, lambda r: LiveResponse(body={"text": "green"}, cost_usd=0.0))
    gateway.close()
    store = LocalStore(cache)
    store.put_raw(request.key(), '{"key": "torn')
    store.close()

    code, out, _ = run_cli_both(["cache", "verify", "--cache-dir", str(cache)], monkeypatch, capsys)
    assert code == 1 and f"damaged  {request.key()}" in out and "1 damaged of 1 entries" in out, out

    rerecorded = Gateway(local=cache, subsets=[], mode="record")  # record mode replaces it instead of stopping
    again = rerecorded.call(request, lambda r: LiveResponse(body={"text": "blue"}, cost_usd=0.0))
    assert again.body == {"text": "blue"} and not again.cached
    assert rerecorded.local is not None and rerecorded.local.get(request.key()).body == {"text": "blue"}
    rerecorded.close()

    store = LocalStore(cache)
    store.put_raw(request.key(), "not json at all")
    store.close()
    code, out, _ = run_cli_both(["cache", "verify", "--repair", "--cache-dir", str(cache)], monkeypatch, capsys)
    assert code == 0 and "removed 1 damaged of 1 entries" in out, out
    assert LocalStore(cache).get(request.key()) is None
    code, err = run_cli(["cache", "delete", request.key(), "--cache-dir", str(cache)], monkeypatch, capsys)
    assert code == 2 and "expected a key the local cache" in err and len(err.splitlines()) == 1


def test_cache_delete_removes_one_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = LocalStore(tmp_path)
    kept = CacheEntry(
        key="k1",
        provider="openai",
        endpoint="chat",
        model="m",
        purpose="answer",
        replicate=0,
        body="x",
        input_tokens=1,
        output_tokens=1,
        cost_usd=0.0,
        latency_ms=1.0,
        recorded_at="2026-01-01T00:00:00+00:00",
    )
    store.add(kept)
    store.put_raw("k2", "garbage")
    store.close()
    code, _ = run_cli(["cache", "delete", "k2", "--cache-dir", str(tmp_path)], monkeypatch, capsys)
    assert code == 0
    store = LocalStore(tmp_path)
    assert list(store.keys()) == ["k1"] and store.verify() == []


@pytest.mark.parametrize("text", ["3,,20", "3,", ",3", "3, ,20"])
def test_an_empty_k_in_a_list_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="single commas"):
        parse_ks(text)


def test_an_interrupted_command_says_in_one_line_what_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bench.cli.program
    from bench.disk.atomic import write_text

    def interrupted() -> None:
        write_text(tmp_path / "first.json", "{}\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(bench.cli.program, "app", interrupted)
    code, err = run_cli(["anything"], monkeypatch, capsys)
    assert code == 130 and len(err.splitlines()) == 1, err
    assert "interrupted" in err and str(tmp_path / "first.json") in err and "nothing is half-written" in err


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(0.0, "$0.00"), (20.0, "$20.00"), (0.00001, "$0.00001"), (0.0042, "$0.0042"), (0.013, "$0.01")],
)
def test_a_dollar_amount_keeps_the_digits_that_matter(amount: float, shown: str) -> None:
    assert usd(amount) == shown


def test_an_environment_folder_naming_a_file_is_one_line_even_before_the_command_is_loaded(tmp_path: Path) -> None:
    # A fresh process: the variable is read while the command line is being imported, where a raise is a traceback.
    notes = tmp_path / "notes.txt"
    notes.write_text("not a folder\n")
    for variable in ("ENGRAM_CACHE_DIR", "ENGRAM_RUNS_DIR"):
        done = subprocess.run(
            [sys.executable, "-m", "bench", "run", "raw-turn-rag", "--limit", "1"],
            env={**os.environ, variable: str(notes)},
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert (
            done.stderr.strip()
            == f"engram-bench: environment {variable}: expected a folder, found the file {str(notes)!r}"
        )


def test_ctrl_c_turned_into_typers_silent_exit_130_still_gets_its_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bench.cli.program

    def typer_on_ctrl_c() -> None:
        raise SystemExit(130)  # what typer does with a KeyboardInterrupt inside a command

    monkeypatch.setattr(bench.cli.program, "app", typer_on_ctrl_c)
    code, err = run_cli(["run", "anything"], monkeypatch, capsys)
    assert code == 130 and err.startswith("engram-bench: interrupted; ") and len(err.splitlines()) == 1


def test_a_recursive_glob_over_a_folder_with_two_symlink_loops_returns_each_file_once(tmp_path: Path) -> None:
    # glob.glob(recursive=True) followed the links and never returned; the spec is what a user quotes for compare.
    folder = tmp_path / "results" / "mine"
    folder.mkdir(parents=True)
    (folder / "up").symlink_to("..")
    (folder / "again").symlink_to("../mine")
    shutil.copy(REPO_ROOT / "results" / "offline" / "dev" / "mem0__k3.json", folder / "mem0__k3.json")
    found: list[list[Path]] = []
    worker = threading.Thread(target=lambda: found.append(result_files(f"{tmp_path}/results/**/*.json")), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the glob is still walking the loops"
    assert found == [[folder / "mem0__k3.json"]]


def test_view_of_a_folder_with_out_naming_an_html_file_makes_no_folder_of_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "gallery.html"
    code, err = run_cli(["view", "results/offline/dev", "--out", str(target)], monkeypatch, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "expected a folder for the gallery" in err and not target.exists()
