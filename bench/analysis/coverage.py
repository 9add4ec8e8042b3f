"""How much of its benchmark a run covers, said wherever its accuracy is printed: the one rule for "partial".

A run is partial when it holds fewer questions than it should: an imported run fewer than its benchmark's scored
questions (recorded when it is imported: `extras.imported.coverage = {questions, of, missing, partial}`,
bench.exchange.import_results), a run of ours fewer than the scored questions of the slices it ran on (a run cut
short, or an answer file edited). A partial run's accuracy is over fewer questions than the benchmark's, and
publishing it beside full runs without saying so is how partial runs have been quoted as full scores: `partial_note`
gives the words every printer appends, `is_partial` the mark a table shows.

A result seen under the audited-exclude gold or a category filter dropped questions on purpose; the questions it
should hold are dropped the same way, so a filtered view of a whole run is not partial.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from bench.data.audit import AUDITED_EXCLUDE, load_errata
from bench.data.slices import load_slice
from bench.errors import DataError
from bench.results.schema import Result


def coverage_of(covered: Collection[str], expected: Mapping[str, Collection[str]]) -> dict[str, Any]:
    """{questions, of, missing, partial} of question ids `covered` against the ids each group (a conversation, a
    slice) should hold: `missing` names the groups none of whose questions is covered; partial means fewer covered
    than expected."""
    held = set(covered)
    wanted = {q for ids in expected.values() for q in ids}
    questions = len(held & wanted)
    missing = [group for group, ids in expected.items() if ids and not held & set(ids)]
    return {"questions": questions, "of": len(wanted), "missing": missing, "partial": questions < len(wanted)}


def coverage_phrase(coverage: dict[str, Any]) -> str:
    """'1,388 of 1,540: conv-26 missing' (or 'all 1,540')."""
    if not coverage.get("partial"):
        return f"all {coverage['of']:,}"
    missing = coverage.get("missing") or []
    tail = f": {', '.join(missing)} missing" if missing else ""
    return f"{coverage['questions']:,} of {coverage['of']:,}{tail}"


def recorded_coverage(results: Iterable[Result]) -> dict[str, Any] | None:
    """The coverage a run's files record (the first that records one), None when none does."""
    for result in results:
        imported = result.extras.get("imported")
        if isinstance(imported, dict) and isinstance(imported.get("coverage"), dict):
            return dict(imported["coverage"])
    return None


def slice_coverage(results: Iterable[Result]) -> dict[str, Any] | None:
    """The coverage of a run of ours against the scored questions of the slices its files ran on; None when a slice
    cannot be built here (a LongMemEval split the user has not brought), so nothing is claimed."""
    results = list(results)
    expected: dict[str, set[str]] = {}
    for result in results:
        try:
            questions = load_slice(result.slice).scored_questions
        except DataError:
            return None
        expected.setdefault(result.slice, set()).update(q.id for q in questions if _kept(q.id, q.category_name, result))
    return coverage_of({a.question_id for r in results for a in r.answers}, expected)


def _kept(question_id: str, category: str, result: Result) -> bool:
    """Whether a view of the result (its gold, its category filter) keeps this question."""
    kept = result.extras.get("categories")
    if kept is not None and category not in kept:
        return False
    gold = result.extras.get("gold")
    if isinstance(gold, dict) and gold.get("name") == AUDITED_EXCLUDE:
        return question_id not in load_errata().corrupting
    return True


def run_coverage(results: Iterable[Result]) -> dict[str, Any] | None:
    """A run's coverage: what an imported run recorded, else what a run of ours holds of its slices."""
    results = list(results)
    return recorded_coverage(results) or slice_coverage(results)


def is_partial(results: Iterable[Result]) -> bool:
    coverage = run_coverage(results)
    return coverage is not None and bool(coverage.get("partial"))


def partial_note(results: Iterable[Result]) -> str:
    """' PARTIAL run: 152 of 1,540: conv-30, ... missing' for a partial run, else ''."""
    coverage = run_coverage(results)
    if coverage is None or not coverage.get("partial"):
        return ""
    return f" PARTIAL run: {coverage_phrase(coverage)}"
