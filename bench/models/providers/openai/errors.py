"""The openai SDK's exceptions in the provider error tree (`bench.errors`): what each one means for a call to an
OpenAI-compatible server.

Timeouts, connection errors and the retryable statuses (429, 5xx) are tried again (`RetryableFailure`, waiting as
long as `retry-after-ms` or `retry-after` asks); after the last attempt the client raises `OpenAIRateLimited` (every
attempt a 429) or `OpenAIUnavailable`. Any other status is a refusal (`OpenAIRefused`, the run stops); a reply that
is not JSON, or not a chat completion with choices, is `OpenAIMalformedReply`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai

from bench.errors import OpenAIMalformedReply, OpenAIRateLimited, OpenAIRefused, OpenAIUnavailable
from bench.models.clients.retry import RETRY_STATUSES, RetryableFailure
from bench.models.redact import quoted

__all__ = [
    "KEY_ENV",
    "OpenAIMalformedReply",
    "OpenAIRateLimited",
    "OpenAIRefused",
    "OpenAIUnavailable",
    "not_a_completion",
    "retry_after",
    "sdk_failure",
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


def sdk_failure(exc: BaseException, where: str) -> tuple[str | None, Exception] | None:
    """(the outcome to count, or None when the retry policy counts it; the exception to raise instead) for an
    exception of one attempt; None for an exception that is not the SDK's (it propagates as it is)."""
    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError: it is one
        return None, RetryableFailure("timeout")
    if isinstance(exc, openai.APIConnectionError):
        return None, RetryableFailure("connection")
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in RETRY_STATUSES:
            return None, RetryableFailure(str(exc.status_code), retry_after(exc.response.headers))
        return str(exc.status_code), OpenAIRefused(
            f"{where}: expected HTTP 200, found {exc.status_code} ({quoted(exc.message)}); check "
            f"{KEY_ENV}, the model name and the request"
        )
    if isinstance(exc, openai.APIResponseValidationError | ValueError):
        return "malformed", OpenAIMalformedReply(
            f"{where}: expected a JSON reply, found an unreadable one ({quoted(str(exc))})"
        )
    return None


def not_a_completion(body: Any, where: str) -> OpenAIMalformedReply | None:
    """The error for a JSON reply that is not a chat completion with at least one choice; None for one that is."""
    if isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]:
        return None
    return OpenAIMalformedReply(
        f"{where}: expected a chat completion with a 'choices' list, found {quoted(str(body)[:80])}"
    )
