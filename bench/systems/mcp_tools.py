"""Which tools of an MCP server store and search memories, and how to call them: found from the tools' names,
descriptions and input schemas, so any MCP memory server runs as an arm with no code (`system = "mcp"`).

The rules (each can be overridden by the arm's settings, named after the field):
- A tool is a candidate for storing when its name has a storing verb (add, store, save, remember, write; weaker:
  insert, create, ingest, record, put) and no searching one; for searching when its name has a searching verb
  (search, retrieve, recall, query; weaker: find, lookup, fetch, read, open) and no storing one; for reset when its
  name says reset/clear/wipe/purge, or delete/forget together with all.
- A candidate must fit: its text (or query) argument takes a string, and every required argument is one the harness
  fills (text, query, namespace, count) or the arm fixes (`ingest_args`, `search_args`, `reset_args`).
- Among fitting candidates the highest score wins: a strong verb, a name or description about memory, a namespace
  argument (conversations kept apart), a count argument (search); a name word that is none of these (the
  `mistake` of `mistake_note_search`) counts against. Ties go to the alphabetically first name, so the choice
  never depends on the order a server lists its tools, and never on which tool has the fewest arguments.
- Arguments are matched by name from short lists of usual names; a required string argument whose name says
  user/agent/namespace/collection/project/session... is filled with the run's namespace.
- A setting that names a tool or an argument the server does not have, or a text argument that does not take a
  string, is refused in one line when the arm loads, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.errors import SystemFailed

STRONG_STORE = ("add", "store", "save", "remember", "write")
WEAK_STORE = ("insert", "create", "ingest", "memorize", "record", "put", "upsert", "append")
STRONG_SEARCH = ("search", "retrieve", "recall", "query")
WEAK_SEARCH = ("find", "lookup", "fetch", "read", "open")
STORE_VERBS = STRONG_STORE + WEAK_STORE
SEARCH_VERBS = STRONG_SEARCH + WEAK_SEARCH
RESET_VERBS = ("reset", "clear", "wipe", "purge")
RESET_PAIRS = (
    ("delete", "all"),
    ("forget", "all"),
    ("remove", "all"),
    ("delete", "everything"),
    ("forget", "everything"),
)
MEMORY_WORDS = ("memory", "memories", "mem", "note", "notes", "fact", "facts", "observation", "observations")
NEUTRAL_WORDS = ("all", "by", "the", "a", "to", "in", "from", "for", "of", "tool", "tools", "semantic", "everything")
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
#: words of a required argument's name that make it a namespace: filled with the run's namespace
NAMESPACE_WORDS = (
    "user",
    "agent",
    "namespace",
    "collection",
    "project",
    "session",
    "tenant",
    "conversation",
    "thread",
    "group",
    "bucket",
    "scope",
    "workspace",
)
K_ARGS = ("k", "limit", "top_k", "topk", "max_results", "num_results", "n", "count", "top_n", "size", "n_results")
_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
ROLE_SETTINGS = {
    "ingest": ("ingest_tool", "text_arg", "ingest_args"),
    "search": ("search_tool", "query_arg", "search_args"),
    "reset": ("reset_tool", None, "reset_args"),
}


@dataclass(frozen=True)
class ToolCall:
    """One tool, the names of the arguments the harness fills (None: the tool has no such argument) and the
    arguments the arm fixes (templates with placeholders, filled per call)."""

    tool: str
    text_arg: str | None = None
    namespace_arg: str | None = None
    k_arg: str | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    score: float = 0.0

    def describe(self) -> dict[str, Any]:
        named = {"tool": self.tool, "text_arg": self.text_arg, "namespace_arg": self.namespace_arg, "k_arg": self.k_arg}
        out: dict[str, Any] = {k: v for k, v in named.items() if v is not None}
        if self.fixed:
            out["fixed_args"] = dict(self.fixed)
        return out

    def signature(self) -> str:
        """`name(arg, arg...)` for the first screen."""
        args = [a for a in (self.text_arg, self.namespace_arg, self.k_arg) if a] + list(self.fixed)
        return f"{self.tool}({', '.join(args)})"


@dataclass(frozen=True)
class ToolPlan:
    ingest: ToolCall
    search: ToolCall
    reset: ToolCall | None

    def describe(self) -> dict[str, Any]:
        return {
            "ingest": self.ingest.describe(),
            "search": self.search.describe(),
            "reset": None if self.reset is None else self.reset.describe(),
        }

    def summary(self) -> str:
        """One line for the first screen: the tools a run will call."""
        reset = self.reset.signature() if self.reset is not None else "none (each conversation gets a fresh data dir)"
        return f"store {self.ingest.signature()} | search {self.search.signature()} | reset {reset}"


def words(name: str) -> list[str]:
    return [w for w in _SPLIT.split(_CAMEL.sub("_", name).lower()) if w]


def plan_tools(tools: Sequence[Any], settings: Mapping[str, Any], label: str) -> ToolPlan:
    """The store, search and reset calls for this server, or SystemFailed naming what is missing."""
    listed = {tool.name: tool for tool in tools}
    ingest = _choose("ingest", listed, settings, label, _is_store, TEXT_ARGS)
    search = _choose("search", listed, settings, label, _is_search, QUERY_ARGS)
    reset = _choose("reset", listed, settings, label, _is_reset, None)
    assert ingest is not None and search is not None  # _choose raises for a required role it cannot fill
    return ToolPlan(ingest=ingest, search=search, reset=reset)


class _Unfit(Exception):
    """Why a tool cannot serve a role (one phrase)."""


def _choose(
    role: str,
    listed: Mapping[str, Any],
    settings: Mapping[str, Any],
    label: str,
    matches: Any,
    text_names: Sequence[str] | None,
) -> ToolCall | None:
    tool_setting, _, args_setting = ROLE_SETTINGS[role]
    names = sorted(listed)
    chosen = settings.get(tool_setting)
    if chosen:
        if chosen not in listed:
            raise SystemFailed(
                f"{label}: settings.{tool_setting}: expected one of the server's tools {names}, found {chosen!r}"
            )
        try:
            return _fit(role, listed[chosen], settings, text_names)
        except _Unfit as reason:
            raise SystemFailed(f"{label}: settings.{tool_setting} = {chosen!r}: {reason}") from None
    fitting: list[ToolCall] = []
    unfit: dict[str, str] = {}
    for name in names:
        if matches(name):
            try:
                fitting.append(_fit(role, listed[name], settings, text_names))
            except _Unfit as reason:
                unfit[name] = str(reason)
    if fitting:
        return sorted(fitting, key=lambda c: (-c.score, c.tool))[0]
    if role == "reset":
        return None  # optional: without one each conversation starts from a fresh data dir
    wanted = {
        "ingest": "store (add/store/save/remember/write...) tool taking a text",
        "search": "search (search/retrieve/recall/query...) tool taking a query",
    }[role]
    why = "; ".join(f"{name}: {reason}" for name, reason in unfit.items())
    if unfit:  # the fix is the setting a reason names, not another tool: say that first
        tried = "it" if len(unfit) == 1 else "one of them"
        hint = f"; to use {tried}, add the setting its reason names, or name another tool with settings.{tool_setting}"
    else:
        hint = (
            f"; name one with settings.{tool_setting} and fix its other required arguments with settings.{args_setting}"
        )
    raise SystemFailed(
        f"{label}: the MCP server has no usable {wanted}: found tools {names}"
        + (f"; tried {list(unfit)} but their arguments did not fit ({why})" if unfit else "")
        + hint
    )


def _fit(role: str, tool: Any, settings: Mapping[str, Any], text_names: Sequence[str] | None) -> ToolCall:
    """How to call `tool` in `role`; _Unfit says why it cannot be called so. An argument a setting names must be
    the tool's and of a type the harness can send: never dropped quietly."""
    _, text_setting, args_setting = ROLE_SETTINGS[role]
    schema: Mapping[str, Any] = dict(getattr(tool, "inputSchema", None) or {})
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fixed = dict(settings.get(args_setting) or {})
    for key in fixed:
        if key not in properties:
            raise _Unfit(f"settings.{args_setting}.{key}: {_expected(properties, key)}")
    template_has_text = _mentions(fixed, "{text}" if role == "ingest" else "{query}")
    text_arg = None
    if text_names is not None and not template_has_text:
        assert text_setting is not None
        text_arg = _named(settings, text_setting, properties, "string") or _usual(
            text_names, properties, "string", exclude=set(fixed)
        )
        if text_arg is None:
            raise _Unfit(
                f"no string argument for the {'text' if role == 'ingest' else 'query'} (settings.{text_setting})"
            )
    taken = {a for a in (text_arg, *fixed) if a}
    namespace_arg = _named(settings, "namespace_arg", properties, "string", optional=role == "reset")
    if namespace_arg is None and not settings.get("namespace_arg"):
        namespace_arg = _usual(NAMESPACE_ARGS, properties, "string", exclude=taken) or _namespace_like(
            required - taken, properties
        )
    k_arg = None
    if role == "search":
        k_arg = _named(settings, "k_arg", properties, "integer") or _usual(
            K_ARGS, properties, "integer", exclude=taken | {namespace_arg}
        )
    filled = taken | {a for a in (namespace_arg, k_arg) if a}
    missing = sorted(required - filled)
    if missing:
        raise _Unfit(
            f"required arguments {missing} are not filled (name them, or fix them with settings.{args_setting})"
        )
    score = _score(role, tool, namespace_arg is not None, k_arg is not None)
    return ToolCall(tool.name, text_arg, namespace_arg, k_arg, fixed, score)


