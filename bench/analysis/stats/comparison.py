"""A whole paired comparison of two systems in one call: the figures `engram-bench compare` prints and the paper's
held-out table uses (Δ, per-question CI, conversation-cluster and unclustered bootstraps, exact McNemar, MDE),
overall and per group (category, conversation).

Inputs are pandas Series of 0/1 correctness indexed by question id, plus a Series mapping question id → cluster
(conversation). Pure: no files, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.analysis.stats.bootstrap import DEFAULT_DRAWS, BootstrapInterval, cluster_bootstrap, item_bootstrap
from bench.analysis.stats.intervals import observed_mde
from bench.analysis.stats.mcnemar import Discordance, discordance, mcnemar_exact_p
from bench.analysis.stats.paired import Interval, paired_differences, per_question_ci
from bench.errors import ResultError


@dataclass(frozen=True)
class PairedComparison:
    """Everything about A − B on one set of questions; differences as fractions (use `.points()` to print)."""

    n: int
    accuracy_a: float
    accuracy_b: float
    difference: Interval  # mean d with the per-question 95% CI
    cluster: BootstrapInterval | None  # None when there is a single cluster (nothing to resample between)
    unclustered: BootstrapInterval
    table: Discordance
    mcnemar_p: float
    mde: float | None  # minimum detectable effect at 80% power; None when d has no spread


def compare_paired(
    a: pd.Series,
    b: pd.Series,
    clusters: pd.Series | None = None,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> PairedComparison:
    """Compare two sides question by question. `clusters` maps question id → conversation; both bootstraps use the
    same seed, recorded in their results."""
    d = paired_differences(a, b)
    table = discordance(a, b)
    cluster_interval = None
    if clusters is not None:
        labels = clusters.reindex(d.index).to_numpy()
        if pd.isna(labels).any():
            missing = d.index[pd.isna(labels)][0]
            raise ResultError(f"clusters: expected a conversation for every question, found none for {missing!r}")
        if np.unique(labels).size > 1:
            cluster_interval = cluster_bootstrap(d, labels, draws=draws, seed=seed)
    spread = d.size > 1 and float(d.std(ddof=1)) > 0
    return PairedComparison(
        n=int(d.size),
        accuracy_a=float(a.astype(float).mean()),
        accuracy_b=float(b.astype(float).mean()),
        difference=per_question_ci(d),
        cluster=cluster_interval,
        unclustered=item_bootstrap(d, draws=draws, seed=seed),
        table=table,
        mcnemar_p=mcnemar_exact_p(table.only_a, table.only_b),
        mde=observed_mde(d) if spread else None,
    )


# Below this many questions a group's interval says little; `compare` flags such rows.
SMALL_GROUP_N = 10


def compare_by_group(a: pd.Series, b: pd.Series, groups: pd.Series) -> pd.DataFrame:
    """One row per group (e.g. category or conversation): n, accuracies, Δ with per-question CI, discordant counts
    and McNemar p. Fractions, not points. The sides must already hold the same questions.

    A mean of 0/±1 differences lies in [−1, 1], but the normal interval of a small group can reach past it (24
    questions at +0.6 give [+0.12, +1.08]): the bounds are clipped to that range, and ``clipped`` says where."""
    d = paired_differences(a, b)
    labels = groups.reindex(d.index)
    rows = []
    for group, ids in d.groupby(labels, sort=True).groups.items():
        side_a, side_b = a.loc[ids], b.loc[ids]
        raw = per_question_ci(d.loc[ids])
        ci = raw.clipped(-1.0, 1.0)
        table = discordance(side_a, side_b)
        rows.append(
            {
                "group": group,
                "n": len(ids),
                "accuracy_a": float(side_a.astype(float).mean()),
                "accuracy_b": float(side_b.astype(float).mean()),
                "delta": ci.estimate,
                "ci_low": ci.low,
                "ci_high": ci.high,
                "clipped": ci != raw,
                "only_a": table.only_a,
                "only_b": table.only_b,
                "mcnemar_p": mcnemar_exact_p(table.only_a, table.only_b),
            }
        )
    return pd.DataFrame(rows)
