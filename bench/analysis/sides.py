"""How `compare` reads its result sets under the trust options: `--gold` (one gold, or several side by side),
`--categories` and `--match-tokens` (the later sets are k-sweeps matched to A's tokens)."""

from __future__ import annotations

from dataclasses import replace

from bench.analysis.categories import with_answers
from bench.analysis.compare import ComparisonSide, load_result_set, load_sweep
from bench.analysis.gold import labels_gold
from bench.analysis.pairing import Pairing
from bench.analysis.parity import match_line, match_tokens
from bench.data.audit import AUDITED, Errata, check_gold
from bench.errors import ResultError
from bench.results.schema import Result


def parse_golds(text: str) -> list[str]:
    """`official` or `official,audited-exclude,audited`: the first is the report's, every one gets a row of the
    side-by-side table."""
    golds = [check_gold(part.strip()) for part in text.split(",") if part.strip()]
    if not golds or len(set(golds)) != len(golds):
        raise ResultError(f"--gold: expected one or more distinct golds separated by commas, found {text!r}")
    return golds


def load_sides(
    sets: list[str], gold: str, categories: frozenset[str] | None, match: bool, errata: Errata | None = None
) -> tuple[list[ComparisonSide], list[str]]:
    """(A and each other side, the token-matching lines to print); with `match`, each later set is a k-sweep and
    the k closest to A's tokens is kept."""
    first = load_result_set(sets[0], gold, categories, errata)
    if not match:
        sides = [first, *(load_result_set(spec, gold, categories, errata) for spec in sets[1:])]
        return shared_questions(sides)
    sides, lines = [first], []
    for spec in sets[1:]:
        chosen, outcome = match_tokens(first, load_sweep(spec, gold, categories, errata))
        sides.append(chosen)
        lines.append(match_line(outcome))
    return sides, lines


def gold_table(sides_by_gold: dict[str, list[ComparisonSide]], include_unscored: bool) -> str:
    """Official and audited side by side: per gold and per compared pair, n, each side's accuracy and Δ."""
    rows = ["under each gold (accuracy of the paired questions; Δ = A − B in points):"]
    rows.append(f"   {'gold':<16}{'pair':<8}{'n':>6}{'A %':>8}{'B %':>8}{'Δ':>8}  judge labels")
    for gold, sides in sides_by_gold.items():
        a = sides[0].correct(include_unscored)
        for i, other in enumerate(sides[1:], start=1):
            b = Pairing.join(a.rename("A"), other.correct(include_unscored).rename("B")).aligned_b()
            labels = {labels_gold(r) for side in (sides[0], other) for r in side.results}
            rows.append(
                f"   {gold:<16}{'A-' + _letter(i):<8}{a.size:>6}{100 * a.mean():>8.1f}{100 * b.mean():>8.1f}"
                f"{100 * (a.mean() - b.mean()):>+8.1f}  "
                + (", ".join(sorted(labels)) if gold == AUDITED else "as judged (official gold)")
            )
    return "\n".join(rows)


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i)


def _imported(side: ComparisonSide) -> bool:
    return any("imported" in r.extras for r in side.results)


def shared_questions(sides: list[ComparisonSide]) -> tuple[list[ComparisonSide], list[str]]:
    """A peer's imported results rarely hold exactly our questions: when a side is imported, every side keeps the
    questions all of them hold (said in one line); our own arms must still match question for question."""
    if not any(_imported(side) for side in sides):
        return sides, []
    shared = set(sides[0].answers.index)
    for side in sides[1:]:
        shared &= set(side.answers.index)
    if not shared:
        raise ResultError("compare: expected the imported results to share questions with the other sides, found none")
    if all(len(side.answers) == len(shared) for side in sides):
        return sides, []
    kept = [restricted(side, shared) for side in sides]
    sizes = ", ".join(f"{len(side.answers)}" for side in sides)
    return kept, [f"paired on the {len(shared)} questions every side holds (of {sizes}): a side is imported"]


def restricted(side: ComparisonSide, ids: set[str]) -> ComparisonSide:
    """The side with only the answers to `ids`, its summaries recomputed."""
    results = tuple(_only(r, ids) for r in side.results)
    replicates = {i: tuple(_only(r, ids) for r in group) for i, group in side.replicates.items()}
    return replace(side, results=results, answers=side.answers.loc[sorted(ids)], replicates=replicates)


def _only(result: Result, ids: set[str]) -> Result:
    return with_answers(result, [a for a in result.answers if a.question_id in ids])
