"""The one redaction rule: no key or Authorization value ever reaches an error message, a log line or a result.

A server's reply quoted in an error (a 401 body that echoes the request's headers, a proxy's HTML page) may carry the
key that was sent. Every client passes quoted text through `redact`, and the CLI passes every message it prints.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

MASK = "[redacted]"
# Environment variables whose values are secrets wherever they appear.
SECRET_ENV = ("ANTHROPIC_API_KEY", "TYPESAFE_API_KEY")
_PATTERNS = (
    # header or field named like a credential, then its value: Authorization: Bearer x, "x-api-key": "y", api_key=z
    re.compile(
        r"(?i)(\b(?:authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token|secret)\b[\"']?"
        r"\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+)?[^\s\"',;}]+"
    ),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # key-shaped tokens on their own: sk-ant-..., sk-...
    re.compile(r"()\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}"),
)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-looking value replaced by [redacted]."""
    env = os.environ if environ is None else environ
    for name in SECRET_ENV:
        value = env.get(name) or ""
        if len(value) >= 4:
            text = text.replace(value, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    return text


def quoted(text: str, limit: int = 160) -> str:
    """A server's words as an error quotes them: redacted first (so no key survives half-shown), one line, cut."""
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[:limit] + "..."
