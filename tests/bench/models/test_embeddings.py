"""Recorded vectors replay bit for bit, and the real model loads only for a text the recording lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.models.embeddings import VECTORS_FILE, RecordedEmbedder, shared_minilm
from bench.vocab import DEV_CACHE_SUBSET

REPO = Path(__file__).resolve().parents[3]


class Counting:
    """An embedder double that says how often it was asked."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[float(len(t)), 1.0, 0.0] for t in texts], dtype=np.float32)


def test_a_recording_replays_bit_for_bit_without_loading_the_model(tmp_path: Path) -> None:
    model = Counting()
    recorder = RecordedEmbedder(lambda: model, dim=3)
    first = recorder.embed(["caroline moved", "to boston", "caroline moved"])
    path = recorder.save(tmp_path / VECTORS_FILE)

    loads: list[int] = []
    replay = RecordedEmbedder.from_file(path, lambda: loads.append(1) or Counting())
    assert replay.embed(["to boston", "caroline moved"]).tobytes() == first[[1, 0]].tobytes()
    assert loads == [] and model.calls == [["caroline moved", "to boston"]]
    replay.embed(["a text nobody recorded"])
    assert loads == [1] and replay.computed == 1


def test_the_shipped_dev_vectors_are_what_minilm_computes() -> None:
    replay = RecordedEmbedder.from_file(DEV_CACHE_SUBSET / VECTORS_FILE, shared_minilm)
    texts = list(replay._vectors)[:3]
    recorded = np.stack([replay._vectors[t] for t in texts])
    fresh = np.stack([shared_minilm().embed([t])[0] for t in texts])  # one text at a time, as the runs embedded
    assert replay.name == shared_minilm().name and recorded.shape == (3, 384)
    assert np.allclose(recorded, fresh, atol=1e-6)


def test_asking_for_the_shared_embedder_loads_no_torch_until_a_text_is_embedded() -> None:
    probe = (
        "import sys; from bench.models.embeddings import shared_minilm; e = shared_minilm(); "
        "print('torch' in sys.modules, e.dim)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "384"]
