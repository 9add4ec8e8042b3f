"""A memory system's server process: started from an arm's `command`, watched, and always stopped.

The harness owns the process it starts: it runs in its own process group (so a server that forks workers is
stopped whole), its output goes to a log file in the run's store folder (quoted when it fails), and `stop()` runs
from the system's close(), from a failed start, and at interpreter exit, so no server outlives the run.
"""

from __future__ import annotations

import atexit
import contextlib
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
POLL_S = 0.05
LOG_NAME = "server.log"

_RUNNING: weakref.WeakSet[ServerProcess] = weakref.WeakSet()


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
                env={**os.environ, **env},
                cwd=cwd,
                start_new_session=True,  # its own process group: stop() ends it and any workers it forked
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
                self.stop()
                raise failure
            try:
                return probe()
            except SystemFailed as exc:
                if "could not connect" not in str(exc) and "timed out" not in str(exc):
                    self.stop()
                    raise
                last = exc
            time.sleep(POLL_S)
        failure = SystemFailed(
            f"{self.label}: did not answer its health check within start_timeout_s={timeout_s:g} s "
            f"({last}); its last output: {self.last_output()}"
        )
        self.stop()
        raise failure

    def stop(self) -> None:
        """Terminate the process group, then kill it if it is still there after a grace period. Idempotent."""
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE_S)
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


def project_python() -> str:
    """The harness's own interpreter, for adapters that run in the project's environment."""
    return sys.executable
