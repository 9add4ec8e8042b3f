"""An OpenAI-compatible server's failures in the provider error tree (`bench.errors`): what each one means for a call.

Timeouts, lost connections and the retryable statuses (429, 5xx) are tried again (`RetryableFailure`, waiting as
long as `retry-after-ms` or `retry-after` asks); after the last attempt the client raises `OpenAIRateLimited` (every
attempt a 429) or `OpenAIUnavailable`. Any other status than 2xx is a refusal (`OpenAIRefused`, the run stops); a
reply that is not JSON, or not a chat completion with choices, is `OpenAIMalformedReply`. The replies and failures
are those of the harness's HTTP client (`bench.models.clients.http1`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bench.errors import OpenAIMalformedReply, OpenAIRateLimited, OpenAIRefused, OpenAIUnavailable
from bench.models.clients.http1 import Reply
from bench.models.clients.retry import RETRY_STATUSES, RetryableFailure
from bench.models.redact import quoted

__all__ = [
    "KEY_ENV",
    "OpenAIMalformedReply",
    "OpenAIRateLimited",
    "OpenAIRefused",
    "OpenAIUnavailable",
    "completion_body",
    "not_a_completion",
    "retry_after",
    "status_failure",
    "transport_failure",
]

KEY_ENV = "OPENAI_API_KEY"


def retry_after(headers: Mapping[str, str]) -> str | None:
    """The wait a 429/503 asks for, in seconds: OpenAI sends `retry-after-ms` beside (or instead of) `retry-after`."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return str(float(millis) / 1000)
        except ValueError:
            pass
    return headers.get("retry-after")


def transport_failure(exc: BaseException) -> RetryableFailure | None:
    """A request that got no reply: tried again; None for an exception that is not the HTTP client's."""
    if isinstance(exc, TimeoutError):  # before ConnectionError's OSError: a TimeoutError is one too
        return RetryableFailure("timeout")
    if isinstance(exc, ConnectionError):
        return RetryableFailure("connection")
    return None


def status_failure(reply: Reply, where: str) -> tuple[str | None, Exception] | None:
    """(the outcome to count, or None when the retry policy counts it; the exception to raise) for a reply that is
    not a 2xx; None for one that is."""
    if 200 <= reply.status < 300:
        return None
    if reply.status in RETRY_STATUSES:
        return None, RetryableFailure(str(reply.status), retry_after(reply.headers))
    return str(reply.status), OpenAIRefused(
        f"{where}: expected HTTP 200, found {reply.status} ({quoted(reply.text)}); check {KEY_ENV}, the model name "
        f"and the request"
    )


def completion_body(raw: bytes, where: str) -> dict[str, Any] | OpenAIMalformedReply:
    """A 2xx reply's body as a chat completion, or the error for one that is not JSON or not a completion."""
    try:
        body = json.loads(raw)
    except ValueError as exc:  # not JSON, or not UTF-8
        return OpenAIMalformedReply(f"{where}: expected a JSON reply, found an unreadable one ({quoted(str(exc))})")
    malformed = not_a_completion(body, where)
    return malformed if malformed is not None else body


def not_a_completion(body: Any, where: str) -> OpenAIMalformedReply | None:
    """The error for a JSON reply that is not a chat completion with at least one choice; None for one that is."""
    if isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]:
        return None
    return OpenAIMalformedReply(
        f"{where}: expected a chat completion with a 'choices' list, found {quoted(str(body)[:80])}"
    )
