"""A lean keep-alive HTTP/1.1 client for JSON POSTs on asyncio streams: how an OpenAI-compatible server is called.

Why not the openai SDK or httpx: against a local server answering at once (scripts/bench_call_overhead.py), the
SDK's request building and httpx's models and connection pool (which polls every idle connection's socket at each
request) cost about 2 ms of CPU per 100 KB chat call, most of the harness's own cost per call; this client costs
about 0.3 ms. It does what a chat-completions call needs and nothing more:

- one request at a time per connection; connections are kept alive and reused (the most recent first), a connection
  the server has closed is dropped before reuse, and a reused connection that fails before any reply byte is
  replaced by a fresh one once (the server closed it just as the request left);
- a reply body by Content-Length, by chunked transfer encoding, or until the server closes; gzip and deflate decoded;
- http and https (verified against certifi's certificates when installed, as httpx does, else the system's);
- one deadline for the whole exchange (connect, send, reply).

Not: proxies, redirects, HTTP/2, streamed replies. A base URL that a proxy setting in the environment covers is
called through httpx instead (`HttpxPoster`), which honours those settings.

Failures: `TimeoutError` when the deadline passes; `ConnectionError` (an `OSError`) when no reply could be had;
`ReplyUnreadable` (a `ConnectionError` too) for bytes that are not an HTTP/1.x reply. Both posters raise only these.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

USER_AGENT = "engram-bench"
# A reply head (status line and headers) larger than this is refused: no chat server sends one.
MAX_HEAD_BYTES = 64 * 1024


class ReplyUnreadable(ConnectionError):
    """Bytes from the server that are not an HTTP/1.x reply."""


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]  # names lower-cased; repeated headers joined with ", "
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class Poster(Protocol):
    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> Reply: ...

    async def close(self) -> None: ...


def poster_for(base_url: str, timeout_s: float) -> Poster:
    """The lean client for `base_url`'s server, or httpx when a proxy setting in the environment covers it."""
    if _proxied(base_url):
        return HttpxPoster(base_url, timeout_s)
    return KeptAlive(base_url, timeout_s)