def _named(
    settings: Mapping[str, Any], setting: str, properties: Mapping[str, Any], want: str, optional: bool = False
) -> str | None:
    """The argument an arm's setting names, checked: present in the tool, and of a type the harness can send.
    `optional`: a tool without it is still called, without it (a reset tool that empties everything)."""
    given = settings.get(setting)
    if not given:
        return None
    if given not in properties:
        if optional:
            return None
        raise _Unfit(f"settings.{setting}: {_expected(properties, given)}")
    if not _type_fits(properties[given], want):
        raise _Unfit(
            f"settings.{setting}: expected an argument that takes a {want}, found {given!r} of type "
            f"{_type_name(properties[given])}"
        )
    return str(given)


def _expected(properties: Mapping[str, Any], given: str) -> str:
    return f"expected one of the tool's arguments {sorted(properties)}, found {given!r}"


def _usual(usual: Sequence[str], properties: Mapping[str, Any], want: str, exclude: set[Any]) -> str | None:
    lowered = {name.lower(): name for name in properties if name not in exclude}
    for candidate in usual:
        name = lowered.get(candidate)
        if name is not None and _type_fits(properties[name], want):
            return name
    return None


def _namespace_like(required: set[str], properties: Mapping[str, Any]) -> str | None:
    """A required string argument whose name says whose memories they are (`project`, `agent_name`...)."""
    for name in sorted(required):
        if any(w in NAMESPACE_WORDS for w in words(name)) and _type_fits(properties[name], "string"):
            return name
    return None


