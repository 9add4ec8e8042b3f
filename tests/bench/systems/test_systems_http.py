"""A memory service in another process, written against docs/memory-protocol.md only, runs as an arm from a TOML
file; every way it can misbehave stops the run with one line naming it, and nothing is written."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from arm_runs import folder_options

from bench.errors import BenchError, ConfigError, IsolationLeak, SystemFailed
from bench.run.runner import run_arm
from tests.bench.run_args import RunArgs

SERVICE = Path(__file__).parents[1].joinpath("memory_service.py")


def _arm(folder: Path, name: str, settings: str, k: int = 4) -> Path:
    arms = folder / "arms"
    arms.mkdir(exist_ok=True)
    (arms / f"{name}.toml").write_text(f'system = "http"\nk = {k}\n[settings]\n{settings}\n')
    return arms


def _command(*flags: str) -> str:
    return "command = " + json.dumps([sys.executable, str(SERVICE), "--port", "{port}", *flags])


def _options(folder: Path, limit: int | None = 6) -> RunArgs:
    return folder_options(folder, limit)


def _no_results(folder: Path) -> bool:
    return not (folder / "out").exists() or not list((folder / "out").glob("*.json"))


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_service_started_from_its_command_runs_as_an_arm_and_is_stopped_after(tmp_path: Path) -> None:
    _arm(tmp_path, "wordbag", _command())
    [written] = run_arm("wordbag", "dev", *_options(tmp_path))

    result = json.loads(written.read_text())
    assert result["system"] == "http" and result["k"] == 4
    described = result["extras"]["system"]
    assert described["memory_system"]["library"] == "wordbag-memory"
    assert described["memory_system"]["version"] == "0.0.1"
    assert described["protocol"] == "engram-memory/1" and described["isolation_canary"] is True
    answers = result["answers"]
    assert len(answers) == 6 and all(a["lines_shown"] == 4 for a in answers)
    # Every line came back with the id of the dev turn it quotes, so evidence recall could be scored.
    for answer in answers:
        for line, sources in zip(answer["lines"], answer["sources"], strict=True):
            assert len(sources) == 1 and sources[0].startswith("D")
            assert " said: " in line
    assert any(a["evidence_recall"] for a in answers if a["evidence_recall"] is not None)
    assert result["store"]["stored"] == 76 and result["store"]["unit"] == "turn"
    # The canary lived in its own namespace: nothing about the tortoise reached any answer.
    assert not any("tortoise" in line for a in answers for line in a["lines"])
    log = next((tmp_path / "runs").rglob("server.log"))
    assert log.exists()
    running = subprocess.run(["pgrep", "-f", str(SERVICE)], capture_output=True, text=True).stdout.split()
    assert running == []


@pytest.fixture()
def running_service(tmp_path: Path) -> Iterator[int]:
    """A service somebody else started, reached by its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVICE), "--port", str(port)])
    try:
        for _ in range(200):
            if not _port_free(port):
                break
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(5)


def test_a_service_already_running_is_reached_by_url_and_left_running(tmp_path: Path, running_service: int) -> None:
    _arm(tmp_path, "wordbag-url", f'url = "http://127.0.0.1:{running_service}"')
    [written] = run_arm("wordbag-url", "dev", *_options(tmp_path, limit=3))
    assert json.loads(written.read_text())["accuracy"]["n"] == 3
    assert not _port_free(running_service)  # the harness does not stop what it did not start


@pytest.mark.parametrize(
    ("flags", "error", "fragment"),
    [
        (("--too-many",), SystemFailed, "lines: expected at most k=4 lines, found 6"),
        (("--malformed",), SystemFailed, "lines: expected a JSON array, found str"),
        (("--bad-source",), SystemFailed, "'D99:999', never written"),
        (("--leak",), IsolationLeak, "isolation canary leaked"),
        (("--crash-after", "9"), SystemFailed, "of message D1:9: "),
        (("--slow-retrieve", "3"), SystemFailed, "timed out, no answer within timeout_s=1 s"),
    ],
)
def test_a_misbehaving_service_stops_the_run_with_one_line_and_writes_nothing(
    tmp_path: Path, flags: tuple[str, ...], error: type[BenchError], fragment: str
) -> None:
    _arm(tmp_path, "unruly", _command(*flags) + "\ntimeout_s = 1")
    with pytest.raises(error) as raised:
        run_arm("unruly", "dev", *_options(tmp_path))
    message = str(raised.value)
    assert fragment in message and "system 'http'" in message
    assert "\n" not in message and raised.value.exit_code == 2
    assert _no_results(tmp_path)


def test_a_crash_says_how_the_process_ended_and_quotes_its_last_output(tmp_path: Path) -> None:
    _arm(tmp_path, "crashing", _command("--crash-after", "2"))
    with pytest.raises(SystemFailed) as raised:
        run_arm("crashing", "dev", *_options(tmp_path))
    assert "the process ended (exit code 3)" in str(raised.value)


def test_an_unreachable_url_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _arm(tmp_path, "nobody-home", f'url = "http://127.0.0.1:{port}"')
    with pytest.raises(SystemFailed) as raised:
        run_arm("nobody-home", "dev", *_options(tmp_path))
    assert f"GET /health: could not connect to http://127.0.0.1:{port}" in str(raised.value)
    assert _no_results(tmp_path)


