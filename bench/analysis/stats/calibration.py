"""Calibration of a decision model's probabilities: ECE, Brier, NLL, temperature scaling (article §7).

Everything works on plain arrays: `probs` is an (n items × m options) matrix of probabilities, `labels` the index of
each item's gold option. `probability_matrix` builds them from per-item {option: probability} dictionaries, the form
decision logs and `calibration_items.json` carry.

Definitions (the original harness's):
- confidence = the largest probability of an item; the item is correct when that option is the label;
- ECE: 10 equal-width bins with bin index min(9, ⌊confidence·10⌋); Σ_b (n_b/n)·|accuracy_b − mean confidence_b|;
- Brier: Σ over options ∪ {label} of (p_o − 1[o = label])², per item (0 best, 2 worst), averaged;
- NLL: −ln max(p_label, 1e-12), per item, averaged;
- temperature scaling: p^(1/T) renormalised, computed as softmax(ln max(p, 1e-4) / T); one T per decision question,
  fitted by minimising mean NLL over ln T ∈ [ln 0.05, ln 20] with `scipy.optimize.minimize_scalar` (bounded). The
  original used a 61-point grid plus golden-section refinement on the same bracket; both find the same minimum of
  this one-dimensional smooth function to well below the printed precision.
- out-of-sample: a 2-fold cross-fit by item index parity (fit on even items, apply to odd, and vice versa).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import softmax

from bench.analysis.stats.bootstrap import DEFAULT_DRAWS, BootstrapInterval, item_bootstrap
from bench.errors import ResultError

N_BINS = 10
NLL_FLOOR = 1e-12
TEMPERATURE_FLOOR = 1e-4
LOG_T_BOUNDS = (math.log(0.05), math.log(20.0))


@dataclass(frozen=True)
class ProbabilityTable:
    """Items as arrays: probs (n × m), the option names of the m columns, and each item's label index."""

    probs: np.ndarray
    options: tuple[str, ...]
    labels: np.ndarray


def probability_matrix(distributions: Sequence[Mapping[str, float]], labels: Sequence[str]) -> ProbabilityTable:
    """Stack per-item {option: probability} dicts into a matrix over the union of options (first-seen order, with
    every label included, so Brier sums over options ∪ {label}); an option an item does not list has probability 0."""
    if len(distributions) != len(labels):
        raise ResultError(
            f"calibration items: expected one label per distribution, found {len(distributions)} distributions "
            f"and {len(labels)} labels"
        )
    options: dict[str, None] = {}
    for dist, label in zip(distributions, labels, strict=True):
        options.update(dict.fromkeys(dist))
        options.setdefault(label)
    names = tuple(options)
    column = {name: j for j, name in enumerate(names)}
    probs = np.zeros((len(distributions), len(names)))
    for i, dist in enumerate(distributions):
        for option, p in dist.items():
            probs[i, column[option]] = float(p)
    return ProbabilityTable(probs, names, np.array([column[label] for label in labels], dtype=int))


def _check(probs: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=int)
    if p.ndim != 2 or p.shape[0] == 0 or y.shape != (p.shape[0],):
        raise ResultError(
            f"calibration: expected an (n × m) probability matrix with n ≥ 1 and n labels, "
            f"found shape {p.shape} and {y.size} labels"
        )
    return p, y


def confidences(probs: np.ndarray) -> np.ndarray:
    """π, the probability of the chosen (most probable) option of each item."""
    return np.asarray(probs, dtype=float).max(axis=1)


def correct(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Whether each item's most probable option is its label (ties: the first option in column order)."""
    p, y = _check(probs, labels)
    return p.argmax(axis=1) == y


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = N_BINS) -> float:
    """ECE with equal-width confidence bins: Σ_b (n_b/n)·|accuracy_b − mean confidence_b|."""
    p, y = _check(probs, labels)
    conf = confidences(p)
    hit = correct(p, y).astype(float)
    index = np.minimum((conf * bins).astype(int), bins - 1)
    counts = np.bincount(index, minlength=bins)
    gap = np.abs(np.bincount(index, weights=hit, minlength=bins) - np.bincount(index, weights=conf, minlength=bins))
    # Σ_b (n_b/n)·|Σhit/n_b − Σconf/n_b| = Σ_b |Σhit − Σconf| / n; empty bins contribute 0.
    return float(gap[counts > 0].sum() / y.size)


