"""An MCP memory server written for the tests with the mcp SDK's server API (FastMCP, stdio): what a researcher's
own memory server looks like. It keeps short notes per user and ranks them by shared words.

--tool-names odd: the same server with names and arguments no discovery rule knows (the arm must name them).
--no-memory-tools: a server whose only tool has nothing to do with memory.
--ignore-user: search ignores the user, so one user's notes reach another (the canary must catch it).
--data-dir: the notes survive in a JSON file there (a server with a store on disk).
--store-in-home: like --data-dir, in $NOTEBOOK_DATA_DIR, else ~/.notebook (as servers that keep a store under ~ do).
--slow-search S: every search takes S seconds; --die-after N: the process ends on store call N+1.
--http-port P: serve streamable HTTP on 127.0.0.1:P (path /mcp) instead of stdio.
$NOTEBOOK_SALT, when set, ends every note it returns (" #<salt>"): a server whose search gives other lines from
one run to the next, as a test decides.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP

WORD = re.compile(r"[a-z0-9']{3,}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool-names", default="usual")
    parser.add_argument("--no-memory-tools", action="store_true")
    parser.add_argument("--ignore-user", action="store_true")
    parser.add_argument("--data-dir")
    parser.add_argument("--store-in-home", action="store_true")
    parser.add_argument("--slow-search", type=float, default=0.0)
    parser.add_argument("--die-after", type=int)
    parser.add_argument("--http-port", type=int)
    options = parser.parse_args()
    server = FastMCP("notebook-memory", host="127.0.0.1", port=options.http_port or 8000)
    stored = 0
    notes: dict[str, list[str]] = {}
    if options.store_in_home:
        options.data_dir = os.environ.get("NOTEBOOK_DATA_DIR") or str(Path.home() / ".notebook")
        Path(options.data_dir).mkdir(parents=True, exist_ok=True)
    store = Path(options.data_dir) / "notes.json" if options.data_dir else None

    def save() -> None:
        if store is not None:
            store.write_text(json.dumps(notes))

    def remember(text: str, user: str) -> str:
        nonlocal stored
        stored += 1
        if options.die_after is not None and stored > options.die_after:
            os._exit(5)
        notes.setdefault(user, []).append(text)
        save()
        return f"stored note {len(notes[user])}"

    def search(query: str, user: str, limit: int) -> list[dict[str, str]]:
        time.sleep(options.slow_search)
        asked = set(WORD.findall(query.lower()))
        pool = [n for ns in notes.values() for n in ns] if options.ignore_user else notes.get(user, [])
        ranked = sorted(enumerate(pool), key=lambda it: (-len(asked & set(WORD.findall(it[1].lower()))), it[0]))
        salt = f" #{os.environ['NOTEBOOK_SALT']}" if os.environ.get("NOTEBOOK_SALT") else ""
        return [{"memory": text + salt, "rank": str(i)} for i, (_, text) in enumerate(ranked[:limit])]

    def forget(user: str) -> str:
        notes.pop(user, None)
        save()
        return "forgotten"

    if options.no_memory_tools:

        @server.tool()
        def get_weather(city: str) -> str:
            """Today's weather for a city."""
            return f"sunny in {city}"

    elif options.tool_names == "odd":

        @server.tool()
        def jot(body: str, bucket: str) -> str:
            """Keep a line of text in a bucket."""
            return remember(body, bucket)

        @server.tool()
        def lookup(phrase: str, bucket: str, howmany: int = 5) -> list[dict[str, str]]:
            """Lines of a bucket that share words with a phrase."""
            return search(phrase, bucket, howmany)

    else:

        @server.tool()
        def add_memory(content: str, user_id: str) -> str:
            """Remember one piece of text for a user."""
            return remember(content, user_id)

        @server.tool()
        def search_memories(query: str, user_id: str, limit: int = 5) -> list[dict[str, str]]:
            """The user's memories most related to the query."""
            return search(query, user_id, limit)

        @server.tool()
        def delete_all_memories(user_id: str) -> str:
            """Forget everything about a user."""
            return forget(user_id)

    server.run(transport="streamable-http" if options.http_port else "stdio")


if __name__ == "__main__":
    main()
