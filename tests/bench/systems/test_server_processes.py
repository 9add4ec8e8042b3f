"""Servers the harness starts never outlive it and never flood the terminal: a stdio MCP server that hangs or prints
garbage is one line within its time limit plus a second, and a harness killed outright takes its servers along."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from arm_runs import folder_options

from bench.errors import ConfigError, SystemFailed
from bench.run.runner import run_arm
from tests.bench.run_args import RunArgs

pytest.importorskip("mcp")

SERVER = Path(__file__).parents[1].joinpath("mcp_memory_server.py")
# A "server" that notes its pid beside the run (argv[1]), says `argv[2]` on stdout, and then never answers.
STUCK = (
    "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
    "print(*sys.argv[2:], flush=True); time.sleep(600)"
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state  # a zombie has ended; only its parent's bookkeeping is left


def _wait_gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def _options(folder: Path) -> RunArgs:
    return folder_options(folder, limit=2)


def _stuck_arm(folder: Path, name: str, says: str, start_timeout_s: float) -> Path:
    arms = folder / "arms"
    arms.mkdir(exist_ok=True)
    pid_file = folder / f"{name}.pid"
    command = json.dumps([sys.executable, "-c", STUCK, str(pid_file), *([says] if says else [])])
    (arms / f"{name}.toml").write_text(
        f'system = "mcp"\nk = 3\n[settings]\ncommand = {command}\nstart_timeout_s = {start_timeout_s}\n'
    )
    return pid_file


@pytest.mark.parametrize(
    ("says", "expected"),
    [
        ("Loading the embedding model, please wait...", "not JSON-RPC"),
        ('["jsonrpc", 2.0, "not a message"]', "not JSON-RPC"),
        ("", "did not open within start_timeout_s=3 s"),
    ],
    ids=["a banner on stdout", "broken JSON on stdout", "silence"],
)
def test_a_stdio_server_that_never_opens_its_session_is_one_line_and_is_gone_within_its_timeout(
    tmp_path: Path, says: str, expected: str, capfd: pytest.CaptureFixture[str]
) -> None:
    pid_file = _stuck_arm(tmp_path, "stuck", says, 3)
    started = time.monotonic()
    with pytest.raises(SystemFailed) as raised:
        run_arm("stuck", "dev", *_options(tmp_path))
    took = time.monotonic() - started
    message = str(raised.value)
    assert expected in message and "\n" not in message, message
    assert "server.log" in message  # where its own output went: never onto the terminal
    since_start = time.time() - pid_file.stat().st_mtime  # the pid is written as the server starts
    # its time limit, a second to kill it, and slack for a loaded machine (before: 20 s for an 8 s limit)
    assert since_start < 3 + 1 + 2 and took > since_start, (since_start, took)
    pid = int(pid_file.read_text())
    assert _wait_gone(pid, 1.0), f"the stuck server {pid} is still running"
    assert "Traceback" not in capfd.readouterr().err
    [log] = (tmp_path / "runs").rglob("server.log")
    if says:
        assert says in log.read_text()


def test_a_garbage_line_ends_the_session_at_once_rather_than_at_the_time_limit(tmp_path: Path) -> None:
    pid_file = _stuck_arm(tmp_path, "chatty", "Starting memory service v12 on stdio", 60)
    started = time.monotonic()
    with pytest.raises(SystemFailed) as raised:
        run_arm("chatty", "dev", *_options(tmp_path))
    assert "'Starting memory service v12 on stdio'" in str(raised.value)
    assert time.monotonic() - started < 30  # well before start_timeout_s=60
    assert _wait_gone(int(pid_file.read_text()), 1.0)


HARNESS = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    kind, folder = sys.argv[1], Path(sys.argv[2])
    stuck = [sys.executable, "-c", sys.argv[3], str(folder / "server.pid")]
    if kind == "http":
        from bench.systems.process import ServerProcess
        ServerProcess(stuck, label="x", log_dir=folder, env={}, cwd=None)
        time.sleep(600)
    else:
        from bench.systems.mcp_stdio import StdioServer
        from bench.systems.mcp_system import McpConnection
        server = StdioServer(stuck, env=dict(os.environ), cwd=folder, log=open(folder / "server.log", "a"), label="x")
        McpConnection(server.streams, "x", 600, server)
    """
)


