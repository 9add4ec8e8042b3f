"""Model clients behind the gateway: Anthropic (chat + token counting), TypeSafe Jev (typed decisions), and thin
wrappers that route engram's offline stand-ins through the same cache.

Import the concrete classes from their modules (`bench.models.clients.jev.JevDecider`, ...); this package keeps imports
lazy so that loading one client never pulls in another's SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AnthropicLLM": "bench.models.clients.anthropic",
    "AnthropicTokenCounter": "bench.models.clients.anthropic",
    "JevDecider": "bench.models.clients.jev",
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
