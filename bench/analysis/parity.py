"""What a comparison states besides its Δ: the retrieval budget of each side (k and retrieved tokens per question,
warned when they differ by more than 10%), the gold and the category numbering used, and scores with and without
category 5. `compare --match-tokens` picks, from a k-sweep of one arm, the k whose tokens are closest to the other
side's (the article's token matching, bench.analysis.stats.token_matched_k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from bench.analysis.categories import numbered_by_locomo, numbering_line, split_adversarial, with_and_without_5
from bench.analysis.stats import token_matched_k
from bench.errors import ResultError

if TYPE_CHECKING:
    import pandas as pd

    from bench.analysis.stats import TokenMatch
    from bench.results.schema import Result


class Side(Protocol):
    """What the budget lines read of a side (`bench.analysis.compare.ComparisonSide` is one): declared here, not
    imported, because compare prints these lines and so imports this module."""

    @property
    def spec(self) -> str: ...
    @property
    def results(self) -> tuple[Result, ...]: ...
    @property
    def answers(self) -> pd.DataFrame: ...
    @property
    def categories(self) -> frozenset[str] | None: ...
    @property
    def first(self) -> Result: ...


S = TypeVar("S", bound=Side)

# Two sides whose mean retrieved tokens differ by more than this share of the larger are not at budget parity.
BUDGET_TOLERANCE = 0.10


@dataclass(frozen=True)
class Budget:
    """A side's retrieval budget over the compared questions: its k and its mean retrieved tokens per question
    (None when the files do not record tokens)."""

    k: int | None
    tokens: float | None
    n: int

    def text(self) -> str:
        k = "k=" + (str(self.k) if self.k is not None else "none (whole transcript or not stated)")
        tokens = f"{self.tokens:,.0f} retrieved tokens/question" if self.tokens is not None else "tokens not recorded"
        return f"{k}, {tokens}"


def side_budget(side: Side, question_ids: list[str] | None = None) -> Budget:
    rows = side.answers if question_ids is None else side.answers.loc[question_ids]
    tokens = rows["retrieved_tokens"].dropna()
    return Budget(side.first.k, float(tokens.mean()) if len(tokens) else None, int(len(rows)))


def budget_gap(a: Budget, b: Budget) -> float | None:
    """|tokens A - tokens B| as a share of the larger; None when either side lacks tokens."""
    if a.tokens is None or b.tokens is None:
        return None
    larger = max(a.tokens, b.tokens)
    return abs(a.tokens - b.tokens) / larger if larger > 0 else 0.0


def budget_lines(a: Side, b: Side, question_ids: list[str]) -> tuple[list[str], list[str]]:
    """(the budget lines a comparison prints, its warnings) over the paired questions."""
    budget_a, budget_b = side_budget(a, question_ids), side_budget(b, question_ids)
    lines = [f"budget A: {budget_a.text()}", f"budget B: {budget_b.text()}"]
    gap = budget_gap(budget_a, budget_b)
    warnings = []
    if gap is not None and gap > BUDGET_TOLERANCE:
        warnings.append(
            f"BUDGETS DIFFER: A retrieves {budget_a.tokens:,.0f} tokens/question, B {budget_b.tokens:,.0f} "
            f"({100 * gap:.0f}% apart, more than {100 * BUDGET_TOLERANCE:.0f}%); the difference mixes the systems "
            "with how much they read (compare --match-tokens picks the closest k from a k-sweep)"
        )
    elif gap is None:
        lines.append("budget parity: not checked (a side records no retrieved tokens)")
    else:
        lines.append(f"budget parity: within {100 * BUDGET_TOLERANCE:.0f}% ({100 * gap:.1f}% apart)")
    return lines, warnings


def context_lines(a: Side, b: Side, gold_lines: list[str]) -> list[str]:
    """Which gold, which numbering and which categories; each side's accuracy with and without category 5."""
    shown = {
        name: [x for r in side.results for x in r.answers if x.question_id in side.answers.index]
        for name, side in (("A", a), ("B", b))
    }
    lines = [*gold_lines, numbering_line([x for answers in shown.values() for x in answers], a.categories)]
    for name, answers in shown.items():
        if not numbered_by_locomo(answers):
            continue  # category 5 is LoCoMo's adversarial category: nothing to say of another dataset's questions
        without, every = split_adversarial(answers)
        if len(without) == len(every):  # "by category 5: without 5: 0/5" read as if something had been taken out
            lines.append(f"{name} by category 5: none of its {len(every)} questions is category 5 (adversarial)")
        else:
            lines.append(f"{name} by category 5: {with_and_without_5(answers)}")
    return lines


def match_tokens(reference: Side, sweep: list[S]) -> tuple[S, TokenMatch]:
    """From a k-sweep of one arm (one side per k), the side whose mean retrieved tokens over the questions it
    shares with `reference` is closest to the reference's; refuses a sweep that mixes arms or stacks."""
    identities = {(s.first.arm, s.first.stack) for s in sweep}
    if len(identities) != 1:
        raise ResultError(
            f"compare --match-tokens: expected a k-sweep of one arm and stack, found {sorted(identities)}"
        )
    by_k: dict[int, S] = {}
    for side in sweep:
        if side.first.k is None or side.first.k in by_k:
            raise ResultError(
                f"compare --match-tokens: expected one result set per k in the sweep, found k={side.first.k} "
                f"({side.spec})"
            )
        by_k[side.first.k] = side
    shared = [q for q in reference.answers.index if all(q in s.answers.index for s in sweep)]
    if not shared:
        raise ResultError("compare --match-tokens: expected the sweep to share questions with A, found none")
    target = side_budget(reference, shared).tokens
    if target is None or math.isnan(target):
        raise ResultError(f"compare --match-tokens: expected retrieved tokens in {reference.spec}, found none")
    tokens: dict[int, float] = {}
    for k, side in by_k.items():
        mean = side_budget(side, shared).tokens
        if mean is None:
            raise ResultError(f"compare --match-tokens: expected retrieved tokens in {side.spec}, found none")
        tokens[k] = mean
    match = token_matched_k(tokens, target)
    return by_k[match.k], match


def match_line(match: TokenMatch) -> str:
    sweep = ", ".join(f"k={k}: {v:,.0f}" for k, v in sorted(match.tokens_by_k.items()))
    return (
        f"token matching: B at k={match.k} ({match.tokens:,.0f} tokens/question) is the closest of the sweep to A's "
        f"{match.reference_tokens:,.0f} ({sweep})"
    )