@pytest.mark.parametrize("kind", ["http", "mcp"])
def test_a_server_dies_with_a_harness_killed_by_sigkill(tmp_path: Path, kind: str) -> None:
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, kind, str(tmp_path), STUCK],
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        pid_file = tmp_path / "server.pid"
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            assert harness.poll() is None, harness.stderr.read().decode() if harness.stderr else ""
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        harness.send_signal(signal.SIGKILL)  # no exit handler runs: only the kernel can end the server now
        harness.wait(10)
        assert _wait_gone(pid, 5.0), f"server {pid} outlived its harness"
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait(10)


def test_an_http_server_that_never_answers_and_ignores_sigterm_is_killed_within_its_timeout_and_a_second(
    tmp_path: Path,
) -> None:
    deaf = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + STUCK
    pid_file = tmp_path / "deaf.pid"
    (tmp_path / "arms").mkdir()
    command = json.dumps([sys.executable, "-c", deaf, str(pid_file)])
    (tmp_path / "arms" / "deaf.toml").write_text(
        f'system = "http"\nk = 3\n[settings]\ncommand = {command}\nstart_timeout_s = 2\n'
    )
    with pytest.raises(SystemFailed) as raised:
        run_arm("deaf", "dev", *_options(tmp_path))
    since_start = time.time() - pid_file.stat().st_mtime  # the pid is written as the server starts
    assert "did not answer its health check within start_timeout_s=2 s" in str(raised.value)
    assert since_start < 2 + 1 + 2, since_start  # SIGTERM is ignored: SIGKILL follows half a second after it
    assert _wait_gone(int(pid_file.read_text()), 0.2)


# A "server" that writes what it sees of pytest's marker variable (argv[1]) and an arm's own variable, then quits.
ENV_PROBE = (
    "import os, sys; open(sys.argv[1], 'w').write(repr((os.environ.get('PYTEST_CURRENT_TEST'), "
    "os.environ.get('ENGRAM_PROBE_VAR'))))"
)


def _probe_arm(folder: Path, kind: str, *, k: str | None, env_value: str) -> Path:
    """Writes arms/probe.toml: a `kind` arm (with `k = <k>` unless None) whose server is ENV_PROBE and whose env sets
    ENGRAM_PROBE_VAR to `env_value`. Returns the file the probe writes what it saw into."""
    seen = folder / "seen.txt"
    (folder / "arms").mkdir()
    command = json.dumps([sys.executable, "-c", ENV_PROBE, str(seen)])
    k_line = f"k = {k}\n" if k is not None else ""
    (folder / "arms" / "probe.toml").write_text(
        f'system = "{kind}"\n{k_line}[settings]\ncommand = {command}\nstart_timeout_s = 20\n'
        f'[settings.env]\nENGRAM_PROBE_VAR = "{env_value}"\n'
    )
    return seen


@pytest.mark.parametrize("kind", ["http", "mcp"])
def test_a_started_server_never_inherits_pytests_marker_so_the_suite_runs_the_server_a_user_runs(
    tmp_path: Path, kind: str
) -> None:
    """basic-memory switches to its test mode (each note indexed before its write returns) when it sees
    PYTEST_CURRENT_TEST: inherited, the suite would measure another server than a user's."""
    assert os.environ.get("PYTEST_CURRENT_TEST"), "pytest sets it for the running test"
    seen = _probe_arm(tmp_path, kind, k="3", env_value="from the arm")
    with pytest.raises(SystemFailed):  # it quits without serving: the run stops, once it has looked
        run_arm("probe", "dev", *_options(tmp_path))
    assert seen.read_text() == repr((None, "from the arm"))


def test_an_mcp_servers_env_can_name_the_runs_widest_k(tmp_path: Path) -> None:
    """A server that takes its result count only at start (mcp-server-qdrant's QDRANT_SEARCH_LIMIT) gets the run's
    widest k through `{k}`, not a number written by hand beside the arm's k."""
    seen = _probe_arm(tmp_path, "mcp", k="[3, 7]", env_value="limit={k}")
    with pytest.raises(SystemFailed):
        run_arm("probe", "dev", *_options(tmp_path))
    assert seen.read_text() == repr((None, "limit=7"))


def test_k_in_an_mcp_servers_env_without_a_k_in_the_run_is_one_line(tmp_path: Path) -> None:
    seen = _probe_arm(tmp_path, "mcp", k=None, env_value="{k}")
    with pytest.raises(ConfigError) as raised:
        run_arm("probe", "dev", *_options(tmp_path))
    assert "settings.env.ENGRAM_PROBE_VAR: {k} is the run's widest k" in str(raised.value)
    assert not seen.exists()  # refused before the server started
