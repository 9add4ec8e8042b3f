"""Local stand-ins for the Anthropic Messages API, TypeSafe Jev and an OpenAI-compatible chat-completions server:
real HTTP on 127.0.0.1, ephemeral ports.

Tests talk to these through real sockets (no patched transports). Behaviour is scriptable per path with a queue of
canned replies (status, JSON or raw bytes, headers, delay); once a path's queue is empty, the `responder` hook
answers (`responder(path, body) -> (status, headers, json)`), by default with plausible, deterministic replies.
Every request is counted, so a test can assert that no network was touched.

    with FakeModelServer() as server:
        server.script("/v1/systemone", Canned(429, headers={"Retry-After": "1"}))
        ... os.environ["TYPESAFE_URL"] = server.url ...
        assert server.count("/v1/systemone") == 2

Fixtures `fake_anthropic`, `fake_jev` and `fake_openai` (import them into a test module) start a server and point
$ANTHROPIC_BASE_URL / $TYPESAFE_URL / $OPENAI_BASE_URL (the server's /v1) at it for the test.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Responder = Callable[[str, Any], tuple[int, dict[str, str], Any]]
MESSAGES, COUNT_TOKENS, SYSTEMONE = "/v1/messages", "/v1/messages/count_tokens", "/v1/systemone"
CHAT_COMPLETIONS = "/v1/chat/completions"


@dataclass(frozen=True)
class Canned:
    status: int = 200
    body: Any = None  # JSON reply; None (and no raw) means "let the responder answer"
    raw: bytes | None = None  # sent verbatim, e.g. b"{not json"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before replying (to trigger client timeouts)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: Any


def approx_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def fake_message(body: Any, text: str = "fake reply") -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "unknown"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": approx_tokens(body.get("messages")), "output_tokens": len(text.split())},
    }


def fake_jev_answer(payload: dict[str, Any]) -> dict[str, Any]:
    """Peaked and valid: the first option at 0.9, the rest sharing 0.1; a yes/no question at P(yes) = 0.9."""
    if payload.get("type") == "noul":
        return {"type": "noul", "noul": 0.9}
    options = list(payload["criteria"])
    rest = round(0.1 / max(1, len(options) - 1), 6)
    probabilities = {o: (0.9 if i == 0 else rest) for i, o in enumerate(options)}
    if len(options) == 1:
        probabilities = {options[0]: 1.0}
    return {"probabilities": probabilities, "choice": options[0], "confidence": probabilities[options[0]]}


def fake_chat_text(body: Any) -> str:
    """A judge prompt (it asks for a JSON label) gets a verdict; anything else a short fixed answer."""
    prompt = json.dumps(body.get("messages", []))
    return '{"label": "CORRECT"}' if "CORRECT" in prompt and "WRONG" in prompt else "fake reply"


def fake_logprobs(text: str, top: int) -> dict[str, Any]:
    """Per word of the reply: the word at log-probability -0.1 and `top - 1` alternatives, each less likely."""
    content = []
    for word in text.split():
        alternatives = [{"token": word, "logprob": -0.1, "bytes": list(word.encode())}]
        alternatives += [
            {"token": f"{word}~{i}", "logprob": -1.0 - i, "bytes": list(f"{word}~{i}".encode())} for i in range(1, top)
        ]
        content.append({"token": word, "logprob": -0.1, "bytes": list(word.encode()), "top_logprobs": alternatives})
    return {"content": content, "refusal": None}


def fake_chat_completion(body: Any, text: str | None = None) -> dict[str, Any]:
    text = fake_chat_text(body) if text is None else text
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text, "refusal": None},
        "finish_reason": "stop",
        "logprobs": fake_logprobs(text, int(body.get("top_logprobs") or 1)) if body.get("logprobs") else None,
    }
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model", "unknown"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": approx_tokens(body.get("messages")),
            "completion_tokens": len(text.split()),
            "total_tokens": approx_tokens(body.get("messages")) + len(text.split()),
        },
    }


def schema_instance(
    schema: Any, text: str = "a kayak trip on the Lys", defs: dict[str, Any] | None = None, depth: int = 0
) -> Any:
    """The smallest plausible value valid under a JSON Schema (the subset model servers are asked for: objects,
    arrays, scalars, enum/const, $ref into $defs, anyOf/oneOf/allOf): what a grammar-constrained server returns,
    every string being `text` (cut to the schema's maxLength)."""
    if not isinstance(schema, dict) or depth > 12:
        return "noted"
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return schema_instance(defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {}), text, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for several in ("anyOf", "oneOf"):
        if schema.get(several):
            typed = [option for option in schema[several] if option.get("type") != "null"] or schema[several]
            # a model cannot know the id of a document it was not shown: prefer an option that asks for none
            plain = [option for option in typed if not _asks_for_an_id(option)] or typed
            return schema_instance(plain[0], text, defs, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(schema_instance(part, text, defs, depth + 1) or {})
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {
            name: schema_instance(sub, text, defs, depth + 1) for name, sub in (schema.get("properties") or {}).items()
        }
    if kind == "array":
        return [
            schema_instance(schema.get("items", {}), text, defs, depth + 1)
            for _ in range(max(1, schema.get("minItems", 1)))
        ]
    scalars = {"integer": 1, "number": 0.5, "boolean": False, "null": None}
    return scalars[kind] if kind in scalars else text[: schema.get("maxLength") or len(text)]


def _asks_for_an_id(schema: Any) -> bool:
    """Whether a schema (at any depth) has a property named like an id (`json_doc_id`, `id`)."""
    if isinstance(schema, dict):
        names = schema.get("properties") or {}
        if any(str(name) == "id" or str(name).endswith("_id") for name in names):
            return True
        return any(_asks_for_an_id(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_asks_for_an_id(value) for value in schema)
    return False


def schema_valid_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """An OpenAI-compatible chat server that always answers with JSON valid under the request's schema
    (response_format json_schema, or json_object with a `schema`, as the gateway endpoint sends to llama.cpp's
    server), every string in it the last message's last line of text (so a memory keeps what was said); a request
    without a schema gets the default reply."""
    if path != CHAT_COMPLETIONS:
        return default_responder(path, body)
    response_format = body.get("response_format") or {}
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
    if schema is None:
        return default_responder(path, body)
    messages = body.get("messages") or [{}]
    lines = [line.strip() for line in str(messages[-1].get("content") or "").splitlines()]
    said = [line for line in lines if line and not line.startswith("<")] or ["(nothing said)"]  # not a markup tag
    return 200, {}, fake_chat_completion(body, json.dumps(schema_instance(schema, said[-1])))


def default_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    if path == MESSAGES:
        return 200, {}, fake_message(body)
    if path == COUNT_TOKENS:
        return 200, {}, {"input_tokens": approx_tokens(body.get("messages"))}
    if path == CHAT_COMPLETIONS:
        return 200, {}, fake_chat_completion(body)
    if path == SYSTEMONE:
        answers = {key: fake_jev_answer(payload) for key, payload in body.get("questions", {}).items()}
        usage = {"input_tokens": approx_tokens(body)}
        return (
            200,
            {"x-typesafe-request-id": "req-fake"},
            {"answers": answers, "usage": usage, "model": body.get("model")},
        )
    return 404, {}, {"error": {"type": "not_found", "message": f"no route {path}"}}


class FakeModelServer:
    def __init__(self, responder: Responder = default_responder) -> None:
        self.responder = responder
        self.requests: list[Received] = []
        self._scripts: dict[str, deque[Canned]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, path: str, *replies: Canned) -> None:
        with self._lock:
            self._scripts[path].extend(replies)

    def count(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def wait_for_count(self, expected: int, path: str | None = None, within_s: float = 5.0) -> int:
        """The request count once it reaches `expected` (or the deadline passes). A client that timed out may give
        up before the server thread has logged that request, so count only after it had the chance to."""
        deadline = time.monotonic() + within_s
        while (seen := self.count(path)) < expected and time.monotonic() < deadline:
            time.sleep(0.01)
        return seen

    def start(self) -> FakeModelServer:
        # A short poll interval: shutdown() waits for the serving loop to notice, 0.5 s by default.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, path: str, body: Any) -> Canned:
        with self._lock:
            queue = self._scripts.get(path)
            canned = queue.popleft() if queue else None
        if canned is not None and (canned.body is not None or canned.raw is not None or canned.status != 200):
            return canned
        status, headers, reply = self.responder(path, body)
        delay = canned.delay_s if canned else 0.0
        return Canned(
            status=status, body=reply, headers={**headers, **(canned.headers if canned else {})}, delay_s=delay
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = None
                path = self.path.split("?", 1)[0]
                with server._lock:
                    server.requests.append(Received(path, {k.lower(): v for k, v in self.headers.items()}, body))
                canned = server._next_reply(path, body)
                if canned.delay_s:
                    time.sleep(canned.delay_s)
                payload = canned.raw if canned.raw is not None else json.dumps(canned.body or {}).encode()
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

        return Handler


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture
def fake_jev(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        monkeypatch.setenv("TYPESAFE_URL", server.url)
        yield server


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        yield server


class RecordedSleeps:
    """Stands in for asyncio.sleep so retry waits are asserted as values, not timed."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()
