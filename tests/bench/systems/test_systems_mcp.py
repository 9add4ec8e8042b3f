"""An MCP memory server written in the tests (stdio, the mcp SDK's server API) runs as an arm from a TOML file alone."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from arm_runs import folder_options

from bench.cli.commands.cache import export_run
from bench.errors import IsolationLeak, SystemFailed
from bench.run.runner import run_arm

pytest.importorskip("mcp")

SERVER = Path(__file__).parents[1].joinpath("mcp_memory_server.py")


def _arm(folder: Path, name: str, flags: tuple[str, ...] = (), extra: str = "", k: int = 5) -> None:
    arms = folder / "arms"
    arms.mkdir(exist_ok=True)
    command = json.dumps([sys.executable, str(SERVER), *flags])
    (arms / f"{name}.toml").write_text(
        f'description = "a notebook over MCP"\nsystem = "mcp"\nk = {k}\n[settings]\ncommand = {command}\n'
        + ("" if "timeout_s" in extra else "timeout_s = 20\n")
        + f"{extra}\n"
    )


def _run(folder: Path, name: str, limit: int = 5) -> dict:
    [written] = run_arm(name, "dev", *folder_options(folder, limit))
    return json.loads(written.read_text())


def test_an_mcp_memory_server_runs_as_an_arm_from_a_toml_file_alone(tmp_path: Path) -> None:
    _arm(tmp_path, "notebook", ("--data-dir", "{data_dir}"))
    result = _run(tmp_path, "notebook")

    described = result["extras"]["system"]
    assert described["transport"] == "stdio"
    assert described["tools"] == {
        "ingest": {"tool": "add_memory", "text_arg": "content", "namespace_arg": "user_id"},
        "search": {"tool": "search_memories", "text_arg": "query", "namespace_arg": "user_id", "k_arg": "limit"},
        "reset": {"tool": "delete_all_memories", "namespace_arg": "user_id"},
    }
    assert described["isolation"] == "namespace argument + canary"
    answers = result["answers"]
    assert len(answers) == 5 and all(a["lines_shown"] == 5 for a in answers)
    # Lines came back as the server stored them, and each is traced to the turn it holds.
    for answer in answers:
        for line, sources in zip(answer["lines"], answer["sources"], strict=True):
            assert line.startswith("[") and len(sources) == 1 and sources[0].startswith("D")
    assert result["store"]["stored"] == 76
    # The store lived in the run's own data folder, and the canary's namespace was emptied at the end.
    [notes] = (tmp_path / "runs").rglob("notes.json")
    kept = json.loads(notes.read_text())
    assert list(kept) == ["conv-26"] and len(kept["conv-26"]) == 76
    # The stdio server ended with the run.
    assert subprocess.run(["pgrep", "-f", str(SERVER)], capture_output=True, text=True).stdout.split() == []


def test_a_server_with_unusual_tool_names_runs_once_the_arm_names_them(tmp_path: Path) -> None:
    names = 'ingest_tool = "jot"\ntext_arg = "body"\nsearch_tool = "lookup"\nquery_arg = "phrase"'
    _arm(tmp_path, "odd-notebook", ("--tool-names", "odd"), names, k=3)
    result = _run(tmp_path, "odd-notebook", limit=3)
    tools = result["extras"]["system"]["tools"]
    assert tools["ingest"] == {"tool": "jot", "text_arg": "body", "namespace_arg": "bucket"}
    assert tools["search"] == {"tool": "lookup", "text_arg": "phrase", "namespace_arg": "bucket"}
    assert result["extras"]["system"]["k_applied_by"].startswith("harness")
    assert all(a["lines_shown"] == 3 for a in result["answers"])


def test_without_names_the_odd_server_is_refused_in_one_line_naming_its_tools(tmp_path: Path) -> None:
    _arm(tmp_path, "odd-unnamed", ("--tool-names", "odd"))
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "odd-unnamed")
    message = str(raised.value)
    assert "has no usable store" in message and "['jot', 'lookup']" in message and "settings.ingest_tool" in message
    assert not (tmp_path / "out").exists()


def test_a_server_without_memory_tools_is_one_line(tmp_path: Path) -> None:
    _arm(tmp_path, "weather", ("--no-memory-tools",))
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "weather")
    assert "found tools ['get_weather']" in str(raised.value) and "\n" not in str(raised.value)


def test_a_server_that_mixes_users_trips_the_isolation_canary(tmp_path: Path) -> None:
    _arm(tmp_path, "leaky-notebook", ("--ignore-user",))
    with pytest.raises(IsolationLeak) as raised:
        _run(tmp_path, "leaky-notebook")
    assert "isolation canary leaked" in str(raised.value) and raised.value.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_a_server_that_dies_at_start_is_one_line_quoting_it(tmp_path: Path) -> None:
    arms = tmp_path / "arms"
    arms.mkdir()
    command = json.dumps([sys.executable, "-c", "import sys; sys.exit('no notebook today')"])
    (arms / "dead.toml").write_text(f'system = "mcp"\nk = 3\n[settings]\ncommand = {command}\nstart_timeout_s = 20\n')
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "dead")
    assert "system 'mcp'" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (("--slow-search", "5"), "timed out, no answer within timeout_s=1 s"),
        (("--die-after", "7"), "for message D1:7"),
    ],
)
def test_a_slow_or_crashing_mcp_server_stops_the_run_in_one_line(
    tmp_path: Path, flags: tuple[str, ...], fragment: str
) -> None:
    _arm(tmp_path, "unsteady", flags, "timeout_s = 1")
    started = time.monotonic()
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "unsteady")
    assert fragment in str(raised.value) and "system 'mcp'" in str(raised.value)
    assert "\n" not in str(raised.value) and not (tmp_path / "out").exists()
    assert time.monotonic() - started < 60


def test_an_mcp_server_over_streamable_http_runs_from_its_url(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(SERVER), "--http-port", str(port)], stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        arms = tmp_path / "arms"
        arms.mkdir()
        (arms / "remote-notebook.toml").write_text(
            f'system = "mcp"\nk = 4\n[settings]\nurl = "http://127.0.0.1:{port}/mcp"\ntimeout_s = 20\n'
        )
        result = _run(tmp_path, "remote-notebook", limit=3)
    finally:
        server.terminate()
        server.wait(10)
    assert result["extras"]["system"]["transport"] == "streamable-http"
    assert all(a["lines_shown"] == 4 for a in result["answers"])


def test_a_line_is_traced_to_the_turn_it_quotes_and_never_to_a_short_reply_by_chance() -> None:
    from bench.systems.mcp_system import trace_sources

    stored = {"D7:1": "[5 May, 2024] Ysolde: Yes!", "D7:2": "[5 May, 2024] Ysolde: Our ferry to Tromso leaves at dawn."}
    said = {"D7:1": "Yes!", "D7:2": "Our ferry to Tromso leaves at dawn."}
    assert trace_sources("[5 May, 2024] Ysolde: Our ferry to Tromso leaves at dawn.", stored, said) == ("D7:2",)
    # A server that keeps only the words still gets its source; a short reply inside another line does not.
    assert trace_sources("Ysolde said: Our ferry to Tromso leaves at dawn. Yes!", stored, said) == ("D7:2",)
    assert trace_sources("Yes! said the captain", stored, said) == ()


def test_a_rerun_whose_server_retrieves_other_lines_is_named_on_the_terminal_and_in_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache replays model calls, not a server's search: the runner keeps the first run's lines beside the cache
    and says when a later run of the same arm retrieved others (its answers then miss the cache)."""
    _arm(tmp_path, "notebook", k=3)

    def run(salt: str, out: str) -> dict:
        monkeypatch.setenv("NOTEBOOK_SALT", salt)  # the server ends each note it returns with it
        [written] = run_arm("notebook", "dev", *folder_options(tmp_path, 4, out=tmp_path / out))
        return json.loads(written.read_text())

    first = run("a", "first")
    assert "replayed" not in first["extras"]["health"] and first["extras"]["health"]["problems"] == []
    assert len(list((tmp_path / "cache" / "retrievals").glob("*.json"))) == 1
    same = run("a", "same")
    assert same["extras"]["health"]["replayed"] == [4, 0] and same["extras"]["health"]["problems"] == []
    assert same["calls"]["misses"] == 0
    capsys.readouterr()

    other = run("b", "other")
    [problem] = other["extras"]["health"]["problems"]
    assert problem.startswith(
        "retrieval: 4 of 4 retrievals differ from the first run's, so their answers miss the cache"
    )
    assert (
        "(first: question conv-26:0 at k=3: recorded '…" in problem and " #a', now '…" in problem and " #b')" in problem
    )
    assert problem.endswith("try PYTHONHASHSEED in the arm's settings.env")  # basic-memory's cause, and its setting
    assert other["extras"]["health"]["replayed"] == [4, 4] and other["calls"]["misses"] > 0
    assert problem in capsys.readouterr().err  # on the terminal too, as a warning


