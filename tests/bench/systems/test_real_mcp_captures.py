"""What four real MCP memory servers said when we ran them (tests/bench/systems/mcp_captures/: each one's tools/list
and real replies, captured 2026-12-07 with the package and version recorded), read with the settings of their shipped
arms: the tools the harness picks and the hits it reads. Runs without the servers installed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.errors import SystemFailed
from bench.run.arms import load_arm
from bench.systems.mcp_replies import ReplyReader
from bench.systems.mcp_tools import plan_tools
from bench.vocab import ARMS_DIR

CAPTURES = Path(__file__).parent / "mcp_captures"


def capture(server: str) -> dict[str, Any]:
    return dict(json.loads((CAPTURES / f"{server}.json").read_text()))


def listed_tools(server: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(**tool) for tool in capture(server)["tools"]]


def reply(server: str, tool: str, query: str, which: int = 0) -> SimpleNamespace:
    """The captured result of `tool` asked `query` (the first time, or `which`), shaped as the mcp SDK hands it
    over."""
    calls = [c for c in capture(server)["calls"] if c["tool"] == tool and c["arguments"].get("query") == query]
    result = calls[which]["result"]
    content = [SimpleNamespace(**item) for item in result["content"]]
    return SimpleNamespace(content=content, structuredContent=result.get("structuredContent"))


def arm_settings(server: str) -> dict[str, Any]:
    return dict(load_arm(server, ARMS_DIR).settings)


def test_each_capture_names_the_package_and_version_that_answered() -> None:
    assert {s: (capture(s)["package"], capture(s)["version"]) for s in ("mcp-memory-service", "basic-memory")} == {
        "mcp-memory-service": ("mcp-memory-service-lite", "12.4.0"),
        "basic-memory": ("basic-memory", "0.24.1"),
    }
    assert capture("server-memory")["package"] == "@modelcontextprotocol/server-memory"
    assert (capture("mcp-server-qdrant")["package"], capture("mcp-server-qdrant")["version"]) == (
        "mcp-server-qdrant",
        "0.8.1",
    )


@pytest.mark.parametrize(
    ("server", "store", "search", "namespace", "k"),
    [
        ("mcp-memory-service", "memory_store", "memory_search", "agent_id", "limit"),
        ("basic-memory", "write_note", "search_notes", None, "page_size"),
        ("server-memory", "create_entities", "search_nodes", None, None),
        ("mcp-server-qdrant", "qdrant-store", "qdrant-find", "collection_name", None),
    ],
)
def test_a_shipped_arm_calls_the_real_servers_tools_it_means(
    server: str, store: str, search: str, namespace: str | None, k: str | None
) -> None:
    plan = plan_tools(listed_tools(server), arm_settings(server), f"arm {server!r}")
    assert (plan.ingest.tool, plan.search.tool) == (store, search)
    assert plan.search.namespace_arg == namespace and plan.search.k_arg == k


def test_with_no_tool_named_mcp_memory_services_semantic_search_wins_over_its_mistake_notes() -> None:
    """The trap the issue met: mistake_note_search has fewer arguments than memory_search."""
    settings = {key: value for key, value in arm_settings("mcp-memory-service").items() if "tool" not in key}
    settings.update(reset_args=None)
    plan = plan_tools(listed_tools("mcp-memory-service"), settings, "mcp-memory-service")
    assert plan.search.tool == "memory_search" and plan.ingest.tool == "memory_store"


def test_mcp_memory_service_reply_block_is_read_as_its_turns_without_hashes_or_wall_clock() -> None:
    reader = ReplyReader.from_settings(arm_settings("mcp-memory-service"))
    hits = reader.hits(reply("mcp-memory-service", "memory_search", "When did Caroline go to the LGBTQ support group?"))
    assert [hit.text for hit in hits] == [
        "[8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "[8 May, 2023] Caroline: The transgender stories were so inspiring! I was so happy and thankful for all the "
        "support.",
        "[8 May, 2023] Melanie: Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any "
        "inspiring stories?",
    ]
    assert reader.hits(reply("mcp-memory-service", "memory_search", "support group")) == []


def test_basic_memory_json_hits_carry_the_note_text_and_its_title_as_the_message_id() -> None:
    reader = ReplyReader.from_settings(arm_settings("basic-memory"))
    hits = reader.hits(reply("basic-memory", "search_notes", "What did Melanie paint?"))
    assert [(hit.named_id, hit.text) for hit in hits][0] == (
        "D1:6",
        "[8 May, 2023] Melanie: I painted a lake sunrise last year, it's special to me.",
    )
    assert len(hits) == 2
    # Asked again after its folder was deleted: "No results found for 'support group' in project 'main'. Try ..."
    assert reader.hits(reply("basic-memory", "search_notes", "support group", which=-1)) == []


def test_server_memory_hits_are_entities_read_as_their_observations() -> None:
    reader = ReplyReader.from_settings(arm_settings("server-memory"))
    hits = reader.hits(reply("server-memory", "search_nodes", "support group"))
    assert [hit.named_id for hit in hits] == ["D1:3", "conv-26"]
    assert hits[0].text == "[8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
    # A question in words is in no observation: the whole-query substring test finds nothing.
    assert reader.hits(reply("server-memory", "search_nodes", "What did Melanie paint?")) == []


def test_mcp_server_qdrant_tried_as_a_new_user_stops_in_one_line_naming_the_setting_it_needs() -> None:
    """Its tools are found by name and their collection_name filled with the namespace; its store tool's text
    argument, `information`, is no name the harness knows, so without the arm's text_arg it stops saying so."""
    settings = {key: value for key, value in arm_settings("mcp-server-qdrant").items() if key != "text_arg"}
    with pytest.raises(SystemFailed) as raised:
        plan_tools(listed_tools("mcp-server-qdrant"), settings, "mcp-server-qdrant")
    message = str(raised.value)
    assert "qdrant-store: no string argument for the text (settings.text_arg)" in message and "\n" not in message
    # the way out is that setting: the line ends saying so, not "name one with settings.ingest_tool" (it has one)
    assert message.endswith(
        "to use it, add the setting its reason names, or name another tool with settings.ingest_tool"
    )


def test_mcp_server_qdrant_hits_are_its_entries_without_the_header_that_echoes_the_query() -> None:
    """qdrant-find answers a JSON list: "Results for the query '...'", then one <entry> per hit. The header is no
    memory (it would show the answerer its own question and take a place among the k); the arm's strip removes the
    <entry><content> wrapping, never the words."""
    reader = ReplyReader.from_settings(arm_settings("mcp-server-qdrant"))
    hits = reader.hits(reply("mcp-server-qdrant", "qdrant-find", "What did Melanie paint?"))
    assert [hit.text for hit in hits] == [
        "[8 May, 2023] Melanie: I painted a lake sunrise last year, it's special to me.",
        "[8 May, 2023] Caroline: The transgender stories were so inspiring!",
        "[8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    ]
    unstripped = ReplyReader.from_settings({})
    first = unstripped.hits(reply("mcp-server-qdrant", "qdrant-find", "support group"))[0].text
    assert first.startswith("<entry><content>[8 May, 2023] Caroline: I went to a LGBTQ support group")
    # A collection never written to: no content at all.
    assert reader.hits(reply("mcp-server-qdrant", "qdrant-find", "What did Melanie paint?", which=1)) == []
