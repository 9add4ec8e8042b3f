"""The stdio transport of an `mcp` arm: the harness starts the server itself, so it owns the process.

The SDK's own stdio client starts the server too, but leaves three things the harness must control: the server
dies with the harness even when the harness is SIGKILLed (its own process group and a parent-death signal,
`bench.systems.process.die_with_harness`); a server that never opens its session is killed at once, not after the
SDK's own grace periods; and stdout is the protocol channel (the MCP spec: a server writes nothing else there), so
the first line that is not JSON-RPC ends the session with one line quoting it instead of one SDK traceback per
line. The server's stderr, and any stdout line it could not use, go to the log file the error line names.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from bench.errors import SystemFailed
from bench.systems.process import die_with_harness, register_stopper, unregister_stopper

LINE_LIMIT = 64 * 1024 * 1024  # one JSON-RPC message per line; a search reply may be large
STDIN_CLOSE_WAIT_S = 2.0  # a server that ends when its stdin closes gets this long before SIGTERM
TERM_WAIT_S = 1.0
QUOTED_CHARS = 120


class StdioServer:
    """One server started on stdio. `failure` says why the session ended when the harness ended it."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: IO[str], label: str) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        self.log = log
        self.label = label
        self.failure: str | None = None
        self.pid: int | None = None
        self._proc: asyncio.subprocess.Process | None = None

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The (read, write) memory streams a `ClientSession` takes, over the started process's pipes."""
        # local import: mcp (and anyio, its dependency) is the optional mcp extra, which the base install lacks
        import anyio
        from mcp.shared.message import SessionMessage

        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,  # its own process group: stopping it stops any workers it forked
                preexec_fn=die_with_harness(),
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise SystemFailed(f"{self.label}: could not start {self.argv[0]}: {exc.strerror or exc}") from None
        self._proc, self.pid = proc, proc.pid
        register_stopper(self.kill)
        incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)
        tasks = [
            asyncio.ensure_future(self._read(proc, incoming_send)),
            asyncio.ensure_future(self._write(proc, outgoing_receive)),
        ]
        try:
            yield incoming, outgoing
        finally:
            for task in tasks:
                task.cancel()
            await self._stop(proc)
            unregister_stopper(self.kill)

    async def _read(self, proc: asyncio.subprocess.Process, send: Any) -> None:
        # local import: the optional mcp extra
        from mcp import types
        from mcp.shared.message import SessionMessage

        assert proc.stdout is not None
        async with send:
            while True:
                try:
                    raw = await proc.stdout.readline()
                except ValueError:  # a line past LINE_LIMIT
                    self._fail(f"wrote a line longer than {LINE_LIMIT} bytes to stdout")
                    return
                if not raw:
                    return  # the server closed stdout (it ended): pending requests fail with "Connection closed"
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    message = types.JSONRPCMessage.model_validate_json(line)
                except ValueError:
                    self.log.write(f"[engram-bench] not JSON-RPC on stdout: {line}\n")
                    self.log.flush()
                    shown = line if len(line) <= QUOTED_CHARS else line[:QUOTED_CHARS] + "..."
                    self._fail(f"wrote a line to stdout that is not JSON-RPC (stdout is MCP's channel): {shown!r}")
                    return
                await send.send(SessionMessage(message))

    async def _write(self, proc: asyncio.subprocess.Process, receive: Any) -> None:
        assert proc.stdin is not None
        async with receive:
            async for message in receive:
                text = message.message.model_dump_json(by_alias=True, exclude_none=True)
                try:
                    proc.stdin.write(text.encode() + b"\n")
                    await proc.stdin.drain()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the server ended; the reader reports it

    def _fail(self, why: str) -> None:
        if self.failure is None:
            self.failure = why
        self.kill()

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """A server that opened its session ends when its stdin closes; else SIGTERM, then SIGKILL, to the group."""
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        for wait_s, sig in ((STDIN_CLOSE_WAIT_S, signal.SIGTERM), (TERM_WAIT_S, signal.SIGKILL)):
            try:
                await asyncio.wait_for(proc.wait(), wait_s)
                break
            except TimeoutError:
                self._signal(sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), TERM_WAIT_S)

    def kill(self) -> None:
        """SIGKILL the server's process group now (a failed start, a broken channel, the harness exiting).
        Safe from any thread: it only sends a signal."""
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if self.pid is not None and (self._proc is None or self._proc.returncode is None):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
