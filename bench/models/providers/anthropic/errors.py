"""The anthropic SDK's exceptions in the provider error tree (`bench.errors`): what each one means for a call.

Timeouts, connection errors and the retryable statuses (429, 5xx, 529) are tried again (`RetryableFailure`); after
the last attempt the client raises `AnthropicRateLimited` (every attempt a 429) or `AnthropicUnavailable`. Any other
status is a refusal (`AnthropicRefused`, the run stops); a reply the SDK cannot read is `AnthropicMalformedReply`.
"""

from __future__ import annotations

import anthropic

from bench.errors import AnthropicMalformedReply, AnthropicRateLimited, AnthropicRefused, AnthropicUnavailable
from bench.models.clients.retry import RETRY_STATUSES, RetryableFailure
from bench.models.redact import quoted

__all__ = [
    "AnthropicMalformedReply",
    "AnthropicRateLimited",
    "AnthropicRefused",
    "AnthropicUnavailable",
    "sdk_failure",
]


def sdk_failure(exc: BaseException, where: str) -> tuple[str | None, Exception] | None:
    """(the outcome to count, or None when the retry policy counts it; the exception to raise instead) for an
    exception of one attempt; None for an exception that is not the SDK's (it propagates as it is)."""
    if isinstance(exc, anthropic.APITimeoutError):  # before APIConnectionError: it is one
        return None, RetryableFailure("timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return None, RetryableFailure("connection")
    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code in RETRY_STATUSES:
            return None, RetryableFailure(str(exc.status_code), exc.response.headers.get("retry-after"))
        return str(exc.status_code), AnthropicRefused(
            f"{where}: expected HTTP 200, found {exc.status_code} ({quoted(exc.message)}); check "
            f"ANTHROPIC_API_KEY and the request"
        )
    if isinstance(exc, anthropic.APIResponseValidationError | ValueError):
        return "malformed", AnthropicMalformedReply(
            f"{where}: expected a JSON reply, found an unreadable one ({quoted(str(exc))})"
        )
    return None
