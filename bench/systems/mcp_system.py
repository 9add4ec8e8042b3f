"""`system = "mcp"`: any MCP memory server as an arm, through the `mcp` SDK, with no code.

The server is started from the arm's `command` (stdio; one process per conversation, its stderr kept in the run's
store folder) or reached at a streamable-HTTP `url`. Its store, search and (optional) reset tools are found from
their names and input schemas (`bench.systems.mcp_tools`); the arm may name them and their arguments instead.

Turns are stored as `[<date>] <speaker>: <text>`, one tool call each. MCP gives a result no message ids, so a
returned line's sources are the written turns whose text it contains (an item whose metadata carries `message_id`
names it directly). A server with a namespace argument keeps conversations apart, and the isolation canary checks
it does; one without must be started by `command`, so each conversation has a server of its own.

The SDK is asynchronous; the harness is not. One event loop in a thread holds the session open (the SDK's
context managers must be entered and left by the same task) and each call is sent to it with its time limit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bench.errors import ConfigError, IsolationLeak, SystemFailed
from bench.systems.base import RetrievedLines, Setting, System, SystemContext, WriteUsage, register_system
from bench.systems.http_system import DATA_DIR_NAME, PROBE_K, Canary, endpoint_env, store_stats
from bench.systems.mcp_tools import ToolCall, plan_tools
from bench.systems.process import LOG_NAME, command_words, expand, project_python

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion

DEFAULT_TIMEOUT_S = 120.0
CLOSE_WAIT_S = 10.0
MIN_QUOTED_CHARS = 16  # a turn's text shorter than this is not traced by containment alone
ITEM_TEXT_KEYS = ("text", "memory", "content", "fact", "note", "document", "observation", "value", "summary")
LIST_KEYS = ("results", "memories", "items", "data", "hits", "matches", "documents", "notes", "facts", "result")


def rendered(message: SliceMessage) -> str:
    return f"[{message.session_date}] {message.speaker}: {message.text}"


class McpConnection:
    """One MCP client session held open in a thread of its own; `call` runs one coroutine on it, time-limited."""

    def __init__(self, transport: Callable[[], Any], label: str, start_timeout_s: float) -> None:
        self.label = label
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
            self.close()
            raise SystemFailed(
                f"{label}: the MCP session did not open within start_timeout_s={start_timeout_s:g} s"
            ) from None
        except SystemFailed:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise SystemFailed(f"{label}: the MCP session did not open: {_one_line(exc)}") from None

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
            ended = f" ({self._ending()})" if self._main.done() else ""
            raise SystemFailed(f"{self.label}: {what}: failed: {_one_line(exc)}{ended}") from None

    def _ending(self) -> str:
        exc = self._main.exception() if self._main.done() and not self._main.cancelled() else None
        return _one_line(exc) if exc is not None else "the server closed the session"

    def close(self) -> None:
        """Leave the session (which stops a stdio server) and the loop. Idempotent."""
        if self._loop.is_closed():
            return
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        with contextlib.suppress(BaseException):
            self._main.result(timeout=CLOSE_WAIT_S)
        if not self._main.done():
            self._main.cancel()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CLOSE_WAIT_S)
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
    )
    PREFIX_STABLE = False

    def __init__(self, settings: Mapping[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)
        self.namespace = context.conversation
        self.timeout_s = float(settings["timeout_s"])
        self.label = self._label()
        self._written: dict[str, str] = {}  # message id -> its text
        self._rendered: dict[str, str] = {}  # message id -> the text stored for it
        self._acknowledged = 0
        self._stack = contextlib.ExitStack()
        try:
            self.connection = self._connect(context)
            self._stack.callback(self.connection.close)
            listed = self.connection.call(lambda s: s.list_tools(), self.timeout_s, "tools/list")
            self.tools = plan_tools(listed.tools, settings, self.label)
            self._check_isolation()
            self.canary = Canary.for_conversation(context.conversation) if self._can_plant_canary() else None
            self._reset(self.namespace)
            if self.canary is not None:
                self._reset(self.canary.namespace)
                self._store(self.canary.namespace, f"[1 January, 2000] Canary: {self.canary.text}", "isolation canary")
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
        # local import: mcp is the optional mcp extra, which the base install lacks
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        data_dir = context.run_dir / DATA_DIR_NAME
        data_dir.mkdir(parents=True, exist_ok=True)
        values = {"python": project_python(), "data_dir": str(data_dir), "dir": str(Path.cwd())}
        argv = expand(command_words(self.settings["command"], "settings.command"), values, "settings.command")
        env = {
            **os.environ,
            **self._stack.enter_context(endpoint_env(context)),
            "ENGRAM_MEMORY_DATA_DIR": str(data_dir),
        }
        self.log_path = context.run_dir / LOG_NAME
        log = self._stack.enter_context(self.log_path.open("a"))
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(data_dir))
        return McpConnection(lambda: stdio_client(params, errlog=log), self.label, start)

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

    def _arguments(self, call: ToolCall, namespace: str, text: str | None = None, k: int | None = None) -> dict:
        arguments: dict[str, Any] = {}
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
            said = " ".join(getattr(c, "text", "") for c in result.content).strip().splitlines() or ["(no message)"]
            raise SystemFailed(f"{self.label}: tool {call.tool!r} {what}: reported an error: {said[0][:300]}")
        return result

    def _store(self, namespace: str, text: str, what: str) -> None:
        self._tool(self.tools.ingest, self._arguments(self.tools.ingest, namespace, text), what)

    def _reset(self, namespace: str) -> None:
        if self.tools.reset is not None:
            self._tool(self.tools.reset, self._arguments(self.tools.reset, namespace), f"(reset {namespace})")

    # -- the System interface ----------------------------------------------------------------------------------

    def write(self, message: SliceMessage) -> WriteUsage:
        self._store(self.namespace, rendered(message), f"for message {message.id}")
        self._written[message.id] = message.text
        self._rendered[message.id] = rendered(message)
        self._acknowledged += 1
        return WriteUsage(calls=0)

    def _search(self, question: str, k: int | None, what: str) -> list[Any]:
        call = self.tools.search
        items = result_items(self._tool(call, self._arguments(call, self.namespace, question, k), what))
        if self.canary is not None and self.canary.leaked_in(items):
            raise IsolationLeak(
                f"{self.label}: isolation canary leaked: tool {call.tool!r} {what} in namespace {self.namespace!r} "
                f"returned the marker written only under namespace {self.canary.namespace!r}"
            )
        return items

    def before_final_questions(self) -> None:
        """The canary probe (see HttpSystem.before_final_questions)."""
        if self.canary is not None:
            self._search(self.canary.question, PROBE_K, "(isolation canary probe)")

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        call = self.tools.search
        what = f"for question {question.id}"
        items = self._search(question.question, k, what)
        if k is not None and len(items) > k:
            if call.k_arg is not None:
                raise SystemFailed(
                    f"{self.label}: tool {call.tool!r} {what}: expected at most {call.k_arg}={k} results, found {len(items)}"
                )
            items = items[:k]  # the tool takes no count: the harness applies k (recorded in describe())
        lines = [item_text(item) for item in items]
        sources = [self._sources(item, line) for item, line in zip(items, lines, strict=True)]
        return RetrievedLines(tuple(lines), tuple(sources))

    def _sources(self, item: Any, line: str) -> tuple[str, ...]:
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        named = meta.get("message_id") if isinstance(meta, Mapping) else None
        if isinstance(named, str) and named in self._written:
            return (named,)
        return trace_sources(line, self._rendered, self._written)

    def stats(self) -> dict[str, Any]:
        # MCP has no standard count of what a server holds: the turns it acknowledged storing.
        return {**store_stats({"stored": self._acknowledged, "unit": "acknowledged write"})}

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "transport": "streamable-http" if self.settings["url"] else "stdio",
            "tools": self.tools.describe(),
            "k_applied_by": "server" if self.tools.search.k_arg else "harness (the search tool takes no count)",
            "isolation": "namespace argument + canary" if self.canary is not None else "one process per conversation",
            "stored_text": "[<session_date>] <speaker>: <text>",
            "sources": "message_id metadata, else the turns whose stored text (or own words, 16+ chars) the line contains",
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
        return resolved


def result_items(result: Any) -> list[Any]:
    """A tool result's items: structuredContent, else JSON text, else one item per non-empty text line."""
    data = getattr(result, "structuredContent", None)
    if data is None:
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        joined = "\n".join(texts)
        try:
            data = json.loads(joined) if joined.strip() else []
        except ValueError:
            return [line.strip() for line in joined.splitlines() if line.strip()]
    return _as_list(data)


def _as_list(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return list(data[key])
        if len(data) == 1 and isinstance(next(iter(data.values())), str):
            return _as_list(next(iter(data.values())))  # FastMCP wraps a str return as {"result": text}
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
        return [data] if data else []
    if isinstance(data, str):
        return [line.strip() for line in data.splitlines() if line.strip()]
    return [] if data is None else [data]


def item_text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for key in ITEM_TEXT_KEYS:
            if isinstance(item.get(key), str):
                return item[key]
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


def trace_sources(line: str, stored: Mapping[str, str], said: Mapping[str, str]) -> tuple[str, ...]:
    """The turns a returned line came from: those whose stored form it contains (date and speaker make that form
    unique), else those whose own words it contains when they are long enough not to match by chance ("Yes!" is
    in many lines)."""
    whole = tuple(mid for mid, text in stored.items() if text in line)
    if whole:
        return whole
    return tuple(mid for mid, text in said.items() if len(text.strip()) >= MIN_QUOTED_CHARS and text.strip() in line)
