"""`paper build --gold G --categories C`: the paper's numbers from the same result files read under another gold
or with some categories only (bench.analysis.gold, bench.analysis.categories), written beside the paper, never over it;
and the gold note every build writes (`gold.md`): the gold and categories used, and the official gold's ceiling per
LoCoMo category, computed from the LoCoMo audit's errata."""

from __future__ import annotations

from pathlib import Path

from bench.analysis.categories import LOCOMO_CODES, NUMBERING_LINE, describe_filter, keep_categories
from bench.analysis.gold import GOLD_TEXT, under_gold
from bench.data.audit import OFFICIAL, official_ceilings
from bench.disk.atomic import write_text
from bench.report.inputs import ResultView

GOLD_NOTE = "gold.md"


def paper_view(gold: str, categories: frozenset[str] | None) -> ResultView | None:
    """None for the paper as published (official gold, every category); otherwise the view every result goes
    through, whose note every table label carries."""
    if gold == OFFICIAL and categories is None:
        return None
    note = f"gold {gold}" + (f", {describe_filter(categories)}" if categories is not None else "")
    return ResultView(lambda result: keep_categories(under_gold(result, gold), categories), note)


def view_dir(base: Path, gold: str, categories: frozenset[str] | None) -> Path:
    """Where a view's paper goes by default: `<paper dir>/gold-<gold>[-cat<codes>]/`."""
    codes = {name: code for code, name in LOCOMO_CODES.items()}
    suffix = "" if categories is None else "-cat" + "".join(str(codes.get(c, c)) for c in sorted(categories, key=str))
    return base / f"gold-{gold}{suffix}"


def gold_note(gold: str, categories: frozenset[str] | None) -> str:
    """The markdown of `gold.md`."""
    lines = [
        "# Gold and categories of this build",
        "",
        f"- gold: **{gold}** ({GOLD_TEXT[gold]})",
        f"- {NUMBERING_LINE}; used: {describe_filter(categories)}",
        "",
        "## Ceiling of the official gold",
        "",
        "The best score a perfect system can get against LoCoMo's gold as published: every question except those "
        "the LoCoMo audit (dial481/locomo-audit, data/locomo-audit/errors.json) found score-corrupting. Computed "
        "from the errata and locomo10.json at build time.",
        "",
        "| category (LoCoMo code) | questions | score-corrupting | ceiling % |",
        "|---|---|---|---|",
    ]
    for row in official_ceilings():
        name = "1-4 (all scored)" if row.group == "1-4" else f"{row.group} {LOCOMO_CODES[int(row.group)]}"
        lines.append(f"| {name} | {row.n:,} | {row.corrupting} | {100 * row.value:.2f} |")
    return "\n".join(lines) + "\n"


def write_gold_note(out_dir: Path, gold: str, categories: frozenset[str] | None) -> Path:
    return write_text(out_dir / GOLD_NOTE, gold_note(gold, categories))
