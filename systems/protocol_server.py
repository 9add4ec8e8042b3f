"""A helper for adapters: serve a memory library over engram-bench's memory protocol (docs/memory-protocol.md).

Standard library only, because an adapter runs in its own environment where engram-bench is not installed. An
adapter puts this folder on sys.path, subclasses `MemoryBackend` and calls `serve(backend)`:

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from protocol_server import MemoryBackend, serve

Requests are checked here (a malformed one gets HTTP 400 with a one-line `error`), one at a time (the harness sends
one request at a time, and most libraries are not thread-safe), and any exception the backend raises becomes HTTP
500 with its one-line description, so the harness can name what failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROTOCOL = "engram-memory/1"
WRITE_FIELDS = {"namespace": True, "id": True, "speaker": True, "date": True, "text": True, "timestamp": False}
RETRIEVE_FIELDS = {"namespace": True, "question": True, "k": True, "as_of": False, "as_of_timestamp": False}


class RequestError(ValueError):
    """A request body outside the protocol (HTTP 400)."""


class MemoryBackend:
    """What an adapter implements. Every method gets the request's fields already checked."""

    def describe(self) -> dict[str, Any]:
        """{"name", "library", "version", "store", "config"} for /health."""
        raise NotImplementedError

    def reset(self, namespace: str) -> None:
        raise NotImplementedError

    def write(self, namespace: str, message: dict[str, Any]) -> dict[str, Any]:
        """Store one message ({"id", "speaker", "date", "timestamp", "text"}); return {"usage": {...}, "stored": n}."""
        raise NotImplementedError

    def retrieve(self, namespace: str, question: str, k: int | None, as_of: dict[str, Any]) -> dict[str, Any]:
        """{"lines": [{"text", "sources", "score"}], "retrieved_tokens": n, "usage": {...}}, at most k lines."""
        raise NotImplementedError

    def stats(self, namespace: str) -> dict[str, Any]:
        """{"stored": n, "unit": "memory"}."""
        raise NotImplementedError

    def facts(self, namespace: str) -> dict[str, Any] | None:
        """Optional: {"facts": [{"id", "text", "source", "active"}]}; None answers 404 (the library cannot list)."""
        return None


def checked(body: Any, fields: dict[str, bool]) -> dict[str, Any]:
    """The body's fields, or RequestError naming the first missing, unknown or mistyped one."""
    if not isinstance(body, dict):
        raise RequestError(f"body: expected a JSON object, found {type(body).__name__}")
    for name in body:
        if name not in fields:
            raise RequestError(f"{name}: unknown field; expected fields among {sorted(fields)}")
    for name, required in fields.items():
        if required and name not in body:
            raise RequestError(f"{name}: expected a value, found none")
    for name, value in body.items():
        if name == "k":
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise RequestError(f"k: expected a whole number >= 1 or null, found {value!r}")
        elif value is not None and not isinstance(value, str):
            raise RequestError(f"{name}: expected a string, found {type(value).__name__}")
    if not body.get("namespace"):
        raise RequestError("namespace: expected a non-empty string, found an empty one")
    return body


def approx_tokens(lines: list[str]) -> int:
    """A rough token count (words and punctuation) for `retrieved_tokens`, for a library that has none."""
    return sum(len(line.replace(",", " , ").replace(".", " . ").split()) for line in lines)


class _Handler(BaseHTTPRequestHandler):
    backend: MemoryBackend
    lock: threading.Lock
    # Keep-alive: the harness sends every request of a run on one connection (HTTP/1.0 would open one per request;
    # scripts/bench_protocol.py measures the difference).
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle on, the second waits for the client's delayed ACK (about
    # 40 ms per request on Linux, measured by scripts/bench_protocol.py).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the harness keeps the server's output as its log; one line per request would bury the errors

    def do_GET(self) -> None:
        if self.path != "/health":
            self._send(404, {"error": f"GET {self.path}: unknown path; expected /health"})
            return
        self._answer(lambda _body: {"status": "ok", "protocol": PROTOCOL, "system": self.backend.describe()}, None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send(400, {"error": f"POST {self.path}: body: expected JSON, found {raw[:60]!r}"})
            return
        routes = {
            "/reset": self._reset,
            "/write": self._write,
            "/retrieve": self._retrieve,
            "/stats": self._stats,
            "/facts": self._facts,
        }
        route = routes.get(self.path)
        if route is None:
            self._send(404, {"error": f"POST {self.path}: unknown path; expected one of {sorted(routes)}"})
            return
        self._answer(route, body)

    def _reset(self, body: Any) -> dict[str, Any]:
        self.backend.reset(checked(body, {"namespace": True})["namespace"])
        return {"ok": True}

    def _write(self, body: Any) -> dict[str, Any]:
        fields = checked(body, WRITE_FIELDS)
        message = {key: fields.get(key) for key in ("id", "speaker", "date", "timestamp", "text")}
        return self.backend.write(fields["namespace"], message)

    def _retrieve(self, body: Any) -> dict[str, Any]:
        fields = checked(body, RETRIEVE_FIELDS)
        as_of = {"date": fields.get("as_of"), "timestamp": fields.get("as_of_timestamp")}
        reply = self.backend.retrieve(fields["namespace"], fields["question"], fields["k"], as_of)
        if fields["k"] is not None:
            reply["lines"] = reply["lines"][: fields["k"]]
        return reply

    def _stats(self, body: Any) -> dict[str, Any]:
        return self.backend.stats(checked(body, {"namespace": True})["namespace"])

    def _facts(self, body: Any) -> dict[str, Any]:
        listed = self.backend.facts(checked(body, {"namespace": True})["namespace"])
        if listed is None:
            raise LookupError("this system cannot list what it stored")
        return listed

    def _answer(self, route: Any, body: Any) -> None:
        try:
            with self.lock:
                reply = route(body)
        except RequestError as exc:
            self._send(400, {"error": f"{self.command} {self.path}: {exc}"})
        except LookupError as exc:
            self._send(404, {"error": f"{self.command} {self.path}: {exc}"})
        except Exception as exc:  # the adapter's library failed: say what, in one line, and keep serving
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            self._send(500, {"error": f"{self.command} {self.path}: {type(exc).__name__}: {first}"})
            print(f"{self.command} {self.path} failed: {type(exc).__name__}: {first}", file=sys.stderr, flush=True)
        else:
            self._send(200, reply)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """--port (default $ENGRAM_MEMORY_PORT) and --data-dir (default $ENGRAM_MEMORY_DATA_DIR)."""
    parser = argparse.ArgumentParser(description="a memory-protocol adapter server")
    parser.add_argument("--port", type=int, default=int(os.environ.get("ENGRAM_MEMORY_PORT") or 0))
    parser.add_argument("--data-dir", default=os.environ.get("ENGRAM_MEMORY_DATA_DIR") or ".")
    return parser.parse_args(argv)


def serve(backend: MemoryBackend, port: int) -> None:
    """Answer the protocol on 127.0.0.1:port until the process is stopped."""
    handler = type("Handler", (_Handler,), {"backend": backend, "lock": threading.Lock()})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"serving {PROTOCOL} on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
