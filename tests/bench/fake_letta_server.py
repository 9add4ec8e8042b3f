"""A fake Letta server for the Letta adapter's tests: no Letta server with an embedded store installs from PyPI
(docs/systems.md), so this one answers the routes `letta-client` calls for archival memory, shaped the way that
client parses them. It is a stand-in written from the client's paths and types, not a recording of a real server.

Like a real one, it embeds with the embedding model an agent was created with, by POSTing to that model's endpoint
(for the adapter, the harness's gateway endpoint), and ranks an agent's passages by cosine similarity.
"""

from __future__ import annotations

import json
import math
import threading
import urllib.request
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


class FakeLettaServer:
    def __init__(self) -> None:
        self.agents: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path) in the order they came
        self.embedding_calls = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeLettaServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLettaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def passages_of(self, agent_name_prefix: str) -> list[dict[str, Any]]:
        """Every live passage of the agents whose name starts with the prefix."""
        return [p for a in self.agents.values() if a["name"].startswith(agent_name_prefix) for p in a["passages"]]

    def _embed(self, agent: dict[str, Any], texts: list[str]) -> list[list[float]]:
        config = agent["embedding_config"]
        body = json.dumps({"model": config["embedding_model"], "input": texts}).encode()
        request = urllib.request.Request(
            config["embedding_endpoint"].rstrip("/") + "/embeddings",
            data=body,
            headers={"Content-Type": "application/json", "Authorization": "Bearer fake-letta"},
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            data = json.loads(reply.read())["data"]
        self.embedding_calls += 1
        return [row["embedding"] for row in sorted(data, key=lambda row: row["index"])]

    def _create_agent(self, body: dict[str, Any]) -> tuple[int, Any]:
        agent_id = f"agent-{uuid.uuid4()}"
        agent = {"id": agent_id, "name": body.get("name", agent_id), "passages": [], **body}
        self.agents[agent_id] = agent
        return 200, {key: value for key, value in agent.items() if key != "passages"}

    def _insert(self, agent: dict[str, Any], body: dict[str, Any]) -> tuple[int, Any]:
        [vector] = self._embed(agent, [body["text"]])
        passage = {
            "id": f"passage-{uuid.uuid4()}",
            "text": body["text"],
            "tags": body.get("tags") or [],
            "created_at": body.get("created_at") or datetime.now(UTC).isoformat(),
            "archive_id": f"archive-{agent['id']}",
        }
        agent["passages"].append({**passage, "vector": vector})
        return 200, [passage]

    def _search(self, agent: dict[str, Any], query: dict[str, list[str]]) -> tuple[int, Any]:
        [asked] = self._embed(agent, [query["query"][0]])
        top_k = int(query.get("top_k", ["10"])[0])
        ranked = sorted(agent["passages"], key=lambda p: -cosine(asked, p["vector"]))[:top_k]
        results = [
            {"id": p["id"], "content": p["text"], "timestamp": p["created_at"], "tags": p["tags"]} for p in ranked
        ]
        return 200, {"count": len(results), "results": results}

    def route(self, method: str, raw_path: str, body: Any) -> tuple[int, Any]:
        parsed = urlparse(raw_path)
        parts = [part for part in parsed.path.split("/") if part]
        with self._lock:
            self.requests.append((method, parsed.path))
            if parts == ["v1", "agents"] and method == "POST":
                return self._create_agent(body)
            if len(parts) >= 3 and parts[:2] == ["v1", "agents"]:
                agent = self.agents.get(parts[2])
                if agent is None:
                    return 404, {"detail": f"Agent with id={parts[2]} not found"}
                if len(parts) == 3 and method == "DELETE":
                    del self.agents[parts[2]]
                    return 200, None
                if parts[3:] == ["archival-memory"] and method == "POST":
                    return self._insert(agent, body)
                if parts[3:] == ["archival-memory", "search"] and method == "GET":
                    return self._search(agent, parse_qs(parsed.query))
            return 404, {"detail": f"Not Found: {method} {parsed.path}"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                status, payload = fake.route(self.command, self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
