"""What every provider's client shares (the retry policy, the SDK plumbing, the client loop) and the thin wrappers
that route engram's offline stand-ins through the cache. Each provider's own client lives in its folder
(`bench.models.providers.<name>.client`); the names below are kept importable from here, lazily, so that loading
one client never pulls in another's SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AnthropicLLM": "bench.models.providers.anthropic.client",
    "AnthropicTokenCounter": "bench.models.providers.anthropic.client",
    "JevDecider": "bench.models.providers.jev.client",
    "GatewayDecider": "bench.models.clients.wrappers",
    "GatewayExtractor": "bench.models.clients.wrappers",
    "OfflineLLM": "bench.models.clients.wrappers",
    "TokenCounter": "bench.models.tokens",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bench.models.clients' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
