"""The HTTP side of the gateway endpoint: the standard library's threading server on 127.0.0.1, one thread per
connection, keep-alive, JSON in and out.

No web framework: the endpoint is a handful of routes, and a replayed call through it must cost at most 2 ms more
than the same call in-process (scripts/bench_endpoint.py). Two details keep it there: Nagle's algorithm is off, and a
reply's headers and body leave in one write (a buffered writer flushed once per request), so a small reply is never
held back waiting for the client's delayed ACK.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from bench.models.endpoint.service import EndpointError, EndpointService, Reply

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
EMBEDDING_PATHS = frozenset({"/v1/embeddings", "/embeddings"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})
MODEL_PREFIXES = ("/v1/models/", "/models/")
POST_PATHS = CHAT_PATHS | EMBEDDING_PATHS
MAX_BODY_BYTES = 64 * 1024 * 1024


class EndpointServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: EndpointService, host: str, port: int) -> None:
        self.service = service
        super().__init__((host, port), _Handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="gateway-endpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a system's client reuses one connection
    disable_nagle_algorithm = True
    wbufsize = 1 << 16  # headers and body in one send (flushed by handle_one_request)
    server: EndpointServer

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        service = self.server.service
        if path in MODELS_PATHS:
            self._send(service.models_reply())
        elif path.startswith(MODEL_PREFIXES):
            self._send(service.model_reply(unquote(path.split("/models/", 1)[1])))
        elif path == "/health":
            self._send(Reply(200, {"status": "ok"}))
        elif path in POST_PATHS:
            self._send(_wrong_method(self.command, path))
        else:
            self._send(_not_found(path))

    def do_HEAD(self) -> None:
        """What a GET would answer, headers only (HTTP gives HEAD no body; the standard library would send an HTML
        501 page)."""
        self.do_GET()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        what = "chat" if path in CHAT_PATHS else "embeddings" if path in EMBEDDING_PATHS else None
        body = self._read_json()
        if what is None:
            self._send(_wrong_method("POST", path) if _is_get_path(path) else _not_found(path))
        elif isinstance(body, EndpointError):
            self._send(body.reply())
        else:
            self._send(self.server.service.answer(what, body))

    def _other_method(self) -> None:
        """PUT, DELETE, PATCH...: a JSON 405 naming the methods each route takes (the standard library would send
        an HTML 501 page, which an OpenAI client cannot read). Any body is left unread, so the connection closes."""
        self.close_connection = True
        path = urlsplit(self.path).path.rstrip("/")
        self._send(_wrong_method(self.command, path) if _is_route(path) else _not_found(path))

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other_method

    def _read_json(self) -> Any:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw: bytes | EndpointError = self._read_chunked()
        else:
            raw = self._read_sized()
        if isinstance(raw, EndpointError):
            self.close_connection = True
            return raw
        try:
            return json.loads(raw) if raw else None
        except ValueError as exc:
            return EndpointError(400, f"expected a JSON request body, found unreadable JSON ({exc})", "invalid_json")

    def _read_sized(self) -> bytes | EndpointError:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            return EndpointError(400, f"Content-Length: expected 0..{MAX_BODY_BYTES} bytes", "invalid_body")
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes | EndpointError:
        """A body sent with Transfer-Encoding: chunked (curl -T -, some HTTP clients), read whole, at most
        MAX_BODY_BYTES."""
        body = bytearray()
        while True:
            size_line = self.rfile.readline(1024).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                return EndpointError(
                    400, f"chunked body: expected a hex chunk size, found {size_line[:20]!r}", "invalid_body"
                )
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields, unused
                return bytes(body)
            if len(body) + size > MAX_BODY_BYTES:
                return EndpointError(400, f"chunked body: expected at most {MAX_BODY_BYTES} bytes", "invalid_body")
            body += self.rfile.read(size)
            self.rfile.readline(1024)  # the CRLF after each chunk

    def _send(self, reply: Reply) -> None:
        data = json.dumps(reply.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if not reply.retry:
            self.send_header("x-should-retry", "false")  # OpenAI's SDKs would otherwise retry a 5xx
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, *args: object) -> None:  # requests are counted by the service, not logged per line
        pass


def _not_found(path: str) -> Reply:
    return EndpointError(
        404, f"no route {path!r}; this endpoint serves /v1/chat/completions, /v1/embeddings and /v1/models", "not_found"
    ).reply()


def _is_get_path(path: str) -> bool:
    return path in MODELS_PATHS or path.startswith(MODEL_PREFIXES) or path == "/health"


def _is_route(path: str) -> bool:
    return path in POST_PATHS or _is_get_path(path)


def _wrong_method(method: str, path: str) -> Reply:
    expected = "POST" if path in POST_PATHS else "GET"
    return EndpointError(405, f"{path!r} expects {expected}, found {method}", "method_not_allowed").reply()
