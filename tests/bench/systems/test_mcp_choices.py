"""How an MCP arm picks its tools and reads their replies, on tool lists and replies shaped like real servers'."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from bench.errors import ConfigError, SystemFailed
from bench.systems.mcp_replies import ReplyReader
from bench.systems.mcp_system import McpSystem
from bench.systems.mcp_tools import plan_tools


def tool(name: str, description: str = "", required: tuple[str, ...] = (), **properties: Any) -> SimpleNamespace:
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}, "required": required}
    return SimpleNamespace(name=name, description=description, inputSchema=schema)


def settings(**given: Any) -> dict[str, Any]:
    return McpSystem.validate_settings({"command": ["server"], **given})


SERVICE = [
    tool("memory_store", "Store a new memory", ("content",), content="string", agent_id="string", metadata="object"),
    tool("memory_search", "Search memories", query="string", limit="integer", agent_id="string", mode="string"),
    tool("mistake_note_search", "Search mistake notes", ("query",), query="string", limit="integer"),
    tool("mistake_note_add", "Record a mistake", ("error_pattern",), error_pattern="string"),
    tool("memory_list", "List memories", page="integer"),
]


def test_the_memory_search_wins_over_a_narrower_one_with_fewer_arguments_in_any_listing_order() -> None:
    for seed in range(5):
        listing = SERVICE[:]
        random.Random(seed).shuffle(listing)
        plan = plan_tools(listing, settings(), "server")
        assert (plan.ingest.tool, plan.search.tool) == ("memory_store", "memory_search")
        assert plan.search.namespace_arg == "agent_id" and plan.search.k_arg == "limit"


def test_a_required_argument_that_names_an_owner_is_filled_with_the_namespace() -> None:
    tools = [
        tool("save_memory", "", ("text", "project_name"), text="string", project_name="string"),
        tool("recall", "", ("question", "agent_key"), question="string", agent_key="string"),
    ]
    plan = plan_tools(tools, settings(), "server")
    assert plan.ingest.namespace_arg == "project_name" and plan.search.namespace_arg == "agent_key"


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        ({"search_tool": "memory_find"}, "settings.search_tool: expected one of the server's tools"),
        ({"search_tool": "memory_search", "k_arg": "top_k"}, "settings.k_arg: expected one of the tool's arguments"),
        ({"ingest_tool": "memory_store", "text_arg": "metadata"}, "expected an argument that takes a string"),
        ({"search_tool": "memory_search", "query_arg": "limit"}, "found 'limit' of type integer"),
        ({"search_args": {"howmany": 3}}, "settings.search_args.howmany"),
    ],
)
def test_an_override_the_server_cannot_take_is_one_line_when_the_tools_are_read(
    given: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(SystemFailed) as raised:
        plan_tools(SERVICE, settings(**given), "system 'mcp' (server)")
    assert fragment in str(raised.value) and "\n" not in str(raised.value)


def test_an_unknown_placeholder_or_a_bad_pattern_is_refused_before_the_server_starts() -> None:
    with pytest.raises(ConfigError, match=r"settings.ingest_args.title: expected placeholders among"):
        settings(ingest_args={"title": "{message}"})
    with pytest.raises(ConfigError, match=r"settings.meta_lines: expected a regular expression"):
        settings(meta_lines="(unclosed")


def reply(text: str | None = None, structured: Any = None) -> SimpleNamespace:
    content = [] if text is None else [SimpleNamespace(type="text", text=text)]
    return SimpleNamespace(content=content, structuredContent=structured)


SERVICE_REPLY = """Found 2 memories (mode: semantic) for query: 'When did Caroline go?'

1. [8 May, 2023] Caroline: I went to a support group yesterday
   and it was so powerful.
   Hash: 6f3d6e106605206316fe49e5e41b7fb3b880df5b1f3d20488baede5cf3572cb4
   Created: 2026-12-07T16:21:39.696918Z [conv-26]

2. [8 May, 2023] Caroline: The stories were so inspiring!
   Hash: 36f8733652702001491e6fabb26f1638e0b22061843ad86fba9f154ab0d7b074
   Created: 2026-12-07T16:21:40.650815Z [conv-26]
"""


def texts(result: SimpleNamespace, **given: Any) -> list[str]:
    return [hit.text for hit in ReplyReader.from_settings(given).hits(result)]


def test_a_numbered_plain_text_reply_is_two_hits_without_header_hash_or_clock() -> None:
    assert texts(reply(SERVICE_REPLY)) == [
        "[8 May, 2023] Caroline: I went to a support group yesterday and it was so powerful.",
        "[8 May, 2023] Caroline: The stories were so inspiring!",
    ]


LISTING_REPLY = """Found 2 memories (mode: semantic) for query: 'Which detailer did you suggest?'

1. [2023/04/10 (Mon) 17:50] assistant: Here are some options:

1. **Shine Pros**: hand wash and wax.
2. **Detail Kings**: interior only.

## Before you book
Ask about prices.
   Hash: 6f3d6e106605206316fe49e5e41b7fb3b880df5b1f3d20488baede5cf3572cb4
   Created: 2026-12-07T16:21:39.696918Z [q1]

