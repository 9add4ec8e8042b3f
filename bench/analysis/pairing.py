"""One paired comparison of two arms: their per-question outcomes joined by question id, and every paired figure
drawn from that join.

`compare` (the judge label), `compare --metric` (a graded metric) and the paper's paired numbers (v1's held-out
comparisons, v3's tests) all start here, so the join, the rule for a question one side lacks and the statistics are
written once. An outcome is any number per question: 0/1 for the judge label, 0..1 for a graded metric.

The missing-question policy is explicit: `STRICT` (the default) refuses two sides whose question ids differ, naming
the first id found on one side only, because an unpaired question silently dropped changes what is compared;
`SHARED` keeps the questions both sides hold (for a peer's imported results, which rarely answer exactly ours).

Every method calls the same `bench.analysis.stats` function, with the same arguments, that the four places used to
call themselves: the numbers are unchanged to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from bench.analysis.stats.bootstrap import DEFAULT_DRAWS, BootstrapInterval, cluster_bootstrap, item_bootstrap
from bench.analysis.stats.comparison import PairedComparison, compare_by_group, compare_paired
from bench.analysis.stats.mcnemar import Discordance, discordance, mcnemar_exact_p
from bench.analysis.stats.noninferiority import DEFAULT_MARGIN, NonInferiority, noninferiority
from bench.analysis.stats.paired import Interval, paired_differences, per_question_ci, require_same_questions
from bench.errors import QuestionSetMismatch, ResultError

__all__ = ["SHARED", "STRICT", "GradedComparison", "MissingPolicy", "Pairing"]

MissingPolicy = Literal["strict", "shared"]
STRICT: MissingPolicy = "strict"
SHARED: MissingPolicy = "shared"


@dataclass(frozen=True)
class GradedComparison:
    """A − B on a graded metric (no discordant pairs): each side's mean, Δ with the per-question CI, the two
    bootstraps and the Wilcoxon signed-rank p (None when every difference is zero)."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    difference: Interval
    cluster: BootstrapInterval | None
    unclustered: BootstrapInterval
    wilcoxon_p: float | None