def _mentions(value: Any, placeholder: str) -> bool:
    if isinstance(value, str):
        return placeholder in value
    if isinstance(value, Mapping):
        return any(_mentions(v, placeholder) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_mentions(v, placeholder) for v in value)
    return False


def _score(role: str, tool: Any, has_namespace: bool, has_k: bool) -> float:
    parts = words(tool.name)
    strong, weak = {
        "ingest": (STRONG_STORE, WEAK_STORE),
        "search": (STRONG_SEARCH, WEAK_SEARCH),
        "reset": (RESET_VERBS, ("delete", "forget", "remove")),
    }[role]
    verbs = set(strong) | set(weak)
    score = 3.0 if any(p in strong for p in parts) else 1.0
    score += 2.0 * any(p in MEMORY_WORDS for p in parts)
    stray = [p for p in parts if p not in verbs and p not in MEMORY_WORDS and p not in NEUTRAL_WORDS]
    score -= 1.5 * len(stray)  # `mistake_note_search` is about mistakes, not memories in general
    description = set(words(str(getattr(tool, "description", "") or "")))
    score += 0.5 * bool(description & {"memory", "memories", "remember", "stored", "store"})
    score += 1.0 * has_namespace + 0.5 * has_k
    return score


def _is_store(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in STORE_VERBS) and not any(v in parts for v in SEARCH_VERBS) and not _is_reset(name)


def _is_search(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in SEARCH_VERBS) and not any(v in parts for v in STORE_VERBS)


def _is_reset(name: str) -> bool:
    parts = words(name)
    return any(v in parts for v in RESET_VERBS) or any(a in parts and b in parts for a, b in RESET_PAIRS)


def _kinds(spec: Any) -> list[str]:
    kinds = spec.get("type") if isinstance(spec, Mapping) else None
    if kinds is None:
        options = (spec.get("anyOf") or spec.get("oneOf") or []) if isinstance(spec, Mapping) else []
        kinds = [o.get("type") for o in options if isinstance(o, Mapping)]
    return [kinds] if isinstance(kinds, str) else [k for k in (kinds or []) if isinstance(k, str)]


def _type_fits(spec: Any, want: str) -> bool:
    kinds = _kinds(spec)
    if not kinds:
        return True  # an untyped argument takes anything
    return ("string" in kinds) if want == "string" else bool({"integer", "number"} & set(kinds))


def _type_name(spec: Any) -> str:
    return "/".join(_kinds(spec)) or "any"


#: the placeholders each role's fixed arguments may use
PLACEHOLDERS = {
    "ingest": ("namespace", "data_dir", "message_id", "date", "speaker", "text", "said"),
    "search": ("namespace", "data_dir", "query", "k"),
    "reset": ("namespace", "data_dir"),
}
_WHOLE = re.compile(r"^\{([a-z_]+)\}$")


def fill_template(value: Any, values: Mapping[str, Any], where: str) -> Any:
    """A fixed argument with its placeholders filled, through lists and tables (a JSON template). A string that is
    one placeholder alone takes the value as it is (`"{k}"` sends the number); `{{` writes a brace."""
    if isinstance(value, str):
        whole = _WHOLE.match(value)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        try:
            return value.format_map({k: "" if v is None else v for k, v in values.items()})
        except (KeyError, ValueError, IndexError) as exc:
            raise SystemFailed(
                f"{where}: expected placeholders among {sorted('{' + k + '}' for k in values)}, found {value!r} ({exc})"
            ) from None
    if isinstance(value, Mapping):
        return {k: fill_template(v, values, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [fill_template(v, values, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def check_templates(settings: Mapping[str, Any], where: str) -> None:
    """Every fixed argument's placeholders known, before anything starts (filled with stand-in values)."""
    for role, names in PLACEHOLDERS.items():
        key = ROLE_SETTINGS[role][2]
        fill_template(dict(settings.get(key) or {}), {n: "x" for n in names}, f"{where}.{key}")
