"""The conversation-cluster bootstrap resamples whole conversations, then questions inside each one."""

from __future__ import annotations

import numpy as np
import pytest

import bench.analysis.stats.bootstrap as bootstrap_module
from bench.analysis.stats import (
    cluster_bootstrap,
    cluster_bootstrap_draws,
    comparison_seed,
    item_bootstrap,
    percentile_interval,
)
from bench.errors import BenchError


def test_percentile_interval_takes_the_originals_order_statistics() -> None:
    draws = np.random.default_rng(1).permutation(10_000).astype(float)
    assert percentile_interval(draws) == (250.0, 9749.0)


def test_two_stage_resample_weights_each_drawn_conversation_by_its_size() -> None:
    # Conversation "a" has one question (d=1), "b" has three (d=0). A draw picks two conversations:
    # (a,a) → mean 1, (b,b) → 0, (a,b)/(b,a) → 1/4, with probabilities 1/4, 1/4, 1/2.
    values = np.array([1.0, 0.0, 0.0, 0.0])
    clusters = np.array(["a", "b", "b", "b"])
    draws = cluster_bootstrap_draws(values, clusters, draws=20_000, seed=3)
    assert set(np.unique(draws)) == {0.0, 0.25, 1.0}
    shares = {v: float(np.mean(draws == v)) for v in (0.0, 0.25, 1.0)}
    assert shares[0.25] == pytest.approx(0.5, abs=0.02)
    assert shares[1.0] == pytest.approx(0.25, abs=0.02)


def test_questions_are_resampled_within_a_drawn_conversation() -> None:
    # One conversation only: stage one always draws it, so all the spread comes from stage two.
    values = np.array([1.0, 0.0])
    draws = cluster_bootstrap_draws(values, np.array(["c", "c"]), draws=8_000, seed=5)
    assert set(np.unique(draws)) == {0.0, 0.5, 1.0}
    assert float(np.mean(draws == 0.5)) == pytest.approx(0.5, abs=0.03)


def test_interval_reports_g_draws_and_seed_and_is_reproducible() -> None:
    rng = np.random.default_rng(0)
    values = rng.choice([-1.0, 0.0, 1.0], size=200, p=[0.2, 0.5, 0.3])
    clusters = np.repeat(["c1", "c2", "c3", "c4"], 50)
    first = cluster_bootstrap(values, clusters, draws=2_000, seed=11)
    again = cluster_bootstrap(values, clusters, draws=2_000, seed=11)
    assert first == again
    # Discrete differences can give the same percentiles under another seed; the draws themselves differ.
    assert not np.array_equal(
        cluster_bootstrap_draws(values, clusters, draws=2_000, seed=11),
        cluster_bootstrap_draws(values, clusters, draws=2_000, seed=12),
    )
    assert (first.clusters, first.draws, first.seed) == (4, 2_000, 11)
    assert first.low < first.estimate < first.high
    assert first.estimate == pytest.approx(values.mean())


def test_unclustered_interval_has_one_cluster_per_question_and_is_not_wider_here() -> None:
    rng = np.random.default_rng(2)
    # Conversations with very different means: clustering must widen the interval.
    values = np.concatenate([rng.choice([0.0, 1.0], 100, p=p) for p in ([0.9, 0.1], [0.1, 0.9], [0.5, 0.5])])
    clusters = np.repeat(["x", "y", "z"], 100)
    clustered = cluster_bootstrap(values, clusters, draws=4_000, seed=1)
    unclustered = item_bootstrap(values, draws=4_000, seed=1)
    assert unclustered.clusters == 300
    assert (unclustered.high - unclustered.low) < (clustered.high - clustered.low)


def test_constant_differences_give_a_degenerate_interval() -> None:
    result = cluster_bootstrap(np.ones(12), np.repeat(["a", "b", "c"], 4), draws=500, seed=0)
    assert (result.low, result.estimate, result.high) == (1.0, 1.0, 1.0)


def test_comparison_seeds_are_stable_and_distinct() -> None:
    assert comparison_seed("engram-k3 vs mem0-k3") == comparison_seed("engram-k3 vs mem0-k3")
    assert comparison_seed("engram-k3 vs mem0-k3") != comparison_seed("engram-k20 vs mem0-k20")
    assert 0 <= comparison_seed("x") < 2**32


def test_mismatched_labels_are_refused() -> None:
    with pytest.raises(BenchError, match="one cluster label per value"):
        cluster_bootstrap(np.ones(3), np.array(["a", "b"]))


def test_seeded_draws_stay_the_same_across_versions() -> None:
    # The paper commits bootstrap intervals computed with these samplers (paper/numbers.json); a change that draws
    # different resamples for the same seed silently changes committed numbers, so it must show up here first.
    rng = np.random.default_rng(0)
    values = rng.choice([-1.0, 0.0, 1.0], size=60, p=[0.2, 0.5, 0.3])
    clusters = np.repeat(["a", "b", "c"], [10, 20, 30])
    cluster_draws = cluster_bootstrap_draws(values, clusters, draws=1000, seed=5)
    assert cluster_draws[:3] == pytest.approx([1 / 7, 2 / 35, -1 / 60])
    assert float(cluster_draws.sum()) == pytest.approx(105.10257936507936, abs=1e-9)
    item_draws = bootstrap_module.item_bootstrap_draws(rng.random(20), draws=1000, seed=5)
    assert float(item_draws.sum()) == pytest.approx(537.3622670229695, abs=1e-9)
