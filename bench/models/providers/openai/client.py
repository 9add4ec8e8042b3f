"""OpenAI-compatible chat completions behind the gateway: engram's `LLM` protocol and raw chat calls.

One client serves OpenAI itself and every server that speaks its chat-completions dialect (vLLM, llama.cpp's
server, ollama). The body we key on is exactly the JSON that is POSTed to `<base URL>/chat/completions`, over the
harness's lean keep-alive HTTP/1.1 client (`bench.models.clients.http1`; httpx when a proxy setting covers the
server): the openai SDK, which this client used before, built each request and parsed each reply at several times
the cost, which against a local server was most of the harness's own work per call. `bench.models.clients.retry` is
the one retry policy (attempts and the Retry-After cap come from the stack file).

Which server answered is part of every cache key (`target`: scheme://host:port/path of the base URL, never the
key), so a reply recorded from a laptop's ollama is never served as gpt-4o-mini's. The key comes from
$OPENAI_API_KEY, read only when a call must go out; a server on 127.0.0.1/localhost needs none, and gets the
placeholder `LOCAL_PLACEHOLDER_KEY` (as it did from the SDK, which refused to send without a key).

Log-probabilities: `ask(..., logprobs=True, top_logprobs=n)` sends the chat API's `logprobs`/`top_logprobs` and
returns each generated token's alternatives as `TokenLogprobs` (the reply body keeps the server's JSON as is).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from bench.errors import ConfigError
from bench.models.cache import CallRequest
from bench.models.clients.http1 import Poster, poster_for
from bench.models.clients.loop import LoopThread
from bench.models.clients.retry import RetryPolicy
from bench.models.clients.sdk import SDKClient
from bench.models.gateway import CallResult, Gateway, LiveResponse
from bench.models.providers.openai.errors import (
    KEY_ENV,
    OpenAIRateLimited,
    OpenAIRefused,
    OpenAIUnavailable,
    completion_body,
    status_failure,
    transport_failure,
)
from engram import Completion

PROVIDER = "openai"
ENDPOINT = "chat.completions"
PATH = "/chat/completions"  # below the base URL, as the SDK (and every OpenAI-compatible server) spells it
BASE_URL_ENV = "OPENAI_BASE_URL"
SENT_AS_PARAMETERS = ("model", "messages")
# Sees a fresh reply body before the gateway caches it; raises to refuse it (e.g. a reply without log-probabilities).
ReplyCheck = Callable[[Mapping[str, Any]], None]
# Turns a fresh reply body into the body that is cached and returned (never sees a cached one).
ReplyFinish = Callable[[dict[str, Any]], dict[str, Any]]
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# Sent to a local server only, as the SDK sent it (it would not build a client without some key); local servers
# ignore it.
LOCAL_PLACEHOLDER_KEY = "local-server-needs-no-key"


def server_identity(base_url: str, where: str = "base_url") -> str:
    """scheme://host:port/path of a base URL: what identifies the server in a cache key (credentials, query and
    fragment dropped; default ports spelled out; no trailing slash)."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: expected an http(s):// URL with a host, found {base_url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ConfigError(f"{where}: expected a numeric port, found {base_url!r}") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets next to a port
    return f"{parts.scheme}://{host}:{port}{parts.path.rstrip('/')}"


def is_local(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").lower() in LOCAL_HOSTS


def reply_text(body: Mapping[str, Any]) -> str:
    """The first choice's message text ("" for a reply without text, e.g. only tool calls)."""
    choices = body.get("choices") or []
    message = (choices[0].get("message") or {}) if choices else {}
    return str(message.get("content") or "")


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int, int]:
    usage = usage or {}
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


@dataclass(frozen=True)
class TokenLogprobs:
    """One generated token, its log-probability, and the server's most likely alternatives at that position."""

    token: str
    logprob: float
    top: Mapping[str, float]  # alternative token -> log-probability (the chosen token included when listed)


