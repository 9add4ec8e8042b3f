"""Model clients behind the gateway: Anthropic (chat + token counting), TypeSafe Jev (typed decisions), and thin
wrappers that route engram's offline stand-ins through the same cache.

Import the concrete classes from their modules (`bench.clients.jev.JevDecider`, ...); this package keeps imports
lazy so that loading one client never pulls in another's SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AnthropicLLM": "bench.clients.anthropic",
    "AnthropicTokenCounter": "bench.clients.anthropic",
    "JevDecider": "bench.clients.jev",
    "GatewayDecider": "bench.clients.wrappers",
    "GatewayExtractor": "bench.clients.wrappers",
    "OfflineLLM": "bench.clients.wrappers",
    "TokenCounter": "bench.tokens",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bench.clients' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
