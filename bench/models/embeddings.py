"""Recorded sentence vectors: the embedder's output shipped beside a cache subset, so a replay needs no torch.

`reproduce-dev` replays every model call from `cache/dev/`; the MiniLM vectors were the one model output it still
recomputed (about 5 s to import torch and load the weights, then one encode per new text). A vector file records, for
each text, exactly the float32 vector the embedder returned the first time that text was embedded in the run that
made the committed results, so serving it is bit-identical to recomputing it. A text the file lacks is embedded by
the real MiniLM (loaded then, not before), as in any run.

File: `embeddings.npz` with `texts` (unicode array), `vectors` (float32, n x 384) and `model` (the embedder name).
"""

from __future__ import annotations

import functools
import io
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench import settings
from bench.disk.atomic import write_bytes
from bench.errors import CacheError
from engram import MiniLMEmbedder

if TYPE_CHECKING:
    from engram import Embedder

VECTORS_FILE = "embeddings.npz"


class RecordedEmbedder:
    """The Embedder protocol over recorded vectors, falling back to (and, when recording, learning from) `load()`."""

    def __init__(
        self,
        load: Callable[[], Any],
        vectors: dict[str, np.ndarray] | None = None,
        *,
        name: str = "all-MiniLM-L6-v2",
        dim: int = 384,
    ) -> None:
        self._load = load
        self._inner: Any = None
        self._vectors: dict[str, np.ndarray] = dict(vectors or {})
        self._order: list[str] = list(self._vectors)
        self._lock = threading.Lock()
        self.name = name
        self.dim = dim
        self.served = 0  # texts answered from the recording
        self.computed = 0  # texts the real embedder had to compute

    @classmethod
    def from_file(cls, path: Path, load: Callable[[], Any]) -> RecordedEmbedder:
        try:
            with np.load(path, allow_pickle=False) as data:
                texts, vectors, model = list(data["texts"]), data["vectors"], str(data["model"])
        except (OSError, KeyError, ValueError) as exc:
            raise CacheError(
                f"{path}: expected recorded vectors (texts, vectors, model), found an unreadable file ({exc}); "
                f"delete it to embed every text afresh"
            ) from None
        if vectors.dtype != np.float32 or vectors.ndim != 2 or len(texts) != len(vectors):
            raise CacheError(f"{path}: expected one float32 row per text, found {vectors.shape} {vectors.dtype}")
        rows = {}
        for text, row in zip(texts, vectors):
            row = np.array(row, dtype=np.float32)
            row.setflags(write=False)
            rows[str(text)] = row
        return cls(load, rows, name=model, dim=int(vectors.shape[1]))

    def _real(self) -> Any:
        if self._inner is None:
            self._inner = self._load()
        return self._inner

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            self.served += len(texts) - sum(1 for t in texts if t in missing)
            if missing:
                fresh = self._real().embed(missing)
                for text, row in zip(missing, fresh):
                    self._vectors[text] = row
                    self._order.append(text)
                self.computed += len(missing)
            return np.stack([self._vectors[t] for t in texts]).astype(np.float32, copy=False)

    def cosine(self, a: str, b: str) -> float:
        vectors = self.embed([a, b])
        return float(vectors[0] @ vectors[1])

    def save(self, path: Path) -> Path:
        """Write every vector this embedder has seen, in first-seen order (for shipping beside a subset)."""
        with self._lock:
            texts = np.array(self._order, dtype=np.str_)
            vectors = np.stack([self._vectors[t] for t in self._order]).astype(np.float32)

        buffer = io.BytesIO()
        np.savez_compressed(buffer, texts=texts, vectors=vectors, model=np.array(self.name))
        return write_bytes(path, buffer.getvalue())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._real(), name)


TORCH_THREADS_ENV = settings.TORCH_THREADS


class _SharedMiniLM(MiniLMEmbedder):
    """engram's MiniLM with torch pinned to the harness's thread count when the model loads (see `shared_minilm`)."""

    def _load(self) -> Any:
        if self._model is None:
            # local import: torch is the run extra; a replay of recorded vectors and the analysis never load it
            import torch

            torch.set_num_threads(settings.current().torch_threads)
        return super()._load()


@functools.cache
def shared_minilm() -> Embedder:
    """The process-wide MiniLM embedder (engram's), loaded on first use only: a run that never embeds (full-context)
    never imports torch, which took seconds of its start-up.

    Torch is pinned to one intra-op thread (override with $ENGRAM_TORCH_THREADS). Two reasons: on this project's
    shared 2-core machines two threads made a single-text encode about 10x slower than one (0.97 s against 0.09 s
    per text under load, measured 2026-12-02), and a fixed thread count keeps float reductions in one order, so
    vectors do not depend on how many cores a machine has.
    """
    return _SharedMiniLM()
