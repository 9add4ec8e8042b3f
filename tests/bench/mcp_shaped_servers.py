"""MCP memory servers written for the tests in the shapes of three real ones (tool names, argument schemas and reply
formats as recorded from mcp-memory-service 12.4.0, @modelcontextprotocol/server-memory and basic-memory 0.24.1;
their stores here are a JSON file ranked by shared words, nothing of theirs). The harness must run each from a
TOML alone.

`service`: `memory_store` / `memory_search` among decoys (`mistake_note_search` has fewer arguments); search replies
  are one plain-text block (a header, numbered hits, `Hash:` and wall-clock `Created:` lines); an exact duplicate
  is refused with isError; the store lives under ~ unless $SERVICE_BASE_DIR moves it.
`graph`: `create_entities` takes structured entities, `search_nodes` a query and no count and no namespace;
  replies are structured `{"entities": [...], "relations": [...]}`; the store is $MEMORY_FILE_PATH, else ~.
  `graph --substring` searches as server-memory does: the entities whose name, type or an observation contains
  the whole query (case-insensitive), unranked, so a question in words finds nothing and a name finds its turn.
`notes`: `write_note` needs title, content and directory; `search_notes` answers `{"result": {"results": [...]}}`
  or a plain "No results found" string; a `search` tool with one argument is a decoy; the store lives in the
  working folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP

WORD = re.compile(r"[a-z0-9']{3,}")


class Store:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.items: list[dict[str, Any]] = json.loads(path.read_text()) if path.exists() else []

    def add(self, item: dict[str, Any]) -> None:
        self.items.append(item)
        self.path.write_text(json.dumps(self.items))

    def keep(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.path.write_text(json.dumps(self.items))

    def ranked(self, query: str, pool: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
        asked = set(WORD.findall(query.lower()))
        scored = [(len(asked & set(WORD.findall(item["text"].lower()))), i, item) for i, item in enumerate(pool)]
        hits = [item for score, _, item in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0]
        return hits[:limit] if limit is not None else hits


def service(server: FastMCP) -> None:
    base = Path(os.environ.get("SERVICE_BASE_DIR") or Path.home() / ".local" / "share" / "service-memory")
    store = Store(base / "memories.json")

    @server.tool(structured_output=False)
    def memory_store(
        content: str, conversation_id: str = "", agent_id: str = "", metadata: dict[str, Any] | None = None
    ) -> str:
        """Store a new memory for later semantic retrieval."""
        digest = hashlib.sha256(content.encode()).hexdigest()
        if any(item["hash"] == digest for item in store.items):
            raise ValueError("Error storing memory: Duplicate content detected (exact match)")
        tags = (metadata or {}).get("tags") or ""
        store.add({"text": content, "hash": digest, "agent": agent_id, "tags": tags, "at": time.time()})
        return f"Memory stored successfully (hash: {digest})"

    @server.tool(structured_output=False)
    def memory_search(query: str = "", limit: int = 10, agent_id: str = "", mode: str = "semantic") -> str:
        """Search stored memories by meaning."""
        pool = [item for item in store.items if not agent_id or item["agent"] == agent_id]
        hits = store.ranked(query, pool, limit)
        if not hits:
            return f"No memories found for query: '{query}'"
        blocks = [f"Found {len(hits)} memories (mode: {mode}) for query: '{query}'", ""]
        for n, item in enumerate(hits, 1):
            created = datetime.now(UTC).isoformat()  # wall clock, as the real one prints it
            blocks += [
                f"{n}. {item['text']}",
                f"   Hash: {item['hash']}",
                f"   Created: {created} [{item['tags']}]",
                "",
            ]
        return "\n".join(blocks)

    @server.tool(structured_output=False)
    def mistake_note_search(query: str, limit: int = 5) -> str:
        """Search notes about past mistakes."""
        return f"No memories found for query: '{query}'"

    @server.tool(structured_output=False)
    def mistake_note_add(error_pattern: str, correct_action: str) -> str:
        """Record a mistake and its fix."""
        return "noted"

    @server.tool(structured_output=False)
    def memory_delete(tags: list[str] | None = None, content_hash: str = "") -> str:
        """Delete memories by tag or hash."""
        kept = [item for item in store.items if item["tags"] not in (tags or []) and item["hash"] != content_hash]
        gone = len(store.items) - len(kept)
        store.keep(kept)
        return f"Successfully deleted {gone} memories"


def graph(server: FastMCP, substring: bool = False) -> None:
    store = Store(Path(os.environ.get("MEMORY_FILE_PATH") or Path.home() / "memory.json"))

    def matching(query: str) -> list[dict[str, Any]]:
        if not substring:
            return store.ranked(query, store.items, None)
        asked = query.lower()
        return [item for item in store.items if any(asked in item[key].lower() for key in ("name", "type", "text"))]

    def entity(item: dict[str, Any]) -> dict[str, Any]:
        return {"name": item["name"], "entityType": item["type"], "observations": [item["text"]]}

    @server.tool()
    def create_entities(entities: list[dict[str, Any]]) -> dict[str, Any]:
        """Create multiple new entities in the knowledge graph."""
        made = []
        for given in entities:
            if any(item["name"] == given["name"] for item in store.items):
                continue  # an existing name is skipped silently
            for text in given["observations"]:
                store.add({"name": given["name"], "type": given["entityType"], "text": text})
            made.append(given)
        return {"entities": made}

    @server.tool()
    def add_observations(observations: list[dict[str, Any]]) -> dict[str, Any]:
        """Add new observations to existing entities."""
        return {"results": []}

    @server.tool()
    def search_nodes(query: str) -> dict[str, Any]:
        """Search for nodes in the knowledge graph based on a query."""
        return {"entities": [entity(item) for item in matching(query)], "relations": []}

    @server.tool()
    def read_graph() -> dict[str, Any]:
        """Read the entire knowledge graph."""
        return {"entities": [entity(item) for item in store.items], "relations": []}


def notes(server: FastMCP) -> None:
    store = Store(Path.cwd() / "notes-index.json")

    @server.tool()
    def write_note(title: str, content: str, directory: str, project: str | None = None) -> str:
        """Write a markdown note to the knowledge base."""
        if any(item["title"] == title for item in store.items):
            raise ValueError(f"# Error: Note already exists: {title}")
        store.add({"title": title, "dir": directory, "text": content})
        return f"# Created note\nfile_path: {directory}/{title}.md\nchecksum: {hashlib.md5(content.encode()).hexdigest()[:8]}"

    @server.tool()
    def search_notes(
        query: str | None = None, page_size: int = 10, output_format: str = "text"
    ) -> dict[str, Any] | str:
        """Search across all content in the knowledge base."""
        hits = store.ranked(query or "", store.items, page_size)
        if not hits:
            return f"No results found for '{query}' in project 'main'. Try broader terms."
        if output_format != "json":
            return "\n\n".join(
                f"### {item['title']}\n- score: 1.0\n- external_id: {os.urandom(4).hex()}" for item in hits
            )
        results = [{"title": h["title"], "content": h["text"], "score": 1.0, "updated_at": time.time()} for h in hits]
        return {"results": results, "current_page": 1, "has_more": False}

    @server.tool()
    def search(query: str) -> dict[str, Any]:
        """Search for content (OpenAI connector)."""
        return {"results": [], "error": "Unsupported MCP client"}

    @server.tool()
    def delete_note(identifier: str, is_directory: bool = False) -> str:
        """Delete a note or a directory of notes."""
        kept = [item for item in store.items if item["dir"] != identifier and item["title"] != identifier]
        if len(kept) == len(store.items):
            raise ValueError(f"# Delete Failed - Note Not Found: {identifier}")
        store.keep(kept)
        return "# Directory Deleted Successfully"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("shape", choices=["service", "graph", "notes"])
    parser.add_argument("--substring", action="store_true", help="graph: search_nodes as a substring match")
    options = parser.parse_args()
    server = FastMCP(f"{options.shape}-memory")
    if options.shape == "graph":
        graph(server, substring=options.substring)
    else:
        {"service": service, "notes": notes}[options.shape](server)
    server.run(transport="stdio")


if __name__ == "__main__":
    main()
