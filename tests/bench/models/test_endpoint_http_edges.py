"""The gateway endpoint at its HTTP edges, as a client that is not OpenAI's SDK meets it: every answer is JSON an
OpenAI client can read (never the standard library's HTML error page), a chunked body is read like a sized one, a
port someone else holds is one line, and `gateway serve` stops with exit 0 even after answering a client's mistake."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.errors import ConfigError
from bench.models.endpoint import EndpointHandle, start_endpoint
from engram.testing import HashEmbedder


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EndpointHandle]:
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    with start_endpoint("offline", None, cache_dir=tmp_path / "cache", embedder=lambda: HashEmbedder()) as handle:
        yield handle


def ask(handle: EndpointHandle, method: str, path: str, body: bytes | None = None, **headers: str) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        reply = connection.getresponse()
        raw = reply.read()
    finally:
        connection.close()
    assert reply.getheader("Content-Type") == "application/json", raw[:200]
    return reply.status, json.loads(raw)


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_a_method_no_route_takes_gets_a_json_405_naming_the_one_it_does(endpoint: EndpointHandle, method: str) -> None:
    status, body = ask(endpoint, method, "/v1/chat/completions", b"{}", **{"Content-Length": "2"})
    assert status == 405
    assert body["error"]["code"] == "method_not_allowed" and "expects POST" in body["error"]["message"]


def test_get_on_a_post_route_and_post_on_a_get_route_say_which_method_is_expected(endpoint: EndpointHandle) -> None:
    status, body = ask(endpoint, "GET", "/v1/embeddings")
    assert status == 405 and "expects POST, found GET" in body["error"]["message"]
    status, body = ask(endpoint, "POST", "/v1/models", b"{}", **{"Content-Length": "2"})
    assert status == 405 and "expects GET, found POST" in body["error"]["message"]
    status, body = ask(endpoint, "DELETE", "/v1/nowhere")
    assert status == 404 and "no route" in body["error"]["message"]


def test_head_answers_what_get_would_with_headers_only(endpoint: EndpointHandle) -> None:
    for path, expected in (("/health", 200), ("/v1/models", 200), ("/v1/chat/completions", 405), ("/v1/nope", 404)):
        connection = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
        try:
            connection.request("HEAD", path)
            reply = connection.getresponse()
            assert (reply.status, reply.getheader("Content-Type")) == (expected, "application/json"), path
            assert reply.read() == b""  # a body after a HEAD reply would be read as the next response
            assert int(reply.getheader("Content-Length") or 0) > 0
        finally:
            connection.close()


def test_a_chunked_body_is_read_like_a_sized_one(endpoint: EndpointHandle) -> None:
    request = json.dumps({"model": "engram-bench/embed", "input": ["the kettle is on", "rain again"]}).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (request[:17], request[17:])) + b"0\r\n\r\n"
    status, body = ask(endpoint, "POST", "/v1/embeddings", chunks, **{"Transfer-Encoding": "chunked"})
    assert status == 200, body
    assert [row["index"] for row in body["data"]] == [0, 1]
    status, body = ask(endpoint, "POST", "/v1/embeddings", b"zz\r\n{}\r\n0\r\n\r\n", **{"Transfer-Encoding": "chunked"})
    assert status == 400 and "chunk size" in body["error"]["message"]


def _held_port() -> tuple[socket.socket, int]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder, holder.getsockname()[1]


def test_a_port_another_program_holds_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_LEDGER", str(tmp_path / "ledger.jsonl"))
    holder, port = _held_port()
    with holder, pytest.raises(ConfigError) as refused:
        start_endpoint("offline", None, port=port, cache_dir=tmp_path / "cache")
    message = str(refused.value)
    assert f"--port {port}: expected a free port" in message and "in use" in message and "\n" not in message


def _serve(tmp_path: Path, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "ENGRAM_CACHE_DIR": str(tmp_path / "cache"), "ENGRAM_LEDGER": str(tmp_path / "ledger.jsonl")}
    command = [sys.executable, "-m", "bench", "gateway", "serve", "--stack", "offline", *argv]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_gateway_serve_on_a_taken_port_exits_2_in_one_line(tmp_path: Path) -> None:
    holder, port = _held_port()
    with holder:
        server = _serve(tmp_path, "--port", str(port))
        out, err = server.communicate(timeout=120)
    assert server.returncode == 2, err
    assert err.strip().splitlines() == [err.strip()] and "in use" in err and "Traceback" not in err


def test_gateway_serve_stopped_after_a_clients_mistake_exits_0_and_notes_it(tmp_path: Path) -> None:
    server = _serve(tmp_path, "--port", "0")
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().split()[2]
        port = int(base_url.rsplit(":", 1)[1].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        chat = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
        connection.request("POST", "/v1/chat/completions", body=chat, headers={"Content-Type": "application/json"})
        assert connection.getresponse().status == 400
        connection.close()
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "gateway endpoint stopped; served:" in out
    assert "note: the first error a client was answered with:" in err and "'gpt-4o'" in err
