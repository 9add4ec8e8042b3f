"""A memory system's server process: started from an arm's `command`, watched, and always stopped.

The harness owns the process it starts: it runs in its own process group (so a server that forks workers is
stopped whole), its output goes to a log file in the run's store folder (quoted when it fails), and `stop()` runs
from the system's close(), from a failed start, and at interpreter exit, so no server outlives the run. A harness
killed outright (SIGKILL, the OOM killer) runs no exit handler: the server then gets SIGKILL from the kernel, which
`die_with_harness` asks for (Linux's parent-death signal), so it never lives on under PID 1.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.errors import ConfigError, SystemFailed

STOP_GRACE_S = 5.0
FAILED_START_GRACE_S = 0.5  # a server that never answered gets this long after SIGTERM: killed within timeout + 1 s
POLL_S = 0.05
LOG_NAME = "server.log"

#: variables of the harness's own environment a server it starts never gets. pytest's marker switches some servers
#: to a test mode (basic-memory then indexes and embeds each note before its write returns, and logs otherwise), so
#: under pytest the suite would measure another server than the one a user runs.
NOT_INHERITED = ("PYTEST_CURRENT_TEST",)

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when the thread that started it ends

_RUNNING: weakref.WeakSet[ServerProcess] = weakref.WeakSet()
_STOPPERS: list[Callable[[], None]] = []  # other started servers (mcp stdio): each callable kills one at exit


def die_with_harness() -> Callable[[], None]:
    """A `preexec_fn` for a server the harness starts: the kernel sends it SIGKILL when the harness dies, even of
    SIGKILL. It runs in the forked child before exec; a harness that died before it ran is caught by the parent
    check. Where prctl is missing (not Linux) it does nothing: the process group and exit handler still apply."""
    parent = os.getpid()

    def arm() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:
            os._exit(1)

    return arm


def register_stopper(stop: Callable[[], None]) -> None:
    _STOPPERS.append(stop)


def unregister_stopper(stop: Callable[[], None]) -> None:
    with contextlib.suppress(ValueError):
        _STOPPERS.remove(stop)


def free_port() -> int:
    """A port nothing listens on right now (the server binds it a moment later; a clash shows as a failed start)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def command_words(command: str | Sequence[str], where: str) -> list[str]:
    """An arm's `command`: a list of words, or one string split like a shell would (no shell runs it)."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    if not words or not all(isinstance(w, str) and w for w in words):
        raise ConfigError(f"{where}: expected a non-empty command (a string or a list of strings), found {command!r}")
    return words


def expand(words: Sequence[str], values: Mapping[str, str], where: str) -> list[str]:
    """Fill `{port}`, `{python}`, `{dir}`, `{data_dir}` in each word; an unknown placeholder is refused."""
    out = []
    for word in words:
        try:
            out.append(word.format_map(values))
        except (KeyError, ValueError, IndexError) as exc:
            raise ConfigError(
                f"{where}: expected placeholders among {sorted('{' + k + '}' for k in values)}, found {word!r} ({exc})"
            ) from None
    return out


def inherited_environ() -> dict[str, str]:
    """The harness's environment as a server it starts inherits it (without NOT_INHERITED)."""
    return {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}


def env_table(table: Mapping[str, Any], values: Mapping[str, str], where: str) -> dict[str, str]:
    """An arm's `env` table with its placeholders filled: each value a string (a number is written as one)."""
    out = {}
    for name, value in table.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not name:
            raise ConfigError(f"{where}.{name}: expected a string value for an environment variable, found {value!r}")
        [out[name]] = expand([str(value)], values, f"{where}.{name}")
    return out


def private_home(data_dir: Path) -> dict[str, str]:
    """HOME and the XDG folders inside a server's data dir: a server that keeps its store under ~ (or ~/.local/share)
    keeps it in the run's own folder, so no two runs share a store and nothing lands in the user's home."""
    home = data_dir / "home"
    folders = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {name: str(folder) for name, folder in folders.items()}


class ServerProcess:
    """One started server. `label` names the system in every error line."""

    def __init__(self, argv: Sequence[str], *, label: str, log_dir: Path, env: Mapping[str, str], cwd: Path | None):
        self.label = label
        self.argv = list(argv)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / LOG_NAME
        self._log = self.log_path.open("ab")
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env={**inherited_environ(), **env},
                cwd=cwd,
                start_new_session=True,  # its own process group: stop() ends it and any workers it forked
                preexec_fn=die_with_harness(),
            )
        except OSError as exc:
            self._log.close()
            raise SystemFailed(f"{label}: could not start {shlex.join(self.argv)}: {exc.strerror or exc}") from None
        _RUNNING.add(self)

    def exited(self) -> int | None:
        return self.proc.poll()

    def last_output(self) -> str:
        """The server's last non-empty output line, for an error message."""
        try:
            lines = [ln for ln in self.log_path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return "(no output)"
        return lines[-1].strip()[:300] if lines else "(no output)"

    def describe_exit(self) -> str:
        code = self.exited()
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return f"the process ended ({how}); its last output: {self.last_output()}"

    def wait_ready(self, probe: Callable[[], Any], timeout_s: float) -> Any:
        """Call `probe` until it returns without raising, the process ends, or `timeout_s` passes."""
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.exited() is not None:
                failure = SystemFailed(f"{self.label}: did not start: {self.describe_exit()}")
                self.stop(FAILED_START_GRACE_S)
                raise failure
            try:
                return probe()
            except SystemFailed as exc:
                if "could not connect" not in str(exc) and "timed out" not in str(exc):
                    self.stop(FAILED_START_GRACE_S)
                    raise
                last = exc
            time.sleep(POLL_S)
        failure = SystemFailed(
            f"{self.label}: did not answer its health check within start_timeout_s={timeout_s:g} s "
            f"({last}); its last output: {self.last_output()}"
        )
        self.stop(FAILED_START_GRACE_S)
        raise failure

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Terminate the process group, then kill it if it is still there after a grace period. Idempotent."""
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(STOP_GRACE_S)
        with contextlib.suppress(OSError):
            self._log.close()
        _RUNNING.discard(self)

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


@atexit.register
def stop_all_servers() -> None:
    """A run that dies of an unexpected exception still stops every server it started; so does one stopped by
    SIGTERM (bench.cli.program calls this first, so a worker thread waiting on a server's reply is freed)."""
    for server in list(_RUNNING):
        with contextlib.suppress(Exception):
            server.stop()
    for stop in list(_STOPPERS):
        with contextlib.suppress(Exception):
            stop()


def project_python() -> str:
    """The harness's own interpreter, for adapters that run in the project's environment."""
    return sys.executable
