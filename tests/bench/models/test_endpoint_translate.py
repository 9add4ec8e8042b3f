"""The endpoint's translations one by one, as pure functions: what goes upstream for a server declared weaker in its
stack file, and what the system gets back."""

from __future__ import annotations

import json

from bench.models.endpoint.translate import (
    Capabilities,
    repair_control_characters,
    translate_reply,
    translate_request,
    translations_of,
)

WEAK = Capabilities(json_schema=False, tools=False, max_array_items=3, max_string_length=50, repair_json=True)


def _reply(content: str) -> dict:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def test_newlines_and_tabs_inside_strings_are_escaped_and_nothing_else_moves() -> None:
    broken = '{"note": "first line\nsecond\tline", "quote": "she said \\"hi\\"\n"}\n'
    repaired = repair_control_characters(broken)
    assert json.loads(repaired) == {"note": "first line\nsecond\tline", "quote": 'she said "hi"\n'}
    assert repaired.endswith("}\n")  # a newline outside a string is whitespace, left alone


def test_nested_arrays_and_strings_get_bounds_but_enums_and_declared_bounds_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "kind": {"type": "string", "enum": ["fact", "plan"]},
            "few": {"type": "array", "maxItems": 2, "minItems": 1, "items": {"type": "string", "maxLength": 9}},
            "many": {"type": "array", "minItems": 6, "items": {"type": "integer"}},
        },
    }
    body = {"model": "m", "messages": [], "response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    plan = translate_request(body, WEAK)
    sent = plan.body["response_format"]
    assert sent["type"] == "json_object"
    props = sent["schema"]["properties"]
    assert props["tags"]["maxItems"] == 3 and props["tags"]["items"]["maxItems"] == 3
    assert props["tags"]["items"]["items"]["maxLength"] == 50
    assert "maxLength" not in props["kind"]
    assert props["few"]["maxItems"] == 2 and props["few"]["items"]["maxLength"] == 9
    assert props["many"]["maxItems"] == 6  # never below the schema's own minimum
    assert body["response_format"]["type"] == "json_schema"  # the system's request is not changed in place


def test_earlier_tool_calls_and_results_are_written_as_text_for_a_server_without_tool_roles() -> None:
    history = [
        {"role": "user", "content": "store that Yusuf sails"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "save", "arguments": '{"x": 1}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "saved"},
    ]
    plan = translate_request({"model": "m", "messages": history}, WEAK)
    roles = [m["role"] for m in plan.body["messages"]]
    assert roles == ["user", "assistant", "user"] and plan.applied == ["tool_history_as_text"]
    assert "save" in plan.body["messages"][1]["content"] and "saved" in plan.body["messages"][2]["content"]


def test_an_unreadable_tool_reply_reaches_the_system_as_text_and_is_named() -> None:
    tools = [{"type": "function", "function": {"name": "save", "parameters": {"type": "object"}}}]
    plan = translate_request({"model": "m", "messages": [], "tools": tools, "tool_choice": "required"}, WEAK)
    served = translate_reply(_reply("I cannot do that"), plan, WEAK)
    message = served["choices"][0]["message"]
    assert message["content"] == "I cannot do that" and "tool_calls" not in message
    assert translations_of(served)[-1] == "tool_reply_unreadable"


def test_a_server_that_can_do_everything_gets_the_request_untouched() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "save"}}],
        "tool_choice": "required",
        "response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "array"}}},
    }
    plan = translate_request(body, Capabilities())
    assert plan.body == body and plan.applied == []
    assert translations_of(translate_reply(_reply("[]"), plan, Capabilities())) == []
