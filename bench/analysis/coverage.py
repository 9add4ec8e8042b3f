"""How much of its benchmark a run covers, said wherever its accuracy is printed.

An imported run records its coverage of LoCoMo's scored questions when it is imported (`extras.imported.coverage =
{questions, of, missing, partial}`, bench.exchange.import_results). A partial run's accuracy is over fewer questions
than the benchmark's, and publishing it beside full runs without saying so is how partial runs have been quoted as
full scores: `partial_note` gives the words every printer appends.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.results.schema import Result


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


def partial_note(results: Iterable[Result]) -> str:
    """' PARTIAL run: 152 of 1,540: conv-30, ... missing' for a run recorded as partial, else ''."""
    coverage = recorded_coverage(results)
    if coverage is None or not coverage.get("partial"):
        return ""
    return f" PARTIAL run: {coverage_phrase(coverage)}"