@dataclass(frozen=True)
class Pairing:
    """Two sides' outcomes per question id (each a Series named after its side, for messages), joined under a
    missing-question policy, with the conversation of each question when known (the cluster of the bootstrap)."""

    a: pd.Series
    b: pd.Series
    clusters: pd.Series | None = None
    policy: MissingPolicy = STRICT
    dropped: tuple[int, int] = field(default=(0, 0))  # questions only A / only B held (SHARED policy only)

    @classmethod
    def join(
        cls, a: pd.Series, b: pd.Series, clusters: pd.Series | None = None, policy: MissingPolicy = STRICT
    ) -> Pairing:
        """Join A and B by question id; STRICT refuses differing question sets (`QuestionSetMismatch`, one line
        naming the first unpaired id), SHARED keeps the common questions and records how many each side lost."""
        if policy == SHARED:
            common = a.index.intersection(b.index)
            if not len(common):
                raise QuestionSetMismatch(
                    f"question sets differ: expected {a.name or 'A'} and {b.name or 'B'} to share questions, "
                    "found none in common"
                )
            dropped = (len(a) - len(common), len(b) - len(common))
            a, b = a.loc[a.index.isin(common)], b.loc[b.index.isin(common)]
            require_same_questions(a, b)  # still refuses an id answered twice
            return cls(a, b, clusters, policy, dropped)
        if policy != STRICT:
            raise ResultError(f"pairing: expected the policy {STRICT!r} or {SHARED!r}, found {policy!r}")
        require_same_questions(a, b)
        return cls(a, b, clusters, policy)

    # ------------------------------------------------------------------------------------------- the join

    @cached_property
    def d(self) -> pd.Series:
        """d_i = a_i − b_i, sorted by question id."""
        return paired_differences(self.a, self.b)

    @property
    def n(self) -> int:
        return int(self.d.size)

    @property
    def ids(self) -> pd.Index:
        return self.d.index

    def aligned_b(self) -> pd.Series:
        """B's outcomes in A's question order."""
        return self.b.reindex(self.a.index)

    def within(self, ids: pd.Index) -> Pairing:
        """The pairing restricted to `ids` (a group's questions)."""
        return Pairing(self.a.loc[ids], self.b.loc[ids], self.clusters, self.policy)

    # ------------------------------------------------------------------------------------------ statistics

    def difference(self) -> Interval:
        """Mean d with its per-question 95% CI (mean d ± 1.96·sd/√n)."""
        return per_question_ci(self.d)

    def discordance(self) -> Discordance:
        """The four cells of the paired table (0/1 outcomes)."""
        return discordance(self.a, self.b)

    def mcnemar_p(self) -> float:
        table = self.discordance()
        return mcnemar_exact_p(table.only_a, table.only_b)

    def cluster_labels(self) -> np.ndarray:
        """The conversation of each paired question, in d's order."""
        if self.clusters is None:
            raise ResultError("pairing: expected the conversation of each question for a cluster bootstrap, found none")
        return self.clusters.reindex(self.d.index).to_numpy()

    def cluster_bootstrap(self, draws: int = DEFAULT_DRAWS, seed: int = 0) -> BootstrapInterval:
        """The conversation-cluster bootstrap of mean d, whatever the number of conversations."""
        return cluster_bootstrap(self.d.to_numpy(), self.cluster_labels(), draws=draws, seed=seed)

    def cluster_interval(self, draws: int = DEFAULT_DRAWS, seed: int = 0) -> BootstrapInterval | None:
        """The cluster bootstrap, or None with a single conversation (nothing to resample between)."""
        labels = self.cluster_labels()
        if np.unique(labels).size <= 1:
            return None
        return cluster_bootstrap(self.d, labels, draws=draws, seed=seed)

    def unclustered(self, draws: int = DEFAULT_DRAWS, seed: int = 0) -> BootstrapInterval:
        return item_bootstrap(self.d, draws=draws, seed=seed)

    def noninferiority(
        self, margin: float = DEFAULT_MARGIN, draws: int = DEFAULT_DRAWS, seed: int = 0
    ) -> NonInferiority:
        """One-sided non-inferiority of A against B with `margin` (with the conversation bound when known)."""
        return noninferiority(self.a, self.b, margin=margin, clusters=self.clusters, draws=draws, seed=seed)

    # ------------------------------------------------------------------------------------- whole comparisons

    def judged(self, draws: int = DEFAULT_DRAWS, seed: int = 0) -> PairedComparison:
        """Every figure of a 0/1 comparison: Δ, per-question CI, both bootstraps, exact McNemar, MDE."""
        return compare_paired(self.a, self.b, self.clusters, draws=draws, seed=seed)

    def judged_by(self, groups: pd.Series) -> pd.DataFrame:
        """One row per group (category, conversation) of a 0/1 comparison (see `compare_by_group`)."""
        return compare_by_group(self.a, self.b, groups)

    def graded(self, metric: str, draws: int = DEFAULT_DRAWS, seed: int = 0) -> GradedComparison:
        """Every figure of a graded-metric comparison (means, Δ with CI, bootstraps, Wilcoxon)."""
        return GradedComparison(
            metric=metric,
            n=self.n,
            mean_a=float(self.a.mean()),
            mean_b=float(self.aligned_b().mean()),
            difference=self.difference(),
            cluster=self.cluster_interval(draws=draws, seed=seed),
            unclustered=self.unclustered(draws=draws, seed=seed),
            wilcoxon_p=_wilcoxon_p(self.d),
        )

    def graded_by(self, groups: pd.Series) -> pd.DataFrame:
        """One row per group of a graded comparison: n, each side's mean, Δ with its per-question CI."""
        d = self.d
        rows = []
        for group, ids in d.groupby(groups.reindex(d.index), sort=True).groups.items():
            ci = per_question_ci(d.loc[ids])
            rows.append(
                {
                    "group": group,
                    "n": len(ids),
                    "mean_a": float(self.a.loc[ids].mean()),
                    "mean_b": float(self.b.loc[ids].mean()),
                    "delta": ci.estimate,
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                }
            )
        return pd.DataFrame(rows)


def _wilcoxon_p(d: pd.Series) -> float | None:
    if not (d != 0).any():
        return None

    return float(wilcoxon(d.to_numpy()).pvalue)
