"""Jev's HTTP failures (httpx) in the provider error tree (`bench.errors`): what each one means for a request.

Timeouts, transport errors and the retryable statuses (429, 5xx) are tried again (`RetryableFailure`); after the
last attempt the client raises `JevRateLimited` (every attempt a 429) or `JevUnavailable`, both engram's
`DecisionError`, so the write degrades. Any other status than 200 is a refusal (`JevRefused`, the run stops); a body
that is not the JSON with answers the API returns is `JevMalformedReply`.
"""

from __future__ import annotations

import httpx

from bench.errors import JevMalformedReply, JevRateLimited, JevRefused, JevUnavailable
from bench.models.clients.retry import RETRY_STATUSES, RetryableFailure
from bench.models.redact import quoted

__all__ = [
    "JevMalformedReply",
    "JevRateLimited",
    "JevRefused",
    "JevUnavailable",
    "status_failure",
    "transport_failure",
]


def transport_failure(exc: BaseException) -> RetryableFailure | None:
    """A request that got no response: tried again; None for an exception that is not httpx's transport's."""
    if isinstance(exc, httpx.TimeoutException):  # before TransportError: it is one
        return RetryableFailure("timeout")
    if isinstance(exc, httpx.TransportError):
        return RetryableFailure("connection")
    return None


def status_failure(response: httpx.Response, where: str, model: str) -> Exception | None:
    """A response that is not a 200: tried again (429, 5xx) or refused; None for a 200."""
    if response.status_code in RETRY_STATUSES:
        return RetryableFailure(str(response.status_code), response.headers.get("retry-after"))
    if response.status_code != 200:
        return JevRefused(
            f"{where}: expected HTTP 200, found {response.status_code} "
            f"({quoted(response.text)}); check TYPESAFE_API_KEY and the model name {model!r}"
        )
    return None