def token_logprobs(body: Mapping[str, Any]) -> list[TokenLogprobs] | None:
    """The first choice's `logprobs.content`, or None when the server sent none usable (it was not asked, cannot,
    or left a token's log-probability out: a missing one is never read as 0, which would mean certainty)."""
    choices = body.get("choices") or []
    logprobs = (choices[0].get("logprobs") or {}) if choices else {}
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list):
        return None
    tokens = []
    for item in content:
        if not isinstance(item, Mapping) or not _is_number(item.get("logprob")):
            return None
        alternatives = [alt for alt in item.get("top_logprobs") or [] if isinstance(alt, Mapping)]
        top = {
            str(alt.get("token", "")): float(alt["logprob"]) for alt in alternatives if _is_number(alt.get("logprob"))
        }
        tokens.append(TokenLogprobs(token=str(item.get("token", "")), logprob=float(item["logprob"]), top=top))
    return tokens


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ChatReply:
    """What `ask` returns: the reply's text, its token log-probabilities when asked for, and the gateway's record
    (tokens, cost, recorded latency, cached or not)."""

    text: str
    logprobs: list[TokenLogprobs] | None
    result: CallResult


class OpenAIChat(SDKClient):
    """`engram.LLM` over an OpenAI-compatible chat-completions endpoint, through the gateway, bounded concurrency."""

    def __init__(
        self,
        gateway: Gateway,
        base_url: str,
        *,
        timeout_s: float = 60.0,
        max_concurrency: int = 4,
        retry: RetryPolicy = RetryPolicy(),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.gateway = gateway
        self.base_url = base_url
        self.target = server_identity(base_url)
        self.timeout_s = timeout_s
        self.retry = retry
        self.http_statuses: dict[str, int] = {}
        self._environ = environ
        self._max_concurrency = max_concurrency
        self._loop = LoopThread("openai-client")
        self._client: Poster | None = None
        self._headers: dict[str, str] = {}
        self._semaphore: asyncio.Semaphore | None = None

    # -- engram's LLM protocol ---------------------------------------------------------------------------------

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        body = chat_body(model, system, messages, max_tokens, temperature)
        result = self.chat(body, purpose=role)
        return Completion(
            text=reply_text(result.body),
            model=result.model,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            cached=result.cached,
        )

    # -- chat calls with log-probabilities ---------------------------------------------------------------------

    def ask(
        self,
        model: str,
        messages: list[dict],
        *,
        purpose: str,
        max_tokens: int,
        temperature: float | None = 0.0,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        extra: Mapping[str, Any] | None = None,
        replicate: int = 0,
        check: ReplyCheck | None = None,
    ) -> ChatReply:
        """One chat completion; with `logprobs=True` (and `top_logprobs=n`) the reply carries each generated
        token's log-probability and its n most likely alternatives. `extra` adds body fields as sent (e.g. vLLM's
        `guided_choice`); every field is part of the cache key. `check` sees every fresh reply before it is
        cached and may refuse it by raising."""
        return self._loop.run(
            self.aask(
                model,
                messages,
                purpose=purpose,
                max_tokens=max_tokens,
                temperature=temperature,
                logprobs=logprobs,
                top_logprobs=top_logprobs,
                extra=extra,
                replicate=replicate,
                check=check,
            )
        )

    async def aask(
        self,
        model: str,
        messages: list[dict],
        *,
        purpose: str,
        max_tokens: int,
        temperature: float | None = 0.0,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        extra: Mapping[str, Any] | None = None,
        replicate: int = 0,
        check: ReplyCheck | None = None,
    ) -> ChatReply:
        """`ask` from any event loop (concurrent asks share the client's semaphore)."""
        body = chat_body(model, None, messages, max_tokens, temperature)
        if logprobs:
            body["logprobs"] = True
        if top_logprobs is not None:
            body["top_logprobs"] = top_logprobs
        body.update(extra or {})
        result = await self.achat(body, purpose=purpose, replicate=replicate, check=check)
        return ChatReply(text=reply_text(result.body), logprobs=token_logprobs(result.body), result=result)

    # -- raw calls (any chat-completions body) -----------------------------------------------------------------

    def chat(
        self, body: Mapping[str, Any], purpose: str, replicate: int = 0, finish: ReplyFinish | None = None
    ) -> CallResult:
        return self._loop.run(self.achat(body, purpose, replicate, finish=finish))

    def chat_here(
        self,
        body: Mapping[str, Any],
        purpose: str,
        replicate: int = 0,
        finish: ReplyFinish | None = None,
        caller: str = "",
    ) -> CallResult:
        """`chat` answered on the calling thread when the cache holds the call; only a miss crosses to the client's
        loop. For callers that are threads already (the gateway endpoint's request threads): a hit then costs no
        hand-over between threads, which on a loaded machine is most of a replayed call's time. `caller` is
        recorded on the request, never keyed (CallRequest.caller)."""
        request = CallRequest(
            PROVIDER, ENDPOINT, str(body["model"]), dict(body), purpose, replicate, self.target, caller
        )

        def live(missing: CallRequest) -> LiveResponse:
            response = self._loop.run(self._send(missing))
            return replace(response, body=finish(response.body)) if finish is not None else response

        return self.gateway.call(request, live)

    async def achat(
        self,
        body: Mapping[str, Any],
        purpose: str,
        replicate: int = 0,
        check: ReplyCheck | None = None,
        finish: ReplyFinish | None = None,
    ) -> CallResult:
        """One call of `body` as is. `check` may refuse a fresh reply; `finish` turns a fresh reply body into what
        is cached and served (the gateway endpoint's translations, which name themselves in it)."""
        request = CallRequest(PROVIDER, ENDPOINT, str(body["model"]), dict(body), purpose, replicate, self.target)

        async def live(missing: CallRequest) -> LiveResponse:
            response = await self._loop.run_async(self._send(missing))
            if check is not None:
                check(response.body)  # raising here keeps the reply out of the cache
            if finish is not None:
                response = replace(response, body=finish(response.body))
            return response

        return await self.gateway.acall(request, live)

    # -- the wire ----------------------------------------------------------------------------------------------

    def api_key(self) -> str:
        env = os.environ if self._environ is None else self._environ
        key = env.get(KEY_ENV)
        if key:
            return key
        if is_local(self.base_url):
            return LOCAL_PLACEHOLDER_KEY
        raise OpenAIRefused(
            f"environment {KEY_ENV}: expected a key to call {self.target} live, found none (only a server on "
            f"127.0.0.1/localhost is called without one)"
        )

    def _wire(self) -> tuple[Poster, dict[str, str]]:
        """The connection pool to the server (made on the client's loop, where it is used) and the headers."""
        if self._client is None:
            self._headers = {
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": f"Bearer {self.api_key()}",
            }
            self._client = poster_for(self.base_url, self.timeout_s)
            self._semaphore = asyncio.Semaphore(self._max_concurrency)
        return self._client, self._headers

    async def _send(self, request: CallRequest) -> LiveResponse:
        client, headers = self._wire()
        payload = json.dumps(request.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        body, latency = await self._with_retries(request, lambda: client.post(PATH, payload, headers))
        input_tokens, output_tokens = usage_tokens(body.get("usage"))
        return LiveResponse(
            body=body,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=str(body.get("model") or request.model),
            latency_ms=latency,
        )

    async def _with_retries(self, request: CallRequest, send: Any) -> tuple[dict[str, Any], float]:
        where = f"openai {request.endpoint} at {self.target} ({request.model}, {request.purpose})"

        async def attempt() -> dict[str, Any]:
            try:
                reply = await send()
            except Exception as exc:
                retry = transport_failure(exc)
                if retry is None:
                    raise
                raise retry from None
            failure = status_failure(reply, where)
            if failure is not None:
                outcome, error = failure
                if outcome is not None:
                    self._count(outcome)
                raise error
            body = completion_body(reply.body, where)
            if isinstance(body, Exception):
                self._count("malformed")
                raise body
            self._count("200")
            return body

        return await self._run_retried(attempt, where, OpenAIUnavailable, OpenAIRateLimited)


def chat_body(
    model: str, system: str | None, messages: list[dict], max_tokens: int, temperature: float | None
) -> dict[str, Any]:
    """The request body: the system prompt as the first message, as the chat API takes it."""
    sent = ([{"role": "system", "content": system}] if system is not None else []) + list(messages)
    body: dict[str, Any] = {"model": model, "messages": sent, "max_tokens": max_tokens}
    if temperature is not None:
        body["temperature"] = temperature
    return body
