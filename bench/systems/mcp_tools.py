"""Which tools of an MCP server store and search memories, and how to call them: found from the tools' names and
input schemas, so any MCP memory server runs as an arm with no code (`system = "mcp"`).

The rules, in the order they decide (each can be overridden by the arm's settings, named after the field):
- `ingest_tool`: a tool whose name has a storing verb (add, store, save, remember, ...) and no searching one, with a
  text argument; `search_tool`: a name with a searching verb (search, query, retrieve, recall, find, ...) and a query
  argument; `reset_tool` (optional): a name saying reset/clear/wipe/purge, or delete/forget together with all.
- Among several candidates, a name that also says memory/memories/note/fact wins, then the fewest arguments, then
  the alphabetically first, so the choice never depends on the order a server lists its tools in.
- Arguments are matched by name from short lists of usual names (`text_arg`, `query_arg`, `namespace_arg`,
  `k_arg`); a required argument outside them makes the tool unusable unless the arm names it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.errors import SystemFailed

STORE_VERBS = ("add", "store", "save", "remember", "write", "insert", "create", "ingest", "memorize", "record", "put")
SEARCH_VERBS = ("search", "query", "retrieve", "recall", "find", "lookup", "fetch", "read")
RESET_VERBS = ("reset", "clear", "wipe", "purge")
RESET_PAIRS = (
    ("delete", "all"),
    ("forget", "all"),
    ("remove", "all"),
    ("delete", "everything"),
    ("forget", "everything"),
)
MEMORY_WORDS = ("memory", "memories", "note", "notes", "fact", "facts", "observation", "observations")
TEXT_ARGS = ("text", "content", "memory", "message", "note", "observation", "fact", "data", "body", "input", "value")
QUERY_ARGS = ("query", "question", "q", "search", "search_query", "text", "prompt", "input")
NAMESPACE_ARGS = (
    "namespace",
    "user_id",
    "userid",
    "user",
    "session_id",
    "group_id",
    "agent_id",
    "conversation_id",
    "thread_id",
    "collection",
    "scope",
    "bucket",
    "tenant",
)
K_ARGS = ("k", "limit", "top_k", "topk", "max_results", "num_results", "n", "count", "top_n", "size")
_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class ToolCall:
    """One tool and the names of the arguments the harness fills (None: the tool has no such argument)."""

    tool: str
    text_arg: str | None = None
    namespace_arg: str | None = None
    k_arg: str | None = None


@dataclass(frozen=True)
class ToolPlan:
    ingest: ToolCall
    search: ToolCall
    reset: ToolCall | None

    def describe(self) -> dict[str, Any]:
        def one(call: ToolCall | None) -> dict[str, Any] | None:
            return None if call is None else {k: v for k, v in vars(call).items() if v is not None}

        return {"ingest": one(self.ingest), "search": one(self.search), "reset": one(self.reset)}


def words(name: str) -> list[str]:
    return [w for w in _SPLIT.split(_CAMEL.sub("_", name).lower()) if w]


def plan_tools(tools: Sequence[Any], settings: Mapping[str, Any], label: str) -> ToolPlan:
    """The store, search and reset calls for this server, or SystemFailed naming what is missing."""
    schemas = {tool.name: dict(tool.inputSchema or {}) for tool in tools}
    names = sorted(schemas)
    ingest = _choose(
        "ingest_tool",
        settings,
        schemas,
        label,
        _is_store,
        lambda schema: _args(schema, settings, text=TEXT_ARGS),
        "store (add/store/save/remember...) tool taking a text",
    )
    search = _choose(
        "search_tool",
        settings,
        schemas,
        label,
        _is_search,
        lambda schema: _args(schema, settings, text=QUERY_ARGS, text_setting="query_arg", k=True),
        "search (search/query/retrieve/recall...) tool taking a query",
    )
    reset = None
    reset_names = [settings["reset_tool"]] if settings.get("reset_tool") else [n for n in names if _is_reset(n)]
    for name in sorted(
        reset_names, key=lambda n: (-_memory_score(n), len(schemas.get(n, {}).get("properties", {})), n)
    ):
        if name not in schemas:
            raise SystemFailed(
                f"{label}: settings.reset_tool: expected one of the server's tools {names}, found {name!r}"
            )
        found = _args(schemas[name], settings, text=None)
        if found is not None:
            reset = ToolCall(name, None, found[1], None)
            break
    return ToolPlan(ingest=ingest, search=search, reset=reset)


def _choose(
    setting: str,
    settings: Mapping[str, Any],
    schemas: Mapping[str, dict[str, Any]],
    label: str,
    matches: Any,
    arguments: Any,
    wanted: str,
) -> ToolCall:
    names = sorted(schemas)
    chosen = settings.get(setting)
    if chosen:
        if chosen not in schemas:
            raise SystemFailed(
                f"{label}: settings.{setting}: expected one of the server's tools {names}, found {chosen!r}"
            )
        candidates = [chosen]
    else:
        candidates = sorted(
            (n for n in names if matches(n)),
            key=lambda n: (-_memory_score(n), len(schemas[n].get("properties", {})), n),
        )
    for name in candidates:
        found = arguments(schemas[name])
        if found is not None:
            text_arg, namespace_arg, k_arg = found
            return ToolCall(name, text_arg, namespace_arg, k_arg)
    tried = f"; tried {candidates} but their arguments did not fit" if candidates else ""
    raise SystemFailed(
        f"{label}: the MCP server has no usable {wanted}: found tools {names}{tried}; name one with settings.{setting} "
        "and its argument names"
    )


def _is_store(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in STORE_VERBS) and not any(v in parts for v in SEARCH_VERBS) and not _is_reset(name)


def _is_search(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in SEARCH_VERBS) and not any(v in parts for v in STORE_VERBS)


def _is_reset(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in RESET_VERBS) or any(a in parts and b in parts for a, b in RESET_PAIRS)


def _memory_score(name: str) -> int:
    return int(any(w in MEMORY_WORDS for w in words(name)))


def _args(
    schema: Mapping[str, Any],
    settings: Mapping[str, Any],
    *,
    text: Sequence[str] | None,
    text_setting: str = "text_arg",
    k: bool = False,
) -> tuple[str | None, str | None, str | None] | None:
    """(text argument, namespace argument, k argument) of a tool, or None when it needs what the harness lacks."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    text_arg = None
    if text is not None:
        text_arg = _pick(settings.get(text_setting), text, properties, want_string=True)
        if text_arg is None:
            return None
    namespace_arg = _pick(settings.get("namespace_arg"), NAMESPACE_ARGS, properties, want_string=True, exclude=text_arg)
    k_arg = _pick(settings.get("k_arg"), K_ARGS, properties, want_string=False) if k else None
    filled = {a for a in (text_arg, namespace_arg, k_arg) if a is not None}
    if required - filled:
        return None
    return text_arg, namespace_arg, k_arg


def _pick(
    given: str | None,
    usual: Sequence[str],
    properties: Mapping[str, Any],
    *,
    want_string: bool,
    exclude: str | None = None,
) -> str | None:
    if given:
        return given if given in properties else None
    lowered = {name.lower(): name for name in properties if name != exclude}
    for candidate in usual:
        name = lowered.get(candidate)
        if name is not None and _type_fits(properties[name], want_string):
            return name
    return None


def _type_fits(spec: Any, want_string: bool) -> bool:
    kinds = spec.get("type") if isinstance(spec, Mapping) else None
    if kinds is None:
        options = spec.get("anyOf", []) if isinstance(spec, Mapping) else []
        kinds = [o.get("type") for o in options if isinstance(o, Mapping)]
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if not kinds:
        return True  # an untyped argument takes anything
    return ("string" in kinds) if want_string else bool({"integer", "number"} & set(kinds))