2. [2023/04/10 (Mon) 17:50] user: Thanks, I will try Shine Pros.
   Hash: 36f8733652702001491e6fabb26f1638e0b22061843ad86fba9f154ab0d7b074
   Created: 2026-12-07T16:21:40.650815Z [q1]
"""


def test_a_multi_line_turn_read_back_on_one_line_is_traced_to_the_turn_it_came_from() -> None:
    from bench.systems.mcp_system import collapsed, trace_sources

    said = "Here are some options:\n\n1. **Shine Pros**: hand wash and wax.\n2. **Detail Kings**: interior only.\n\n"
    said += "## Before you book\nAsk about prices."
    turn = "[2023/04/10 (Mon) 17:50] assistant: " + said
    stored, words = {"s1:0": collapsed(turn)}, {"s1:0": collapsed(said)}  # as the system keeps what it wrote
    first, second = ReplyReader.from_settings({}).hits(reply(LISTING_REPLY))
    assert trace_sources(first.text, stored, words) == ("s1:0",)
    assert trace_sources(second.text, stored, words) == ()


def test_a_stored_turns_own_numbered_list_and_heading_stay_in_its_hit() -> None:
    # a LongMemEval assistant turn holds numbered lists and headings; each hit ends with the server's metadata
    assert texts(reply(LISTING_REPLY)) == [
        "[2023/04/10 (Mon) 17:50] assistant: Here are some options: 1. **Shine Pros**: hand wash and wax. "
        "2. **Detail Kings**: interior only. ## Before you book Ask about prices.",
        "[2023/04/10 (Mon) 17:50] user: Thanks, I will try Shine Pros.",
    ]


@pytest.mark.parametrize(
    "said",
    [
        "No memories found for query: 'support group'",
        "No results found for 'zebra' in project 'main'. Try broader terms.",
        "no matching notes",
        "",
    ],
)
def test_a_reply_that_says_nothing_was_found_is_no_hit(said: str) -> None:
    assert texts(reply(said)) == [] and texts(reply(None, {"result": said})) == []


def test_paragraphs_are_hits_and_a_lone_line_per_hit_still_works() -> None:
    paragraphs = "Results for 'ferry':\n\nOur ferry leaves at dawn.\nID: 7\n\nThe captain waved.\nscore: 0.4"
    assert texts(reply(paragraphs)) == ["Our ferry leaves at dawn.", "The captain waved."]
    assert texts(reply("first memory\nsecond memory")) == ["first memory", "second memory"]


def test_json_items_with_null_text_are_no_hits_and_entities_show_their_observations() -> None:
    assert texts(reply(json.dumps([{"memory": None}, {"memory": "kept"}]))) == ["kept"]
    # a FastMCP tool that returns json.dumps(...) arrives as structured {"result": "<that JSON>"}: read as JSON too,
    # never stored as one literal line
    returned = json.dumps([{"memory": None}, {"memory": None}])
    assert texts(reply(returned, {"result": returned})) == []
    kept = json.dumps([{"memory": None}, {"memory": "kept"}])
    assert texts(reply(kept, {"result": kept})) == ["kept"]
    assert texts(reply(None, {"result": "[8 May, 2023] Caroline: a line that only starts like JSON"})) == [
        "[8 May, 2023] Caroline: a line that only starts like JSON"
    ]
    graph = {"entities": [{"name": "D1:3", "entityType": "turn", "observations": ["a", "b"]}], "relations": []}
    [hit] = ReplyReader.from_settings({}).hits(reply(json.dumps(graph), graph))
    assert (hit.text, hit.named_id) == ("a | b", "D1:3")
    wrapped = {"result": {"results": [{"title": "D2:1", "content": "note body", "updated_at": "2026-12-07"}]}}
    [note] = ReplyReader.from_settings({}).hits(reply(None, wrapped))
    assert (note.text, note.named_id) == ("note body", "D2:1")


def test_an_arm_can_set_the_patterns_where_detection_is_wrong() -> None:
    odd = "== hit ==\nalpha one\nmeta| 9\n== hit ==\nbeta two (seen 2026-12-07 16:21)"
    assert texts(reply(odd), hit_start=r"^== hit ==$", meta_lines=r"^meta\|", strip=r"\s*\(seen [^)]*\)") == [
        "alpha one",
        "beta two",
    ]


def test_a_part_that_changes_from_run_to_run_is_found_and_an_old_date_is_not() -> None:
    from bench.systems.mcp_replies import volatile_part

    today = {"2026-12-07"}
    assert volatile_part("seen at 2026-12-07T16:21:39Z [conv-26]", today) == "2026-12-07T16:21"
    assert volatile_part("id 3f2b9c1e-8a4d-4f0e-9b6a-2c1d0e9f8a7b", today) == "3f2b9c1e-8a4d-4f0e-9b6a-2c1d0e9f8a7b"
    assert volatile_part("[8 May, 2023] we met on 2023-05-08 10:00 at the pier", today) is None