def test_a_replay_from_an_exported_subset_alone_still_compares_with_the_recorded_retrievals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cache export --run RESULT` ships the arm's retrieval records beside its calls (byte for byte), so a replay
    reading only that subset (no local cache, as reproduce-dev and a fresh clone read shipped subsets) compares its
    retrievals too; before, such a replay compared nothing."""
    _arm(tmp_path, "notebook", k=3)
    monkeypatch.setenv("NOTEBOOK_SALT", "a")
    [written] = run_arm("notebook", "dev", *folder_options(tmp_path, 4, out=tmp_path / "first", mode="record"))
    subset = tmp_path / "subset"
    export_run(str(written), subset, cache_dir=tmp_path / "cache")
    [record] = (subset / "retrievals").glob("*.json")
    assert record.read_bytes() == (tmp_path / "cache" / "retrievals" / record.name).read_bytes()

    def from_the_subset(salt: str, out: str) -> dict:
        monkeypatch.setenv("NOTEBOOK_SALT", salt)  # the server ends each note it returns with it
        options = folder_options(tmp_path, 4, out=tmp_path / out, subsets=(subset,), use_local_cache=False)
        [again] = run_arm("notebook", "dev", *options)
        return json.loads(again.read_text())

    same = from_the_subset("a", "same")
    assert same["extras"]["health"]["replayed"] == [4, 0] and same["calls"]["misses"] == 0
    other = from_the_subset("b", "other")
    assert other["extras"]["health"]["replayed"] == [4, 4]
