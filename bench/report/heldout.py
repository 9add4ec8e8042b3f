"""The held-out results: the six-row table, its paired comparisons, per-category and per-conversation figures,
adversarial and five-category accuracy, and the held-out write costs.

Rows are (arm, k) pooled over the held-out conversations. The token-matched mem0 row is whichever mem0 k the result
files' ``extras.token_match`` names (the matching itself was done by the run, not here). Rows whose files are absent
(e.g. on the offline stack) are skipped together with every comparison that needs them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.analysis.pairing import Pairing
from bench.analysis.stats.bootstrap import paired_seed
from bench.analysis.stats.intervals import ACCURACY_INTERVAL_NOTE, DIFFERENCE_INTERVAL_NOTE, accuracy_interval
from bench.analysis.stats.mcnemar import mcnemar_exact_p
from bench.report.inputs import Loaded, ResultSet
from bench.report.numbers import Numbers, SourceFile
from bench.report.tables import Table, TableBuilder
from bench.results.schema import SCORED_CATEGORIES, Result
from bench.vocab import is_heldout

BOOTSTRAP_DRAWS = 10_000
BOOTSTRAP_NOTE = (
    "conversation-cluster bootstrap (10,000 draws, G = number of conversations, numpy generator seeded from the "
    "two sides' arms and k, as `engram-bench compare` seeds it): may differ from the article's draws by up to 1.0 point"
)


@dataclass(frozen=True)
class HeldoutArm:
    """One arm at one k as a held-out table row shows it."""

    name: str  # id segment, e.g. "engram-k3"
    label: str  # table label
    arm: str
    k: int


@dataclass(frozen=True)
class Comparison:
    """a − b, paired per question; ``prefix`` is the id stem the article uses for it. ``bootstrap``: also the
    conversation-cluster interval (the three system comparisons the original reported it for)."""

    prefix: str
    a: str
    b: str
    bootstrap: bool = False


@dataclass
class HeldoutRow:
    row: HeldoutArm
    files: list[Loaded]
    frame: pd.DataFrame  # one line per answer: question_id, conversation, category, scored, correct, tokens

    @property
    def sources(self) -> list[SourceFile]:
        return [f.source for f in self.files]

    @property
    def results(self) -> list[Result]:
        return [f.result for f in self.files]

    def scored(self) -> pd.DataFrame:
        return self.frame[self.frame["scored"]]

    def correct_series(self, conversation: str | None = None) -> pd.Series:
        scored = self.scored()
        if conversation is not None:
            scored = scored[scored["conversation"] == conversation]
        return scored.set_index("question_id")["correct"].rename(self.row.name)


# Readable names of the held-out rows, for tables and figures alike.
ROW_LABELS = {
    "engram-k3": "engram",
    "mem0-k3": "mem0",
    "engram-reranking-off-k3": "engram, reranking off",
    "mem0-token-matched": "mem0, token-matched",
    "engram-k20": "engram",
    "mem0-k20": "mem0",
}
# A token-matched run is recorded either under the mem0 arm at the chosen k (the v1 import) or under its own arm.
TOKEN_MATCHED_ARMS = ("mem0", "mem0-token-matched")


def recorded_matched_k(rs: ResultSet) -> tuple[str, int] | None:
    """The arm and k of the held-out token-matching run, read from its result files' extras (not chosen again here:
    choosing is `bench.analysis.stats.token_matched_k`, which the runner applies); None unless every file names the same."""
    found = {
        (arm, item.result.extras["token_match"]["k"])
        for (s, arm, _), item in rs.results.items()
        if is_heldout(s) and arm in TOKEN_MATCHED_ARMS and "token_match" in item.result.extras
    }
    return found.pop() if len(found) == 1 else None


def heldout_rows(rs: ResultSet) -> dict[str, HeldoutRow]:
    candidates = [
        HeldoutArm("engram-k3", ROW_LABELS["engram-k3"], "engram", 3),
        HeldoutArm("mem0-k3", ROW_LABELS["mem0-k3"], "mem0", 3),
        HeldoutArm("engram-reranking-off-k3", ROW_LABELS["engram-reranking-off-k3"], "engram-reranking-off", 3),
    ]
    matched = recorded_matched_k(rs)
    if matched is not None:
        arm, k = matched
        candidates.append(HeldoutArm("mem0-token-matched", ROW_LABELS["mem0-token-matched"], arm, k))
    candidates += [
        HeldoutArm("engram-k20", ROW_LABELS["engram-k20"], "engram", 20),
        HeldoutArm("mem0-k20", ROW_LABELS["mem0-k20"], "mem0", 20),
    ]
    rows: dict[str, HeldoutRow] = {}
    for row in candidates:
        files = rs.heldout(row.arm, row.k)
        if files:
            rows[row.name] = HeldoutRow(row, files, _frame(files))
    return rows


def _frame(files: list[Loaded]) -> pd.DataFrame:
    records = [
        {
            "question_id": a.question_id,
            "conversation": a.conversation,
            "category": a.category,
            "scored": a.scored,
            "correct": int(a.correct),
            "tokens": a.retrieved_tokens,
        }
        for f in files
        for a in f.result.answers
    ]
    return pd.DataFrame.from_records(records)


COMPARISONS = [
    Comparison("heldout.mem0-k3", "engram-k3", "mem0-k3", bootstrap=True),
    Comparison("heldout.engram-reranking-off-k3", "engram-k3", "engram-reranking-off-k3"),
    Comparison("heldout.mem0-token-matched", "engram-k3", "mem0-token-matched", bootstrap=True),
    Comparison("heldout.mem0-k20", "engram-k20", "mem0-k20", bootstrap=True),
    Comparison("heldout.reranking-off_vs_token-matched", "engram-reranking-off-k3", "mem0-token-matched"),
]
# The per-conversation comparisons (compare.<a>_vs_<b>.conv.<conv>.*).
PER_CONVERSATION = [
    ("engram-k3", "mem0-k3"),
    ("engram-k3", "mem0-token-matched"),
    ("engram-k20", "mem0-k20"),
    ("engram-k3", "engram-reranking-off-k3"),
    ("engram-reranking-off-k3", "mem0-token-matched"),
]


def register(rs: ResultSet, numbers: Numbers) -> tuple[dict[str, HeldoutRow], list[Table]]:
    rows = heldout_rows(rs)
    if not rows:
        return rows, []
    _register_rows(rows, numbers)
    for comp in COMPARISONS:
        if comp.a in rows and comp.b in rows:
            _register_comparison(comp.prefix, rows[comp.a], rows[comp.b], numbers, bootstrap=comp.bootstrap)
    if "heldout.mem0-k3.delta" in numbers and "heldout.mem0-token-matched.delta" in numbers:
        k3, tm = numbers["heldout.mem0-k3.delta"], numbers["heldout.mem0-token-matched.delta"]
        src = [s for r in ("engram-k3", "mem0-k3", "mem0-token-matched") for s in rows[r].sources]
        numbers.add(
            "heldout.context_share",
            (k3.value - tm.value) / k3.value,
            "pct",
            src,
            note="share of the k=3 gap removed by matching context: (Δk3 − Δmatched)/Δk3",
        )
    convs = rs.heldout_conversations()
    for a, b in PER_CONVERSATION:
        if a in rows and b in rows:
            for conv in convs:
                _register_comparison(
                    f"compare.{a}_vs_{b}.conv.{conv}", rows[a], rows[b], numbers, bootstrap=False, conversation=conv
                )
    _register_costs(rs, numbers)
    tables = [
        _heldout_table(rows, numbers, rs.label),
        _category_table(rows, numbers, rs.label),
        _perconv_table(rows, convs, numbers, rs.label),
    ]
    return rows, tables


def _register_rows(rows: dict[str, HeldoutRow], numbers: Numbers) -> None:
    first = next(iter(rows.values()))
    all_sources = [s for r in rows.values() for s in r.sources]
    numbers.add("heldout.q", int(first.scored().shape[0]), "int", first.sources)
    adversarial = first.frame[first.frame["category"] == "adversarial"]
    if len(adversarial):
        numbers.add("heldout.adversarial.q", int(adversarial.shape[0]), "int", first.sources)
    numbers.add("heldout.conversations", int(first.frame["conversation"].nunique()), "int", all_sources)
    for name, hr in rows.items():
        scored, src = hr.scored(), hr.sources
        stem = f"heldout.{name}"
        numbers.add(f"{stem}.k", hr.row.k, "int", src)
        numbers.add(
            f"{stem}.tokens",
            float(scored["tokens"].mean()),
            "trunc",
            src,
            note="mean retrieved tokens per scored question, truncated to an integer as the article prints",
        )
        numbers.add(f"{stem}.accuracy", float(scored["correct"].mean()), "pct", src)
        numbers.add(f"{stem}.correct", (int(scored["correct"].sum()), int(scored.shape[0])), "frac", src)
        register_accuracy_interval(stem, scored["correct"], src, numbers)
        for cat in SCORED_CATEGORIES:
            in_cat = scored[scored["category"] == cat]
            if len(in_cat):
                numbers.add(f"{stem}.category.{cat}.accuracy", float(in_cat["correct"].mean()), "pct", src)
                numbers.add(f"{stem}.category.{cat}.n", int(in_cat.shape[0]), "int", src)
                register_accuracy_interval(f"{stem}.category.{cat}", in_cat["correct"], src, numbers)
        adv = hr.frame[hr.frame["category"] == "adversarial"]
        if len(adv):
            numbers.add(f"{stem}.adversarial_accuracy", float(adv["correct"].mean()), "pct", src)
            five = hr.frame[hr.frame["scored"] | (hr.frame["category"] == "adversarial")]
            numbers.add(f"{stem}.five_category_accuracy", float(five["correct"].mean()), "pct", src)


def register_accuracy_interval(stem: str, correct: pd.Series, src: list[SourceFile], numbers: Numbers) -> None:
    """`{stem}.accuracy_ci_low` and `_high`: the 95% interval of one system's accuracy (the v1 and v3 figures')."""
    ci = accuracy_interval(int(correct.sum()), int(correct.size))
    numbers.add(f"{stem}.accuracy_ci_low", ci.low, "pct", src, note=ACCURACY_INTERVAL_NOTE)
    numbers.add(f"{stem}.accuracy_ci_high", ci.high, "pct", src, note=ACCURACY_INTERVAL_NOTE)


def _register_comparison(
    prefix: str, a: HeldoutRow, b: HeldoutRow, numbers: Numbers, *, bootstrap: bool, conversation: str | None = None
) -> None:
    clusters = a.scored().set_index("question_id")["conversation"]
    pairing = Pairing.join(a.correct_series(conversation), b.correct_series(conversation), clusters)
    ci = pairing.difference()
    table = pairing.discordance()
    src = [*a.sources, *b.sources]
    if conversation is not None:
        src = [s for s in src if f"/{conversation}/" in s.path]
    numbers.add(f"{prefix}.delta", ci.estimate, "pp", src, note=f"{a.row.name} minus {b.row.name}, points")
    numbers.add(f"{prefix}.ci_low", ci.low, "pp", src, note=DIFFERENCE_INTERVAL_NOTE)
    numbers.add(f"{prefix}.ci_high", ci.high, "pp", src, note=DIFFERENCE_INTERVAL_NOTE)
    numbers.add(f"{prefix}.mcnemar_p", mcnemar_exact_p(table.only_a, table.only_b), "p", src)
    numbers.add(f"{prefix}.only_a", table.only_a, "int", src, note=f"questions only {a.row.name} answered correctly")
    numbers.add(f"{prefix}.only_b", table.only_b, "int", src, note=f"questions only {b.row.name} answered correctly")
    if bootstrap:
        boot = pairing.cluster_bootstrap(draws=BOOTSTRAP_DRAWS, seed=_seed(a, b))
        numbers.add(f"{prefix}.bootstrap_low", boot.low, "pp", src, note=BOOTSTRAP_NOTE)
        numbers.add(f"{prefix}.bootstrap_high", boot.high, "pp", src, note=BOOTSTRAP_NOTE)


def _seed(a: HeldoutRow, b: HeldoutRow) -> int:
    return paired_seed(a.row.arm, a.row.k, b.row.arm, b.row.k)


def _register_costs(rs: ResultSet, numbers: Numbers) -> None:
    """Per-conversation write cost per 1,000 messages (the k=3 runs wrote the stores), min and max by system."""
    for system, arm in (("engram", "engram"), ("mem0", "mem0")):
        files = [f for f in rs.heldout(arm, 3) if f.result.costs.cost_per_1k is not None]
        if not files:
            continue
        costs = np.array([f.result.costs.cost_per_1k for f in files])
        src = [f.source for f in files]
        numbers.add(f"heldout.{system}.cost_per_1k.min", float(costs.min()), "usd2", src)
        numbers.add(f"heldout.{system}.cost_per_1k.max", float(costs.max()), "usd2", src)
        for f in files:
            conv = f.result.slice.split(":", 1)[1]
            numbers.add(f"heldout.{system}.conv.{conv}.cost_per_1k", f.result.costs.cost_per_1k, "usd2", [f.source])


def _comparison_for(row: str) -> str | None:
    return next((c.prefix for c in COMPARISONS if c.b == row and c.a.startswith("engram-k")), None)


def _heldout_table(rows: dict[str, HeldoutRow], numbers: Numbers, label: str) -> Table:
    t = TableBuilder(
        numbers,
        "heldout",
        "Held-out accuracy by retrieval budget (scored questions, categories 1–4)",
        label,
        ["", "k", "tokens / q", "accuracy", "Δ vs engram (points)", "95% CI", "McNemar p"],
    )
    for name in rows:
        stem = f"heldout.{name}"
        comp = _comparison_for(name)
        if comp:
            t.row(
                t.run_label(rows[name].row.label, rows[name].results),
                t.num(f"{stem}.k"),
                t.num(f"{stem}.tokens"),
                t.num(f"{stem}.accuracy"),
                t.num(f"{comp}.delta"),
                t.interval(f"{comp}.ci_low", f"{comp}.ci_high"),
                t.num(f"{comp}.mcnemar_p"),
            )
        else:
            t.row(
                t.run_label(rows[name].row.label, rows[name].results),
                t.num(f"{stem}.k"),
                t.num(f"{stem}.tokens"),
                t.num(f"{stem}.accuracy"),
                "–",
                "–",
                "–",
            )
    t.note(
        "Δ is engram at the same budget (k=3 rows: engram k=3; k=20: engram k=20) minus the row; per-question "
        "95% CI (Wald: mean d ± 1.96·sd/√n); exact McNemar test on the discordant questions."
    )
    if "heldout.mem0-token-matched.bootstrap_low" in numbers:
        t.note(
            "Token-matched Δ, conversation-cluster bootstrap 95% interval: "
            + t.interval("heldout.mem0-token-matched.bootstrap_low", "heldout.mem0-token-matched.bootstrap_high")
            + f" (resampling the {t.num('heldout.conversations')} conversations, then questions within them; "
            "recomputed with fresh draws, so it may differ from the article's interval by up to 1.0 point)."
        )
    return t.table


def _category_table(rows: dict[str, HeldoutRow], numbers: Numbers, label: str) -> Table:
    t = TableBuilder(
        numbers,
        "category",
        "Held-out accuracy per question category",
        label,
        ["", "k", *SCORED_CATEGORIES, "adversarial"],
    )
    for name, hr in rows.items():
        stem = f"heldout.{name}"
        t.row(
            t.run_label(hr.row.label, hr.results),
            t.num(f"{stem}.k"),
            *[t.num_or_dash(f"{stem}.category.{cat}.accuracy") for cat in SCORED_CATEGORIES],
            t.num_or_dash(f"{stem}.adversarial_accuracy"),
        )
    first = next(iter(rows))
    t.note(
        "Questions per category: "
        + ", ".join(
            f"{cat} {t.num(f'heldout.{first}.category.{cat}.n')}"
            for cat in SCORED_CATEGORIES
            if f"heldout.{first}.category.{cat}.n" in numbers
        )
        + "."
    )
    return t.table


def _shown(row: HeldoutRow) -> str:
    return f"{row.row.label} (k={row.row.k})"


def _perconv_table(rows: dict[str, HeldoutRow], convs: list[str], numbers: Numbers, label: str) -> Table:
    t = TableBuilder(
        numbers,
        "perconv",
        "Per-conversation paired differences (points)",
        label,
        ["comparison", "conversation", "Δ", "95% CI", "McNemar p"],
    )
    for a, b in PER_CONVERSATION:
        if a not in rows or b not in rows:
            continue
        for conv in convs:
            stem = f"compare.{a}_vs_{b}.conv.{conv}"
            t.row(
                f"{_shown(rows[a])} − {_shown(rows[b])}",
                conv,
                t.num(f"{stem}.delta"),
                t.interval(f"{stem}.ci_low", f"{stem}.ci_high"),
                t.num(f"{stem}.mcnemar_p"),
            )
    return t.table
