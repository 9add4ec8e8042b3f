"""The harness's keep-alive HTTP/1.1 client as a chat server meets it: replies by length, chunked or until close,
connections kept and reused, a connection the server closed replaced, compressed and broken replies, the deadline.

The server here is a raw asyncio socket server that answers each request with scripted bytes, so every way a real
server may frame a reply is exercised byte for byte."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from bench.models.clients.http1 import HttpxPoster, KeptAlive, ReplyUnreadable, poster_for

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer local"}
PAYLOAD = json.dumps({"choices": [{"message": {"content": " ".join(str(i) for i in range(2000))}}]}).encode()


def ok(body: bytes, *extra: str) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass
class Served:
    """What the scripted server saw: each request's bytes, and how many connections it accepted."""

    requests: list[bytes] = field(default_factory=list)
    connections: int = 0


# One step of the server's script per request: (reply bytes, then close the connection?); None: close unanswered.
Step = tuple[bytes, bool] | None


def serve(steps: list[Step], client: Callable[[str, Served], Awaitable[None]]) -> Served:
    """Run `client(base_url, served)` against a server that answers request i with `steps[i]`."""
    served = Served()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                served.requests.append(head + await reader.readexactly(length))
                step = steps[len(served.requests) - 1]
                if step is None:
                    break
                writer.write(step[0])
                await writer.drain()
                if step[1]:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        try:
            await client(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", served)
        finally:
            server.close()

    asyncio.run(main())
    return served


def posts(count: int, bodies: list[bytes], timeout_s: float = 5.0) -> Callable[[str, Served], Awaitable[None]]:
    async def client(base: str, served: Served) -> None:
        poster = KeptAlive(base, timeout_s)
        try:
            for i in range(count):
                reply = await poster.post("/chat/completions", json.dumps({"n": i}).encode(), HEADERS)
                bodies.append(reply.body)
        finally:
            await poster.close()

    return client


def test_a_post_carries_the_body_and_headers_and_one_connection_serves_every_call() -> None:
    bodies: list[bytes] = []
    served = serve([(ok(b'{"reply": %d}' % i), False) for i in range(3)], posts(3, bodies))
    assert [json.loads(b) for b in bodies] == [{"reply": 0}, {"reply": 1}, {"reply": 2}]
    assert served.connections == 1
    head, _, body = served.requests[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert {"Authorization: Bearer local", "Content-Type: application/json", "Content-Length: 8"} <= set(lines)
    assert any(line.startswith("Host: 127.0.0.1:") for line in lines) and json.loads(body) == {"n": 0}


def test_chunked_gzip_interim_and_until_close_replies_are_read_whole() -> None:
    packed = gzip.compress(PAYLOAD)
    chunks = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part) for part in (packed[:40], packed[40:]))
    steps: list[Step] = [
        (
            b"HTTP/1.1 100 Continue\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
            + chunks
            + b"0\r\nX-Trailer: yes\r\n\r\n",
            False,
        ),
        (b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + PAYLOAD, True),  # no length: ends at close
        (ok(PAYLOAD, "Connection: close"), True),
        (ok(PAYLOAD), False),
    ]
    bodies: list[bytes] = []
    served = serve(steps, posts(4, bodies))
    assert bodies == [PAYLOAD] * 4
    assert served.connections == 3  # the reply read until close, and the one saying close, each ended theirs


def test_a_kept_connection_the_server_closed_is_replaced_without_a_failure() -> None:
    # The server answers, then closes the connection without saying so (an idle timeout), and later hangs up on a
    # request that arrives on a connection it is closing: the client opens a fresh one each time.
    bodies: list[bytes] = []
    served = serve([(ok(b"{}"), True), (ok(b"{}"), False), None, (ok(b"{}"), False)], posts(3, bodies))
    assert bodies == [b"{}"] * 3 and served.connections == 3


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        (b"SSH-2.0-OpenSSH\r\n\r\n", "expected an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "expected a header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n", "expected a Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}", "content-encoding 'br'"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", "does not decompress"),
    ],
    ids=["not HTTP", "bad header", "bad length", "unknown encoding", "bad gzip"],
)
def test_bytes_that_are_no_reply_are_refused_in_one_line(reply: bytes, found: str) -> None:
    with pytest.raises(ReplyUnreadable, match=found) as caught:
        serve([(reply, True)], posts(1, []))
    assert "\n" not in str(caught.value)


def test_a_reply_cut_short_is_a_lost_connection_and_the_deadline_a_timeout() -> None:
    with pytest.raises(ConnectionError, match="after 5 bytes of its reply"):
        serve([(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", True)], posts(1, []))
    with pytest.raises(ConnectionError):
        serve([None], posts(1, []))  # a fresh connection hung up on: not retried here (the retry policy does)

    async def slow(base: str, served: Served) -> None:
        poster = KeptAlive(base, timeout_s=0.2)
        try:
            with pytest.raises(TimeoutError):
                await poster.post("/chat/completions", b"{}", HEADERS)
        finally:
            await poster.close()

    served = Served()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.connections += 1
        await asyncio.sleep(1)
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        try:
            await slow(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", served)
        finally:
            server.close()

    asyncio.run(main())
    assert served.connections == 1


def test_a_server_a_proxy_setting_covers_is_called_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(poster_for("http://127.0.0.1:8000/v1", 5), KeptAlive)
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    assert isinstance(poster_for("https://api.openai.com/v1", 5), HttpxPoster)
    assert isinstance(poster_for("http://127.0.0.1:8000/v1", 5), KeptAlive)  # the proxy is for https only
    monkeypatch.setenv("no_proxy", "api.openai.com")
    assert isinstance(poster_for("https://api.openai.com/v1", 5), KeptAlive)