def brier_scores(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-item Brier score: Σ_o (p_o − 1[o = label])² over every column (0 best, 2 worst)."""
    p, y = _check(probs, labels)
    onehot = np.zeros_like(p)
    onehot[np.arange(y.size), y] = 1.0
    return ((p - onehot) ** 2).sum(axis=1)


def nll_scores(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-item negative log-likelihood −ln max(p_label, 1e-12)."""
    p, y = _check(probs, labels)
    return -np.log(np.maximum(p[np.arange(y.size), y], NLL_FLOOR))


def with_temperature(probs: np.ndarray, temperature: float) -> np.ndarray:
    """p^(1/T) renormalised, as softmax(ln max(p, 1e-4)/T); T > 1 flattens, T < 1 sharpens."""
    logits = np.log(np.maximum(np.asarray(probs, dtype=float), TEMPERATURE_FLOOR))
    return softmax(logits / temperature, axis=1)


def fit_temperature(probs: np.ndarray, labels: np.ndarray) -> float:
    """The T minimising mean NLL of the tempered probabilities, searched over ln T ∈ [ln 0.05, ln 20]; no items → 1."""
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=int)
    if p.ndim != 2 or p.shape[0] == 0:
        return 1.0

    def mean_nll(log_t: float) -> float:
        return float(nll_scores(with_temperature(p, math.exp(log_t)), y).mean())

    best = minimize_scalar(mean_nll, bounds=LOG_T_BOUNDS, method="bounded", options={"xatol": 1e-6})
    return float(math.exp(best.x))


def cross_fit_probs(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Out-of-sample tempered probabilities: items at even indices use the T fitted on odd ones, and vice versa."""
    p, y = _check(probs, labels)
    even = np.arange(y.size) % 2 == 0
    tempered = np.empty_like(p)
    for target, source in ((even, ~even), (~even, even)):
        if target.any():
            tempered[target] = with_temperature(p[target], fit_temperature(p[source], y[source]))
    return tempered


@dataclass(frozen=True)
class CalibrationSummary:
    """One row of the calibration table for one (label set, decision question, model)."""

    n: int
    accuracy: float
    mean_confidence: float
    ece: float
    brier: float
    nll: float
    temperature: float
    ece_at_temperature: float
    cross_fit_ece: float


def calibration_summary(probs: np.ndarray, labels: np.ndarray) -> CalibrationSummary:
    """Raw scores, the fitted temperature with its in-sample ECE, and the 2-fold cross-fit ECE."""
    p, y = _check(probs, labels)
    temperature = fit_temperature(p, y)
    return CalibrationSummary(
        n=int(y.size),
        accuracy=float(correct(p, y).mean()),
        mean_confidence=float(confidences(p).mean()),
        ece=expected_calibration_error(p, y),
        brier=float(brier_scores(p, y).mean()),
        nll=float(nll_scores(p, y).mean()),
        temperature=temperature,
        ece_at_temperature=expected_calibration_error(with_temperature(p, temperature), y),
        cross_fit_ece=expected_calibration_error(cross_fit_probs(p, y), y),
    )


def score_intervals(
    probs: np.ndarray, labels: np.ndarray, seed: int = 0, draws: int = DEFAULT_DRAWS
) -> dict[str, BootstrapInterval]:
    """Item-bootstrap percentile intervals of mean Brier and mean NLL (10,000 resamples by default)."""
    return {
        "brier": item_bootstrap(brier_scores(probs, labels), draws=draws, seed=seed),
        "nll": item_bootstrap(nll_scores(probs, labels), draws=draws, seed=seed),
    }
