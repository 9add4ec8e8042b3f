"""The echo provider's failures, in the one provider error tree (`bench.errors`): each kind of failure is one class
that names the provider. A chat provider's "unavailable" kinds are also engram's `LLMError`, so engram degrades the
write instead of stopping the run; a refusal stops the run. A provider with an SDK maps the SDK's exceptions here
(timeouts and 5xx: retry, then unavailable; 429 every time: rate-limited; 4xx: refused; unreadable: malformed)."""

from __future__ import annotations

from typing import Any

from bench.errors import ProviderMalformedReply, ProviderRefused, ProviderUnavailable
from engram import LLMError


class EchoUnavailable(ProviderUnavailable, LLMError):
    provider = "echo"


class EchoMalformedReply(EchoUnavailable, ProviderMalformedReply):
    """Never raised by the toy (its reply is always text); a real provider raises it on an unreadable reply."""


class EchoRefused(ProviderRefused):
    provider = "echo"


def refused_when_empty(messages: list[dict[str, Any]], where: str) -> None:
    """The echo "server" refuses a request with no user line to echo (as an API refuses a malformed request)."""
    if not any(m.get("role") == "user" and str(m.get("content", "")).strip() for m in messages):
        raise EchoRefused(f"{where}: expected a user message with text to echo, found none")
