"""A tiny deterministic embedder for tests and benchmarks: a hashed bag of words, L2-normalised.

Not a language model: two texts are close exactly when they share words. It makes unit tests run in milliseconds
and never needs model weights. Real runs use `engram.MiniLMEmbedder`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["HashEmbedder"]

_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    name = "hash-bow-test"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def _bucket(self, token: str) -> int:
        return int.from_bytes(hashlib.md5(token.encode("utf-8")).digest()[:4], "little") % self.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                out[row, self._bucket(token)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0.0, 1.0, norms)