def _proxied(base_url: str) -> bool:
    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.netloc)


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int
    path: str  # the base URL's path, without a trailing slash

    @classmethod
    def of(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http(s):// URL with a host, found {base_url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class KeptAlive:
    """Keep-alive connections to one server, used from one event loop (see the module docstring)."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.origin = Origin.of(base_url)
        self.timeout_s = timeout_s
        self._idle: list[Connection] = []
        self._tls: ssl.SSLContext | None = _tls_context() if self.origin.scheme == "https" else None

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        request = self._request_bytes(path, body, headers)
        async with asyncio.timeout(self.timeout_s):
            try:
                connection, reused = await self._connection()
            except _LOST as exc:
                raise _as_connection_error(exc) from exc
            try:
                return await self._exchange(connection, request)
            except _LOST as exc:
                if not (reused and _nothing_received(exc)):
                    raise _as_connection_error(exc) from exc
            # the server closed the kept-alive connection just as the request left: once more, on a fresh one
            try:
                return await self._exchange((await self._connection(fresh=True))[0], request)
            except _LOST as exc:
                raise _as_connection_error(exc) from exc

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()

    def _request_bytes(self, path: str, body: bytes, headers: Mapping[str, str]) -> bytes:
        lines = [
            f"POST {self.origin.path}{path} HTTP/1.1",
            f"Host: {self.origin.host_header}",
            f"User-Agent: {USER_AGENT}",
            "Accept-Encoding: identity",
            *(f"{name}: {value}" for name, value in headers.items()),
            f"Content-Length: {len(body)}",
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def _connection(self, fresh: bool = False) -> tuple[Connection, bool]:
        while self._idle and not fresh:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return (reader, writer), True
            writer.close()
        tls = self._tls
        connection = await asyncio.open_connection(
            self.origin.host,
            self.origin.port,
            ssl=tls,
            server_hostname=self.origin.host if tls else None,
            limit=MAX_HEAD_BYTES,
        )
        return connection, False

    async def _exchange(self, connection: Connection, request: bytes) -> Reply:
        reader, writer = connection
        try:
            writer.write(request)
            reply, reusable = await read_reply(reader)
        except BaseException:
            writer.close()  # a half-read reply must never be read by the next request
            raise
        if reusable:
            self._idle.append(connection)
        else:
            writer.close()
        return reply


# What a lost connection raises on the way: socket, DNS and TLS errors are OSErrors; a reply cut short, EOFError's
# IncompleteReadError. (The deadline's TimeoutError is raised outside them, by `asyncio.timeout`.)
_LOST = (OSError, asyncio.IncompleteReadError)


def _nothing_received(exc: BaseException) -> bool:
    if isinstance(exc, ReplyUnreadable):
        return False  # the server answered, with bytes that are no reply
    return not isinstance(exc, asyncio.IncompleteReadError) or not exc.partial


def _as_connection_error(exc: BaseException) -> ConnectionError:
    if isinstance(exc, ConnectionError):
        return exc
    if isinstance(exc, asyncio.IncompleteReadError):
        return ConnectionError(f"the server closed the connection after {len(exc.partial)} bytes of its reply")
    return ConnectionError(f"{type(exc).__name__}: {exc}")


def _tls_context() -> ssl.SSLContext:
    try:
        import certifi  # local import: only an https server needs it, and httpx (which brings it) is optional
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


async def read_reply(reader: asyncio.StreamReader) -> tuple[Reply, bool]:
    """One reply from `reader` and whether its connection may carry another request (1xx interim replies skipped)."""
    while True:
        status, version, headers = await _read_head(reader)
        if not 100 <= status < 200:
            break
    if status in (204, 304):
        body, until_close = b"", False
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body, until_close = await _read_chunked(reader), False
    elif "content-length" in headers:
        body, until_close = await reader.readexactly(_length(headers["content-length"])), False
    else:
        body, until_close = await reader.read(), True
    tokens = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    reusable = not until_close and "close" not in tokens and (version != "HTTP/1.0" or "keep-alive" in tokens)
    return Reply(status, headers, _decoded(body, headers.get("content-encoding", ""))), reusable


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise ReplyUnreadable(f"a reply head of more than {MAX_HEAD_BYTES:,} bytes") from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise ReplyUnreadable(f"expected an HTTP/1.x status line, found {lines[0][:60]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise ReplyUnreadable(f"expected a header line, found {line[:60]!r}")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return int(code), version, headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size_line = (await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError:
            raise ReplyUnreadable(f"expected a chunk size, found {size_line[:20]!r}") from None
        if size == 0:
            break
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)  # the CRLF after each chunk
    while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailer lines, if any, up to the blank line
        pass
    return b"".join(parts)


def _length(value: str) -> int:
    if not value.strip().isdigit():
        raise ReplyUnreadable(f"expected a Content-Length, found {value[:20]!r}")
    return int(value)


def _decoded(body: bytes, encoding: str) -> bytes:
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return body
    if coding in ("gzip", "x-gzip", "deflate"):
        try:
            return zlib.decompress(body, zlib.MAX_WBITS | 32)  # gzip or zlib, told apart by the header
        except zlib.error:
            if coding == "deflate":  # some servers send raw deflate without the zlib wrapper
                try:
                    return zlib.decompress(body, -zlib.MAX_WBITS)
                except zlib.error:
                    pass
            raise ReplyUnreadable(f"a {coding} body that does not decompress") from None
    raise ReplyUnreadable(f"a body in content-encoding {encoding!r}, which this client does not decode")


class HttpxPoster:
    """The same POST through httpx, for a server reached through a proxy (httpx reads the environment's proxy
    settings); its failures are raised as the lean client's are."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        import httpx  # local import: only a proxied server needs it

        self._httpx = httpx
        self.origin = Origin.of(base_url)
        self._client: Any = httpx.AsyncClient(timeout=timeout_s, follow_redirects=True)
        self._base = base_url.rstrip("/")

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        httpx = self._httpx
        try:
            response = await self._client.post(f"{self._base}{path}", content=body, headers=dict(headers))
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc)) from exc
        except httpx.TransportError as exc:
            raise ConnectionError(str(exc) or type(exc).__name__) from exc
        return Reply(response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content)

    async def close(self) -> None:
        await self._client.aclose()
