"""Percentile bootstraps: the two-stage conversation-cluster bootstrap of a paired difference, and the item bootstrap
of a mean (used for Brier and NLL intervals).

Cluster bootstrap (article §4; original `heldout_report.py`): each draw resamples the G conversations with
replacement, then, inside every drawn conversation, resamples as many questions as it has, with replacement; the
statistic is the mean of all sampled d. With G = 4 this is a robustness check, not a primary interval, so every
printed cluster interval states G and is shown beside the unclustered one (the ordinary item bootstrap, which is the same
resample with every question its own cluster).

Percentile interval: the original sorted the 10,000 draws and took elements [250] and [9749]; `np.quantile` with
method "higher" at α/2 and "lower" at 1 − α/2 gives exactly those order statistics, and the generalisation to other
draw counts.

Seeding: the original seeded once and let the k=20 loop consume draws after the k=3 loop, so its k=20 intervals
depend on how many draws k=3 took. Here each comparison gets its own generator, seeded by the caller
(`comparison_seed` derives a stable seed from the comparison's name), and the seed is returned with the interval
so it can be recorded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.errors import ResultError

DEFAULT_DRAWS = 10_000
# Draws are generated in chunks so memory stays bounded (~610 questions × 1,000 draws of int64 per chunk).
_CHUNK_DRAWS = 1_000


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval and what produced it."""

    estimate: float
    low: float
    high: float
    clusters: int
    draws: int
    seed: int

    def points(self) -> BootstrapInterval:
        return BootstrapInterval(
            100 * self.estimate, 100 * self.low, 100 * self.high, self.clusters, self.draws, self.seed
        )


def comparison_seed(label: str) -> int:
    """A stable 32-bit seed from a comparison's name, so each comparison's draws are independent of the others'."""
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:4], "big")


def paired_seed(a_arm: str, a_k: int | None, b_arm: str, b_k: int | None) -> int:
    """The seed of the bootstrap of one paired comparison, A − B, named by each side's arm and k only: the paper
    build and `engram-bench compare` both call this, so they publish the same interval for the same comparison
    (the stack is left out because a comparison's files name their stack, and the two must agree on the key)."""
    return comparison_seed(f"{a_arm} k={a_k} vs {b_arm} k={b_k}")


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The original's order statistics: sorted draws [⌈α/2·(N−1)⌉] and [⌊(1−α/2)·(N−1)⌋] ([250], [9749] for 10,000)."""
    alpha = 1.0 - level
    low = float(np.quantile(draws, alpha / 2, method="higher"))
    high = float(np.quantile(draws, 1 - alpha / 2, method="lower"))
    return low, high


def _cluster_layout(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values grouped contiguously by cluster, with each cluster's start offset and size."""
    _, codes = np.unique(clusters, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    return values[order], starts, sizes


def _cluster_draw_means(
    grouped: np.ndarray, starts: np.ndarray, sizes: np.ndarray, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Means of `draws` two-stage resamples, vectorised: one flat array of sampled question indices per chunk."""
    n_clusters = sizes.size
    means = np.empty(draws)
    for first in range(0, draws, _CHUNK_DRAWS):
        count = min(_CHUNK_DRAWS, draws - first)
        picked = rng.integers(0, n_clusters, size=(count, n_clusters)).ravel()
        picked_sizes = sizes[picked]
        # Stage two: for each picked cluster, as many uniform positions inside it as it has questions
        # (in place, and summed per draw with reduceat: the same numbers as the plain version, faster).
        positions = rng.random(int(picked_sizes.sum()))
        positions *= np.repeat(picked_sizes.astype(float), picked_sizes)
        index = positions.astype(np.int64)
        index += np.repeat(starts[picked], picked_sizes)
        per_draw_total = picked_sizes.reshape(count, n_clusters).sum(axis=1)
        draw_bounds = np.concatenate(([0], np.cumsum(per_draw_total)[:-1]))
        means[first : first + count] = np.add.reduceat(grouped[index], draw_bounds) / per_draw_total
    return means


def cluster_bootstrap_draws(
    values: np.ndarray | pd.Series, clusters: np.ndarray | pd.Series, draws: int = DEFAULT_DRAWS, seed: int = 0
) -> np.ndarray:
    """The bootstrap distribution (one mean per draw) of the two-stage cluster resample."""
    vals = np.asarray(values, dtype=float)
    labels = np.asarray(clusters)
    if vals.size == 0 or vals.shape != labels.shape:
        raise ResultError(
            f"cluster bootstrap: expected one cluster label per value and at least one value, "
            f"found {vals.size} values and {labels.size} labels"
        )
    grouped, starts, sizes = _cluster_layout(vals, labels)
    return _cluster_draw_means(grouped, starts, sizes, draws, np.random.default_rng(seed))


def cluster_bootstrap(
    values: np.ndarray | pd.Series,
    clusters: np.ndarray | pd.Series,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapInterval:
    """Percentile interval of the mean of `values` under the two-stage cluster bootstrap; G = number of clusters."""
    vals = np.asarray(values, dtype=float)
    samples = cluster_bootstrap_draws(vals, clusters, draws=draws, seed=seed)
    low, high = percentile_interval(samples, level)
    n_clusters = int(np.unique(np.asarray(clusters)).size)
    return BootstrapInterval(float(vals.mean()), low, high, n_clusters, draws, seed)


def item_bootstrap_draws(values: np.ndarray | pd.Series, draws: int = DEFAULT_DRAWS, seed: int = 0) -> np.ndarray:
    """The bootstrap distribution of a mean over item resamples (n items drawn with replacement), vectorised."""
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        raise ResultError("item bootstrap: expected at least one value, found none")
    rng = np.random.default_rng(seed)
    means = np.empty(draws)
    chunk = max(1, min(draws, 5_000_000 // vals.size))
    for first in range(0, draws, chunk):
        count = min(chunk, draws - first)
        means[first : first + count] = vals[rng.integers(0, vals.size, size=(count, vals.size))].mean(axis=1)
    return means


def item_bootstrap(
    values: np.ndarray | pd.Series, draws: int = DEFAULT_DRAWS, seed: int = 0, level: float = 0.95
) -> BootstrapInterval:
    """Percentile interval of a mean under item resampling: the unclustered interval printed beside a cluster one
    (G = n), and the Brier/NLL intervals of the calibration tables."""
    vals = np.asarray(values, dtype=float)
    low, high = percentile_interval(item_bootstrap_draws(vals, draws=draws, seed=seed), level)
    return BootstrapInterval(float(vals.mean()), low, high, vals.size, draws, seed)
