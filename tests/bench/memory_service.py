"""A tiny memory service in another process, for the tests: it speaks engram-bench's memory protocol with nothing
but the standard library (no engram-bench import), the way a system written in any language would.

It keeps each namespace's turns and ranks them by words shared with the question (newest first on ties). Flags make
it misbehave the ways the harness must survive: --too-many (k+2 lines), --crash-after N (the process dies on write
N+1), --slow-retrieve S, --malformed (lines is not an array), --leak (the first line comes from another namespace),
--bad-source (a line names an id never written), --count-file PATH (appends one line per /write it serves),
--claims LIB==VERSION (the library and version /health names).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

WORD = re.compile(r"[a-z0-9']{3,}")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


class Service:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.turns: dict[str, list[dict[str, Any]]] = {}
        self.writes = 0

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path == "/reset":
            self.turns[body["namespace"]] = []
            return 200, {"ok": True}
        if path == "/write":
            return self.write(body)
        if path == "/retrieve":
            return self.retrieve(body)
        if path == "/stats":
            return 200, {"stored": len(self.turns.get(body["namespace"], [])), "unit": "turn"}
        return 404, {"error": f"no such path {path}"}

    def write(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        missing = [f for f in ("namespace", "id", "speaker", "date", "text") if not isinstance(body.get(f), str)]
        if missing:
            return 400, {"error": f"{missing[0]}: expected a string"}
        self.writes += 1
        if self.options.crash_after is not None and self.writes > self.options.crash_after:
            os._exit(3)
        if self.options.count_file:
            with open(self.options.count_file, "a") as out:
                out.write(body["id"] + "\n")
        self.turns.setdefault(body["namespace"], []).append(body)
        return 200, {"usage": {"calls": 0, "input_tokens": None}, "stored": 1}

    def retrieve(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.options.slow_retrieve:
            time.sleep(self.options.slow_retrieve)
        if self.options.malformed:
            return 200, {"lines": "everything I know", "retrieved_tokens": 3}
        asked = words(body["question"])
        turns = self.turns.get(body["namespace"], [])
        ranked = sorted(enumerate(turns), key=lambda it: (-len(asked & words(it[1]["text"])), -it[0]))
        k = body["k"] if body["k"] is not None else len(ranked)
        chosen = [turn for _, turn in ranked][: k + 2 if self.options.too_many else k]
        lines = [{"text": f"({t['date']}) {t['speaker']} said: {t['text']}", "sources": [t["id"]]} for t in chosen]
        if self.options.leak:
            others = [t for ns, ts in self.turns.items() if ns != body["namespace"] for t in ts]
            if others:
                lines = [{"text": others[0]["text"], "sources": []}, *lines[: max(k - 1, 0)]]
        if self.options.bad_source and lines:
            lines[0]["sources"] = ["D99:999"]
        tokens = sum(len(line["text"].split()) for line in lines)
        return 200, {"lines": lines, "retrieved_tokens": tokens, "usage": {"calls": 0}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--too-many", action="store_true")
    parser.add_argument("--crash-after", type=int)
    parser.add_argument("--slow-retrieve", type=float, default=0.0)
    parser.add_argument("--malformed", action="store_true")
    parser.add_argument("--leak", action="store_true")
    parser.add_argument("--bad-source", action="store_true")
    parser.add_argument("--count-file")
    parser.add_argument("--claims", default="wordbag-memory==0.0.1")
    options = parser.parse_args()
    service = Service(options)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            library, version = options.claims.split("==")
            system = {"name": "wordbag", "library": library, "version": version, "store": "a dict in memory"}
            self.reply(200, {"status": "ok", "protocol": "engram-memory/1", "system": system})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                self.reply(400, {"error": "body: expected JSON"})
                return
            if not isinstance(body, dict) or not isinstance(body.get("namespace"), str):
                self.reply(400, {"error": "namespace: expected a string"})
                return
            self.reply(*service.handle(self.path, body))

    HTTPServer(("127.0.0.1", options.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
