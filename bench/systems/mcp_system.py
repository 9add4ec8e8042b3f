"""`system = "mcp"`: any MCP memory server as an arm, through the `mcp` SDK, with no code.

The server is started from the arm's `command` (stdio, `bench.systems.mcp_stdio`; one process per conversation,
its working folder, HOME and XDG folders inside the run's data dir, its stderr kept in the run's store folder) or
reached at a streamable-HTTP `url`. Its store, search and (optional) reset tools are found from
their names and input schemas (`bench.systems.mcp_tools`); the arm may name them and their arguments instead.

Turns are stored as `[<date>] <speaker>: <text>`, one tool call each (with the arm's fixed arguments filled).
Replies are read into hits by `bench.systems.mcp_replies`. MCP gives a result no message ids, so a hit's sources
are the id it names (`metadata.message_id`, an entity's name, a note's title) when that is a written turn, else the
written turns whose text it contains. A server with a namespace argument keeps conversations apart, and the
isolation canary checks it does; one without must be started by `command`, so each conversation has a server (and a
data dir) of its own.

The SDK is asynchronous; the harness is not. One event loop in a thread holds the session open (the SDK's
context managers must be entered and left by the same task) and each call is sent to it with its time limit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bench.errors import ConfigError, IsolationLeak, SystemFailed, ToolRefused
from bench.systems.adapters import venvs_dir
from bench.systems.base import RetrievedLines, Setting, System, SystemContext, WriteUsage, register_system
from bench.systems.http_system import DATA_DIR_NAME, PROBE_K, Canary, endpoint_env, store_stats
from bench.systems.mcp_replies import Hit, ReplyReader, collapsed, volatile_part
from bench.systems.mcp_stdio import StdioServer
from bench.systems.mcp_tools import ToolCall, ToolPlan, check_templates, fill_template, plan_tools
from bench.systems.process import (
    LOG_NAME,
    command_words,
    env_table,
    expand,
    inherited_environ,
    private_home,
    project_python,
)

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion

DEFAULT_TIMEOUT_S = 120.0
CLOSE_WAIT_S = 10.0
ABORT_WAIT_S = 0.5  # a session that never opened: the killed server's streams end at once
MIN_QUOTED_CHARS = 16  # a turn's text shorter than this is not traced by containment alone
ITEM_TEXT_KEYS = ("text", "memory", "content", "fact", "note", "document", "observation", "value", "summary")
MIN_WRITES = 10  # refusals are judged against at least this many writes: the first refused write never stops a run
ENV_PLACEHOLDERS = ("python", "data_dir", "dir", "venvs", "home", "k")
CANARY_DATE = "1 January, 2000"
CANARY_SPEAKER = "Canary"
LIST_KEYS = ("results", "memories", "items", "data", "hits", "matches", "documents", "notes", "facts", "result")


def rendered(message: SliceMessage) -> str:
    return f"[{message.session_date}] {message.speaker}: {message.text}"


class McpConnection:
    """One MCP client session held open in a thread of its own; `call` runs one coroutine on it, time-limited."""

    def __init__(
        self, transport: Callable[[], Any], label: str, start_timeout_s: float, server: StdioServer | None = None
    ) -> None:
        self.label = label
        self.server = server  # a stdio server the harness started (None: a url)
        self.session: Any = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"mcp {label}", daemon=True)
        self._thread.start()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._closing: asyncio.Event | None = None
        self._main = asyncio.run_coroutine_threadsafe(self._hold(transport), self._loop)
        try:
            self._ready.result(timeout=start_timeout_s)
        except concurrent.futures.TimeoutError:
            self.abort()
            raise SystemFailed(
                f"{label}: the MCP session did not open within start_timeout_s={start_timeout_s:g} s{self._log_note()}"
            ) from None
        except SystemFailed:
            self.abort()
            raise
        except Exception as exc:
            self.abort()
            raise SystemFailed(f"{label}: the MCP session did not open: {self._why(exc)}{self._log_note()}") from None

    async def _hold(self, transport: Callable[[], Any]) -> None:
        # local import: mcp is the optional mcp extra, which the base install lacks
        from mcp import ClientSession

        self._closing = asyncio.Event()
        try:
            async with transport() as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                self.session = session
                self._ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def call(self, make: Callable[[Any], Awaitable[Any]], timeout_s: float, what: str) -> Any:
        if self._main.done():
            raise SystemFailed(f"{self.label}: {what}: the MCP session has ended ({self._ending()})")

        async def limited() -> Any:
            return await asyncio.wait_for(make(self.session), timeout_s)

        future = asyncio.run_coroutine_threadsafe(limited(), self._loop)
        try:
            return future.result()
        except TimeoutError:
            raise SystemFailed(f"{self.label}: {what}: timed out, no answer within timeout_s={timeout_s:g} s") from None
        except SystemFailed:
            raise
        except Exception as exc:
            if self.server is not None and self.server.failure:
                raise SystemFailed(
                    f"{self.label}: {what}: the server {self.server.failure}{self._log_note()}"
                ) from None
            ended = f" ({self._ending()})" if self._main.done() else ""
            raise SystemFailed(f"{self.label}: {what}: failed: {_one_line(exc)}{ended}{self._log_note()}") from None

    def _ending(self) -> str:
        if self.server is not None and self.server.failure:
            return f"the server {self.server.failure}"
        exc = self._main.exception() if self._main.done() and not self._main.cancelled() else None
        return _one_line(exc) if exc is not None else "the server closed the session"

    def _why(self, exc: BaseException) -> str:
        if self.server is not None and self.server.failure:
            return f"the server {self.server.failure}"
        return _one_line(exc)

    def _log_note(self) -> str:
        """Where the server's own words are (its stderr is never printed: third-party output stays in the log)."""
        log = getattr(self.server.log, "name", None) if self.server is not None else None
        return f"; its output is in {log}" if isinstance(log, str) else ""

    def abort(self) -> None:
        """A session that failed to open: kill the server now (no grace: it did not answer), then close."""
        if self.server is not None:
            self.server.kill()
        self.close(wait_s=ABORT_WAIT_S)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Leave the session (which stops a stdio server) and the loop. Idempotent."""
        if self._loop.is_closed():
            return
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        with contextlib.suppress(BaseException):
            self._main.result(timeout=wait_s)
        if not self._main.done():
            self._main.cancel()
            if self.server is not None:
                self.server.kill()  # the session would not end in time: its server must not outlive it
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(wait_s)
        if not self._thread.is_alive():
            self._loop.close()


def _one_line(exc: BaseException | None) -> str:
    if exc is None:
        return "(no error)"
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _one_line(exc.exceptions[0])
    text = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@register_system("mcp")
class McpSystem(System):
    """An MCP memory server (docs/memory-protocol.md, "MCP arms")."""

    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("command", (str, list, type(None)), None, "starts the server on stdio ({python}, {data_dir})"),
        Setting("url", (str, type(None)), None, "a streamable-HTTP MCP endpoint, e.g. http://127.0.0.1:9000/mcp"),
        Setting("ingest_tool", (str, type(None)), None, "the tool that stores a turn (found by name when absent)"),
        Setting("search_tool", (str, type(None)), None, "the tool that searches (found by name when absent)"),
        Setting("reset_tool", (str, type(None)), None, "the tool that empties a namespace (optional)"),
        Setting("text_arg", (str, type(None)), None, "the store tool's text argument"),
        Setting("query_arg", (str, type(None)), None, "the search tool's query argument"),
        Setting("namespace_arg", (str, type(None)), None, "the argument that keeps conversations apart"),
        Setting("k_arg", (str, type(None)), None, "the search tool's result-count argument"),
        Setting("timeout_s", (int, float), DEFAULT_TIMEOUT_S, "the longest one tool call may take"),
        Setting("start_timeout_s", (int, float), DEFAULT_TIMEOUT_S, "the longest the session may take to open"),
        Setting("canary", bool, True, "write the isolation canary and check every retrieval for it"),
        Setting("env", dict, {}, "environment variables for a stdio server ({data_dir}, {home}, {venvs}, {k}...)"),
        Setting("ingest_args", dict, {}, "fixed arguments of the store tool ({message_id}, {text}, {namespace}...)"),
        Setting("search_args", dict, {}, "fixed arguments of the search tool ({query}, {k}, {namespace}...)"),
        Setting("reset_args", dict, {}, "fixed arguments of the reset tool ({namespace}, {data_dir})"),
        Setting("max_refused_writes", (int, float), 0.1, "the share of writes the server may refuse (isError)"),
        Setting("hit_start", (str, type(None)), None, "regex: a line of a plain-text reply that starts a hit"),
        Setting(
            "meta_lines", (str, type(None)), None, "regex: lines of a hit that are metadata (kept from the answer)"
        ),
        Setting("no_hits", (str, type(None)), None, "regex: a plain-text reply that means nothing was found"),
        Setting("strip", (str, type(None)), None, "regex: parts of each hit removed (volatile: wall-clock times)"),
    )
    PREFIX_STABLE = False
    REPLAY_CHECKED = True

    def __init__(self, settings: Mapping[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)
        self.namespace = context.conversation
        self.timeout_s = float(settings["timeout_s"])
        self.label = self._label()
        self.reader = ReplyReader.from_settings(settings)
        # absolute: a server resolves a relative path against its own folder (server-memory: inside node_modules)
        self.data_dir = (context.run_dir / DATA_DIR_NAME).resolve()
        # message id -> its text, and the text stored for it, with whitespace collapsed as a hit's text is: a
        # multi-line turn (a LongMemEval answer's lists) comes back on one line
        self._written: dict[str, str] = {}
        self._rendered: dict[str, str] = {}
        self._acknowledged = 0
        self._writes = self._refused_writes = self._refused_resets = 0
        self._retrievals = self._empty_retrievals = self._volatile_hits = 0
        now = datetime.now(UTC)
        self._today = {(now + timedelta(days=d)).date().isoformat() for d in (-1, 0, 1)}
        self._stack = contextlib.ExitStack()
        try:
            self.connection = self._connect(context)
            self._stack.callback(self.connection.close)
            listed = self.connection.call(lambda s: s.list_tools(), self.timeout_s, "tools/list")
            self.tools = plan_tools(listed.tools, settings, self.label)
            announce(self.label, self.tools)
            # no reset tool: a conversation starts from an empty data dir (a fresh server), which is its reset
            self.resets_by_fresh_dir = self.tools.reset is None and not self.settings["url"]
            self._check_isolation()
            self.canary = Canary.for_conversation(context.conversation) if self._can_plant_canary() else None
            self._reset(self.namespace)
            if self.canary is not None:
                self._reset(self.canary.namespace)
                canary_line = f"[{CANARY_DATE}] {CANARY_SPEAKER}: {self.canary.text}"
                self._store(self.canary.namespace, None, canary_line, "isolation canary")
        except BaseException:
            self._stack.close()
            raise

    def _label(self) -> str:
        if self.settings["url"]:
            return f"system 'mcp' at {self.settings['url']}"
        words = command_words(self.settings["command"], "settings.command")
        return f"system 'mcp' ({' '.join(Path(w).name for w in words[:2])})"

    def _connect(self, context: SystemContext) -> McpConnection:
        try:
            # local import: the optional mcp extra, probed here to refuse in one line without it
            import mcp  # noqa: F401
        except ImportError:
            raise ConfigError(
                "system 'mcp': expected the mcp package (pip install 'engram-bench[mcp]'), found it not installed"
            ) from None
        start = float(self.settings["start_timeout_s"])
        if self.settings["url"]:
            # local import: mcp is the optional mcp extra, which the base install lacks
            from mcp.client.streamable_http import streamable_http_client

            url = self.settings["url"]
            return McpConnection(lambda: streamable_http_client(url), self.label, start)
        data_dir = self.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        home = private_home(data_dir)
        values = {  # ENV_PLACEHOLDERS
            "python": project_python(),
            "data_dir": str(data_dir),
            "dir": str(Path.cwd()),
            "venvs": str(venvs_dir().resolve()),
            "home": home["HOME"],
            "k": self._widest_k(context),
        }
        argv = expand(command_words(self.settings["command"], "settings.command"), values, "settings.command")
        env = {
            **inherited_environ(),
            **home,
            **self._stack.enter_context(endpoint_env(context)),
            "ENGRAM_MEMORY_DATA_DIR": str(data_dir),
            **env_table(self.settings["env"], values, "settings.env"),
        }
        self.log_path = context.run_dir / LOG_NAME
        log = self._stack.enter_context(self.log_path.open("a"))
        server = StdioServer(argv, env=env, cwd=data_dir, log=log, label=self.label)
        return McpConnection(server.streams, self.label, start, server)

    def _widest_k(self, context: SystemContext) -> str:
        """`{k}` in `env`: the widest k the run retrieves at (a server that takes its result count only at start,
        e.g. mcp-server-qdrant's QDRANT_SEARCH_LIMIT; the harness keeps each k's first hits)."""
        numbers = [k for k in context.ks if k is not None]
        if numbers and None not in context.ks:
            return str(max(numbers))
        words = command_words(self.settings["command"], "settings.command")
        mentions = [f"env.{name}" for name, value in self.settings["env"].items() if "{k}" in str(value)]
        mentions += ["command" for word in words if "{k}" in word]
        if mentions:
            found = "k = all" if None in context.ks else "no k"
            raise ConfigError(
                f"settings.{mentions[0]}: {{k}} is the run's widest k, a number of lines; found {found} in this run"
            )
        return ""

    def _check_isolation(self) -> None:
        if self.tools.ingest.namespace_arg and self.tools.search.namespace_arg:
            return
        if self.settings["url"]:
            raise SystemFailed(
                f"{self.label}: tools {self.tools.ingest.tool!r}/{self.tools.search.tool!r} take no namespace argument, "
                "so conversations would share one store: start the server with settings.command (one process per "
                "conversation) or name its namespace argument with settings.namespace_arg"
            )

    def _can_plant_canary(self) -> bool:
        # Without a namespace argument each conversation has its own process: there is no other namespace to leak.
        return bool(self.settings["canary"] and self.tools.ingest.namespace_arg and self.tools.search.namespace_arg)

    # -- tool calls --------------------------------------------------------------------------------------------

    def _arguments(
        self,
        call: ToolCall,
        namespace: str,
        text: str | None = None,
        k: int | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The call's arguments: the ones the harness fills by name, and the arm's fixed ones with placeholders."""
        arguments: dict[str, Any] = {}
        filled = {"namespace": namespace, "data_dir": str(self.data_dir), "k": k, **(values or {})}
        for name, template in call.fixed.items():
            if template == "{k}" and k is None:
                continue  # no count asked: the server's own default
            arguments[name] = fill_template(template, filled, f"settings (tool {call.tool!r}).{name}")
        if call.text_arg is not None and text is not None:
            arguments[call.text_arg] = text
        if call.namespace_arg is not None:
            arguments[call.namespace_arg] = namespace
        if call.k_arg is not None and k is not None:
            arguments[call.k_arg] = k
        return arguments

    def _tool(self, call: ToolCall, arguments: dict[str, Any], what: str) -> Any:
        result = self.connection.call(
            lambda s: s.call_tool(call.tool, arguments), self.timeout_s, f"tool {call.tool!r} {what}"
        )
        if getattr(result, "isError", False):
            raise ToolRefused(f"{self.label}: tool {call.tool!r} {what}: reported an error: {_said(result)}")
        return result

    def _store(self, namespace: str, message: SliceMessage | None, text: str, what: str) -> None:
        said = message.text if message is not None else text
        values = {
            "message_id": message.id if message is not None else self.canary.message_id if self.canary else "",
            "date": message.session_date if message is not None else CANARY_DATE,
            "speaker": message.speaker if message is not None else CANARY_SPEAKER,
            "text": text,
            "said": said,
        }
        self._tool(self.tools.ingest, self._arguments(self.tools.ingest, namespace, text, values=values), what)

    def _reset(self, namespace: str) -> None:
        """Empty a namespace. A reset the server refuses is counted, not fatal: a fresh data dir has nothing to
        delete, and some servers say so as an error ("no such directory"); the contract checks what a reset did."""
        if self.tools.reset is not None:
            try:
                self._tool(self.tools.reset, self._arguments(self.tools.reset, namespace), f"(reset {namespace})")
            except ToolRefused:
                self._refused_resets += 1

    # -- the System interface ----------------------------------------------------------------------------------

    def write(self, message: SliceMessage) -> WriteUsage:
        self._writes += 1
        try:
            self._store(self.namespace, message, rendered(message), f"for message {message.id}")
        except ToolRefused as refused:
            self._refused_writes += 1
            if self._refused_writes > self.settings["max_refused_writes"] * max(self._writes, MIN_WRITES):
                raise SystemFailed(
                    f"{refused} ({self._refused_writes} of {self._writes} writes refused, more than "
                    f"settings.max_refused_writes={self.settings['max_refused_writes']:g} of them)"
                ) from None
            return WriteUsage(calls=0)
        self._written[message.id] = collapsed(message.text)
        self._rendered[message.id] = collapsed(rendered(message))
        self._acknowledged += 1
        return WriteUsage(calls=0)

    def _search(self, question: str, k: int | None, what: str) -> list[Hit]:
        call = self.tools.search
        result = self._tool(call, self._arguments(call, self.namespace, question, k, {"query": question}), what)
        hits = self.reader.hits(result)
        if self.canary is not None and self.canary.leaked_in([h.text for h in hits] + [h.named_id for h in hits]):
            raise IsolationLeak(
                f"{self.label}: isolation canary leaked: tool {call.tool!r} {what} in namespace {self.namespace!r} "
                f"returned the marker written only under namespace {self.canary.namespace!r}"
            )
        return hits

    def before_final_questions(self) -> None:
        """The canary probe (see HttpSystem.before_final_questions)."""
        if self.canary is not None:
            self._search(self.canary.question, PROBE_K, "(isolation canary probe)")

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        call = self.tools.search
        what = f"for question {question.id}"
        hits = self._search(question.question, k, what)
        if k is not None and len(hits) > k:
            if call.k_arg is not None:
                raise SystemFailed(
                    f"{self.label}: tool {call.tool!r} {what}: expected at most {call.k_arg}={k} hits, found {len(hits)}"
                )
            hits = hits[:k]  # the tool takes no count: the harness applies k (recorded in describe())
        lines = tuple(hit.text for hit in hits)
        self._retrievals += 1
        self._empty_retrievals += not lines
        self._note_volatile(lines)
        return RetrievedLines(lines, tuple(self._sources(hit) for hit in hits))

    def _note_volatile(self, lines: tuple[str, ...]) -> None:
        """Count hits that carry today's clock or a random id, and say so once on the terminal: a replay of this
        run retrieves other lines, so its answers miss the cache (the result counts them in store.health)."""
        for line in lines:
            part = volatile_part(line, self._today)
            if part is None:
                continue
            self._volatile_hits += 1
            if self._volatile_hits == 1:
                print(
                    f"engram-bench: WARNING: {self.label}: a retrieved line carries {part!r}, which changes from run "
                    "to run: a replay will retrieve other lines and miss the cache; remove it with settings.strip",
                    file=sys.stderr,
                )

    def _sources(self, hit: Hit) -> tuple[str, ...]:
        if hit.named_id is not None and hit.named_id in self._written:
            return (hit.named_id,)
        return trace_sources(hit.text, self._rendered, self._written)

    def stats(self) -> dict[str, Any]:
        # MCP has no standard count of what a server holds: the turns it acknowledged storing. The health counts
        # say what went wrong without stopping the run (bench.run.health reads `retrievals`/`empty_retrievals`).
        counts = {
            "refused_writes": self._refused_writes,
            "refused_resets": self._refused_resets,
            "retrievals": self._retrievals,
            "empty_retrievals": self._empty_retrievals,
            "volatile_hits": self._volatile_hits,
        }
        return store_stats({"stored": self._acknowledged, "unit": "acknowledged write", "health": counts})

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "transport": "streamable-http" if self.settings["url"] else "stdio",
            "tools": self.tools.describe(),
            "k_applied_by": "server" if self.tools.search.k_arg else "harness (the search tool takes no count)",
            "isolation": "namespace argument + canary" if self.canary is not None else "one process per conversation",
            "stored_text": "[<session_date>] <speaker>: <text>",
            "sources": "the id a hit names (message_id metadata, entity name, note title), else the turns whose stored "
            "text (or own words, 16+ chars) the line contains",
        }

    def close(self) -> None:
        if getattr(self, "canary", None) is not None:
            with contextlib.suppress(SystemFailed):
                self._reset(self.canary.namespace)  # type: ignore[union-attr]
        self._stack.close()

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any], where: str = "settings") -> dict[str, Any]:
        resolved = super().validate_settings(settings, where)
        given = [key for key in ("url", "command") if resolved[key]]
        if len(given) != 1:
            raise ConfigError(
                f"{where}: expected exactly one of command or url for system 'mcp', found "
                f"{', '.join(given) if given else 'none'}"
            )
        if resolved["command"]:
            command_words(resolved["command"], f"{where}.command")
        for key in ("timeout_s", "start_timeout_s"):
            if resolved[key] <= 0:
                raise ConfigError(f"{where}.{key}: expected a number of seconds > 0, found {resolved[key]!r}")
        ReplyReader.from_settings(resolved, where)
        try:
            check_templates(resolved, where)
            env_table(resolved["env"], dict.fromkeys(ENV_PLACEHOLDERS, "x"), f"{where}.env")
        except SystemFailed as exc:
            raise ConfigError(str(exc)) from None
        return resolved


_ANNOUNCED: set[str] = set()


def announce(label: str, tools: ToolPlan) -> None:
    """The chosen tools on the first screen, once per server and choice (not once per conversation): a wrong
    choice shows before the run spends its time."""
    line = f"  {label}: {tools.summary()}"
    if line not in _ANNOUNCED:
        _ANNOUNCED.add(line)
        print(line, flush=True)


def _said(result: Any) -> str:
    lines = " ".join(getattr(c, "text", "") or "" for c in result.content).strip().splitlines()
    return next((line.strip()[:300] for line in lines if line.strip()), "(no message)")


def trace_sources(line: str, stored: Mapping[str, str], said: Mapping[str, str]) -> tuple[str, ...]:
    """The turns a returned line came from: those whose stored form it contains (date and speaker make that form
    unique), else those whose own words it contains when they are long enough not to match by chance ("Yes!" is
    in many lines)."""
    line = collapsed(line)
    whole = tuple(mid for mid, text in stored.items() if text in line)
    if whole:
        return whole
    return tuple(mid for mid, text in said.items() if len(text.strip()) >= MIN_QUOTED_CHARS and text.strip() in line)