def test_a_command_that_never_serves_is_stopped_at_its_start_limit(tmp_path: Path) -> None:
    sleeper = json.dumps([sys.executable, "-c", "import time; print('warming up'); time.sleep(60)"])
    _arm(tmp_path, "sleepy", f"command = {sleeper}\nstart_timeout_s = 1")
    with pytest.raises(SystemFailed) as raised:
        run_arm("sleepy", "dev", *_options(tmp_path))
    assert "did not answer its health check within start_timeout_s=1 s" in str(raised.value)
    assert "warming up" in str(raised.value)


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ("", "expected exactly one of url, command or adapter for system 'http', found none"),
        ('url = "http://x"\ncommand = "serve"', "found url, command"),
        ('url = "ftp://x"', "settings.url: expected an http:// or https:// URL"),
        ('command = "serve {prt}"', "expected placeholders among"),
        ('adapter = "no-such-adapter"', "adapter: expected one of the folders"),
    ],
)
def test_a_bad_http_arm_is_refused_before_anything_starts(tmp_path: Path, settings: str, fragment: str) -> None:
    _arm(tmp_path, "misdeclared", settings)
    with pytest.raises(ConfigError) as raised:
        run_arm("misdeclared", "dev", *_options(tmp_path))
    assert fragment in str(raised.value)
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").rglob("server.log"))


def _service_adapter(root: Path, library: str, claims: str) -> None:
    folder = root / "wordbag"
    folder.mkdir(parents=True)
    command = json.dumps(["{python}", str(SERVICE), "--port", "{port}", "--claims", claims])
    (folder / "adapter.toml").write_text(
        f'description = "wordbag as an adapter"\nlibrary = "{library}"\nstore = "a dict"\n'
        f'environment = "project"\ncommand = {command}\n'
    )


@pytest.mark.parametrize(
    ("library", "claims", "fragment"),
    [
        ("wordbag-memory", "wordbag-memory==0.0.1", "library 'wordbag-memory': expected it installed in"),
        ("httpx", "httpx==0.0.1", "system.version: expected " + metadata.version("httpx") + " (installed"),
        ("httpx", "requests==" + metadata.version("httpx"), "system.library: expected 'httpx' (its adapter.toml)"),
    ],
)
def test_an_adapter_must_name_the_library_and_version_its_environment_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: str, claims: str, fragment: str
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    _service_adapter(tmp_path / "systems", library, claims)
    _arm(tmp_path, "wordbag-adapter", 'adapter = "wordbag"')
    with pytest.raises(SystemFailed) as raised:
        run_arm("wordbag-adapter", "dev", *_options(tmp_path))
    assert fragment in str(raised.value) and "system 'wordbag' (adapter)" in str(raised.value)


def test_an_adapter_result_records_the_installed_library_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    _service_adapter(tmp_path / "systems", "httpx", "httpx==" + metadata.version("httpx"))
    _arm(tmp_path, "wordbag-adapter", 'adapter = "wordbag"')
    [written] = run_arm("wordbag-adapter", "dev", *_options(tmp_path, limit=2))
    described = json.loads(written.read_text())["extras"]["system"]
    assert described["memory_system"]["version"] == metadata.version("httpx")
    assert described["adapter"] == {"name": "wordbag", "environment": "project", "roles": [], "config": {}}


def test_a_run_killed_with_sigterm_stops_the_service_it_started_and_writes_nothing(tmp_path: Path) -> None:
    """A plain `kill` (or a scheduler's time limit) on the harness: the memory service it started goes with it, the
    way it does on Ctrl-C, instead of being left running with nobody to stop it."""
    marker = str(tmp_path / "requests.count")  # on the service's command line: tells it from any other test's
    _arm(tmp_path, "stalled", _command("--slow-retrieve", "120", "--count-file", marker))
    env = {
        **os.environ,
        "ENGRAM_CACHE_DIR": str(tmp_path / "cache"),
        "ENGRAM_RUNS_DIR": str(tmp_path / "runs"),
        "ENGRAM_LEDGER": str(tmp_path / "ledger.jsonl"),
    }
    argv = ["run", "stalled", "--slice", "dev", "--arms-dir", str(tmp_path / "arms"), "--out", str(tmp_path / "out")]
    harness = subprocess.Popen(
        [sys.executable, "-m", "bench", *argv, "--quiet"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        service = _pids_of(marker, within_s=60)
        assert service, "the harness never started the service"
        time.sleep(1.0)  # into the stalled retrieve
        harness.send_signal(signal.SIGTERM)
        _, err = harness.communicate(timeout=30)
    finally:
        harness.kill()
    assert harness.returncode == 143
    assert err.strip().splitlines()[-1].startswith("engram-bench: stopped by SIGTERM;")
    assert _pids_of(marker, within_s=0) == []
    assert _no_results(tmp_path)


def _pids_of(command_part: str, within_s: float) -> list[str]:
    """The pids of processes whose command line holds `command_part`, waiting up to `within_s` for one."""
    deadline = time.monotonic() + within_s
    while True:
        running = subprocess.run(["pgrep", "-f", command_part], capture_output=True, text=True).stdout.split()
        if running or time.monotonic() >= deadline:
            return running
        time.sleep(0.1)
