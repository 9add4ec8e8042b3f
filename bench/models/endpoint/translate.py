"""Translations that make a weaker OpenAI-compatible server look like OpenAI to a foreign memory system.

The endpoint sits between a system and the stack's server, so it can rewrite what the server cannot take and repair
what it sends back. Which rewrites apply is declared per provider in the stack file (capability flags, never sniffed
from replies): `json_schema = false`, `tools = false`, `max_array_items = N`, `max_string_length = N`,
`repair_json = true`, `default_max_tokens = N`. Every rewrite
applied to a call is named in the reply the system gets and in the cache entry (`x_engram_bench.translations`), and
the endpoint counts them for the result, so a number produced through a translation is never mistaken for one
produced without it.

The rewrites, each measured on llama-cpp-python's server with SmolLM2 (stacks/local.toml):
- `json_schema_as_json_object`: it answers `response_format` `json_schema` with HTTP 500, and accepts `json_object`
  with a `schema` (grammar-constrained), so the schema is moved there.
- `arrays_bounded`, `strings_bounded`: under a grammar, an array without `maxItems` (and SmolLM2's strings, "Mike,
  Mike, Mike, ...") repeat until `max_tokens` and come back cut off; every such array (string) in a schema sent
  upstream gets `maxItems` (`maxLength`).
- `max_tokens_defaulted`: a request without `max_tokens` (A-MEM sends none) may generate to the end of the server's
  context under a grammar over nested arrays; it gets the stack's `default_max_tokens`.
- `json_control_chars_repaired`: raw newlines and tabs inside JSON strings make `json.loads` fail; they are escaped.
- `tools_emulated:<choice>`: with its default chat format, tools are ignored unless `tool_choice` names one
  function; the offered tools become a schema the reply is constrained to, and the reply is turned back into
  `tool_calls`. `tool_history_as_text`: earlier tool calls and tool results in the conversation are written out as
  text for a server that has no tool roles.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The field of a reply (and so of its cache entry) that names the translations applied to the call.
RECORD_FIELD = "x_engram_bench"
TOOLS_SCHEMA_NAME = "tool_call"


@dataclass(frozen=True)
class Capabilities:
    """What the upstream server can take, from the stack's provider settings (defaults: OpenAI's own)."""

    json_schema: bool = True
    tools: bool = True
    max_array_items: int | None = None
    max_string_length: int | None = None
    repair_json: bool = False
    default_max_tokens: int | None = None

    @classmethod
    def of(cls, settings: Any) -> Capabilities:
        """From a `bench.models.stacks.ProviderSettings` (None fields: OpenAI's behaviour)."""
        return cls(
            json_schema=settings.json_schema if settings.json_schema is not None else True,
            tools=settings.tools if settings.tools is not None else True,
            max_array_items=settings.max_array_items,
            max_string_length=settings.max_string_length,
            repair_json=bool(settings.repair_json),
            default_max_tokens=settings.default_max_tokens,
        )


@dataclass(frozen=True)
class ToolPlan:
    """How an emulated tool call is read back from the reply: `named` (the reply is that function's arguments) or
    `choice` (the reply is `{"tool_calls": [{"name", "arguments"}]}`, or `{"content": text}` when `auto`)."""

    mode: str  # "named" | "choice"
    names: tuple[str, ...]
    function: str | None = None


@dataclass
class Plan:
    """A request as it goes upstream, and what to do with the reply."""

    body: dict[str, Any]
    applied: list[str] = field(default_factory=list)
    wants_json: bool = False
    tools: ToolPlan | None = None


# -------------------------------------------------------------------------------------------------- the request


def translate_request(body: Mapping[str, Any], caps: Capabilities) -> Plan:
    """The body to send upstream for `body` (already carrying the upstream model name), and the rewrites made."""
    plan = Plan(body=copy.deepcopy(dict(body)))
    if caps.default_max_tokens is not None and not any(
        plan.body.get(name) for name in ("max_tokens", "max_completion_tokens")
    ):
        plan.body["max_tokens"] = caps.default_max_tokens
        plan.applied.append("max_tokens_defaulted")
    if plan.body.get("tools") and not caps.tools:
        _emulate_tools(plan, caps)
    elif not caps.tools and _has_tool_history(plan.body.get("messages")):
        plan.body["messages"] = _tool_history_as_text(plan.body["messages"])
        plan.applied.append("tool_history_as_text")
    response_format = plan.body.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        plan.wants_json = kind in ("json_object", "json_schema")
        if kind == "json_schema" and not caps.json_schema:
            spec = response_format.get("json_schema") or {}
            schema = spec.get("schema") if isinstance(spec, dict) else None
            plan.body["response_format"] = {"type": "json_object", **({"schema": schema} if schema else {})}
            plan.applied.append("json_schema_as_json_object")
        schema = _schema_of(plan.body["response_format"])
        for kind, bound, name in (
            ("array", caps.max_array_items, "arrays_bounded"),
            ("string", caps.max_string_length, "strings_bounded"),
        ):
            if bound is not None and schema is not None and _bound(schema, kind, bound):
                plan.applied.append(name)
    return plan


def _schema_of(response_format: dict[str, Any]) -> Any:
    spec = response_format.get("json_schema")
    return spec.get("schema") if isinstance(spec, dict) else response_format.get("schema")


# JSON Schema's bound keywords per type: (minimum, maximum)
_BOUNDS = {"array": ("minItems", "maxItems"), "string": ("minLength", "maxLength")}


def _bound(node: Any, kind: str, bound: int) -> bool:
    """Give every `kind` node of a schema without a maximum the maximum `bound` (in place); True when one was added.
    An enum or const string needs none (it cannot run on)."""
    low, high = _BOUNDS[kind]
    changed = False
    if isinstance(node, dict):
        declared = node.get("type")
        is_kind = declared == kind or (isinstance(declared, list) and kind in declared)
        if is_kind and high not in node and "enum" not in node and "const" not in node:
            minimum = node.get(low)
            node[high] = max(bound, minimum) if isinstance(minimum, int) else bound
            changed = True
        for value in node.values():
            changed = _bound(value, kind, bound) or changed
    elif isinstance(node, list):
        for value in node:
            changed = _bound(value, kind, bound) or changed
    return changed


def _functions(tools: Any) -> list[dict[str, Any]]:
    found = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            found.append(function)
    return found


def _emulate_tools(plan: Plan, caps: Capabilities) -> None:
    body = plan.body
    functions = _functions(body.pop("tools"))
    choice = body.pop("tool_choice", "auto")
    body.pop("parallel_tool_calls", None)
    if _has_tool_history(body.get("messages")):
        body["messages"] = _tool_history_as_text(body["messages"])
        plan.applied.append("tool_history_as_text")
    if choice == "none" or not functions:
        plan.applied.append("tools_dropped:none")
        return
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    if named is not None:
        function = next((f for f in functions if f["name"] == named), None)
        if function is None:
            raise ValueError(f"tool_choice names function {named!r}, which is not among the offered tools")
        schema = _parameters(function)
        plan.tools = ToolPlan("named", (named,), named)
        instruction = f"Call the function {named} by replying with a JSON object of its arguments only."
        label = "named"
    else:
        if choice not in ("auto", "required"):
            raise ValueError(f"tool_choice: expected 'auto', 'required', 'none' or a named function, found {choice!r}")
        calls = {"type": "array", "minItems": 1, "items": _one_of([_call_schema(f) for f in functions])}
        schema = {"type": "object", "properties": {"tool_calls": calls}, "required": ["tool_calls"]}
        instruction = 'Reply with JSON only: {"tool_calls": [{"name": <function>, "arguments": {...}}]}'
        if choice == "auto":
            text = {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
            schema = {"anyOf": [schema, text]}
            instruction += ' to call functions, or {"content": <your reply>} to answer without calling one.'
        else:
            instruction += "; call at least one function."
        plan.tools = ToolPlan("choice", tuple(f["name"] for f in functions))
        label = str(choice)
    body["messages"] = _with_tool_instructions(body.get("messages") or [], functions, instruction)
    body["response_format"] = (
        {"type": "json_schema", "json_schema": {"name": TOOLS_SCHEMA_NAME, "schema": schema}}
        if caps.json_schema
        else {"type": "json_object", "schema": schema}
    )
    plan.applied.append(f"tools_emulated:{label}")


def _parameters(function: Mapping[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters")
    return copy.deepcopy(parameters) if isinstance(parameters, dict) and parameters else {"type": "object"}


def _call_schema(function: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"type": "string", "enum": [function["name"]]}, "arguments": _parameters(function)},
        "required": ["name", "arguments"],
    }


def _one_of(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def _with_tool_instructions(messages: list[Any], functions: list[dict[str, Any]], instruction: str) -> list[Any]:
    """The tools described in the system prompt (added to the first system message, or as a new one first)."""
    described = "\n".join(
        f"- {f['name']}: {f.get('description') or '(no description)'} Arguments (JSON Schema): "
        f"{json.dumps(f.get('parameters') or {}, sort_keys=True)}"
        for f in functions
    )
    text = f"You can call these functions:\n{described}\n{instruction}"
    out = list(messages)
    if out and isinstance(out[0], dict) and out[0].get("role") in ("system", "developer"):
        first = dict(out[0])
        first["content"] = f"{_text_of(first.get('content'))}\n\n{text}"
        out[0] = first
    else:
        out.insert(0, {"role": "system", "content": text})
    return out


def _has_tool_history(messages: Any) -> bool:
    return isinstance(messages, list) and any(
        isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls")) for m in messages
    )


def _tool_history_as_text(messages: list[Any]) -> list[Any]:
    out = []
    for message in messages:
        if not isinstance(message, dict):
            out.append(message)
        elif message.get("role") == "tool":
            said = _text_of(message.get("content"))
            out.append({"role": "user", "content": f"Result of tool call {message.get('tool_call_id', '')}: {said}"})
        elif message.get("tool_calls"):
            calls = [
                {"name": c.get("function", {}).get("name"), "arguments": c.get("function", {}).get("arguments")}
                for c in message["tool_calls"]
                if isinstance(c, dict)
            ]
            text = _text_of(message.get("content"))
            called = json.dumps({"tool_calls": calls}, sort_keys=True)
            out.append({"role": "assistant", "content": f"{text}\n{called}".strip()})
        else:
            out.append(message)
    return out


def _text_of(content: Any) -> str:
    """A message's text (the list-of-parts form joined)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


# ---------------------------------------------------------------------------------------------------- the reply


def translate_reply(body: Mapping[str, Any], plan: Plan, caps: Capabilities) -> dict[str, Any]:
    """The reply as the system gets it (and as it is cached): repaired and with tool calls read back, naming every
    translation of the call (request and reply) under `x_engram_bench`."""
    out = copy.deepcopy(dict(body))
    applied = list(plan.applied)
    choices = out.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        original = message["content"]
        content = original
        expects_json = plan.wants_json or plan.tools is not None
        if expects_json and caps.repair_json:
            repaired = repair_control_characters(content)
            if repaired != content and _parses(repaired) and not _parses(content):
                content = repaired
                message["content"] = content
                applied.append("json_control_chars_repaired")
        if plan.tools is not None:
            applied.append(_read_tool_calls(first, message, content, plan.tools))
        if message.get("content") != original:
            out.setdefault(RECORD_FIELD, {})["upstream_content"] = original
    if applied:
        out.setdefault(RECORD_FIELD, {})["translations"] = applied
    return out


def translations_of(body: Any) -> list[str]:
    """The translations a served (possibly cached) reply names."""
    record = body.get(RECORD_FIELD) if isinstance(body, dict) else None
    names = record.get("translations") if isinstance(record, dict) else None
    return [str(n) for n in names] if isinstance(names, list) else []


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def repair_control_characters(text: str) -> str:
    """Escape raw control characters (newline, tab, ...) inside JSON strings; everything else is left as it is."""
    out = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif ord(char) < 0x20:
                out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}"))
                continue
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def _read_tool_calls(choice: dict[str, Any], message: dict[str, Any], content: str, tools: ToolPlan) -> str:
    """Turn an emulated tool reply into `tool_calls` (in place); returns the outcome's name for the record."""
    try:
        parsed = json.loads(content)
    except ValueError:
        return "tool_reply_unreadable"  # the system gets the text as it came
    if tools.mode == "named":
        calls = [(tools.function or "", parsed)] if isinstance(parsed, dict) else []
    elif isinstance(parsed, dict) and isinstance(parsed.get("tool_calls"), list):
        calls = [
            (str(c.get("name")), c.get("arguments", {}))
            for c in parsed["tool_calls"]
            if isinstance(c, dict) and c.get("name") in tools.names
        ]
    elif isinstance(parsed, dict) and isinstance(parsed.get("content"), str):
        message["content"] = parsed["content"]
        return "tool_reply_as_text"
    else:
        calls = []
    if not calls:
        return "tool_reply_unreadable"
    message["content"] = None
    message["tool_calls"] = [
        {
            "id": "call_" + hashlib.sha256(f"{index}:{content}".encode()).hexdigest()[:24],
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments if arguments is not None else {})},
        }
        for index, (name, arguments) in enumerate(calls)
    ]
    choice["finish_reason"] = "tool_calls"
    return "tool_calls_read"
