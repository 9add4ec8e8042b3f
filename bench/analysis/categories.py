"""Question categories made explicit: which numbering a table uses, `--categories` filtering, and scores with and
without category 5.

LoCoMo numbers its categories in `locomo10.json` (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
adversarial; LoCoMo's own evaluation code reads them so). mem0's evaluation keeps the numbers but names three of the
four scored ones differently (mem0ai/mem0 issue #2609), so "category 1" means single-hop to a mem0 reader. Every
table says which numbering it uses; this project's is LoCoMo's. Result files carry names, never numbers.

The tables are the LoCoMo dataset's declaration (`bench.data.datasets.locomo`: its codes, and mem0's names as its
"mem0" numbering); the functions here read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from bench.data.datasets.locomo import LOCOMO
from bench.errors import DataError
from bench.results.schema import Answer, Result

ADVERSARIAL_CODE = 5
# The names mem0's evaluation gives LoCoMo's codes (an alias map: the codes are LoCoMo's, the names differ).
MEM0_NAMES = dict(LOCOMO.numberings["mem0"])
# LoCoMo's own codes, from its dataset declaration: {code: name}
LOCOMO_CODES = dict(LOCOMO.codes)
_CODE_OF = {name: code for code, name in LOCOMO_CODES.items()}
_MEM0_DIFFERS = ", ".join(f"{code} {name}" for code, name in sorted(MEM0_NAMES.items()) if LOCOMO_CODES[code] != name)
NUMBERING_LINE = (
    "categories in LoCoMo's numbering (locomo10.json): "
    + ", ".join(f"{code} {name}" for code, name in sorted(LOCOMO_CODES.items()))
    + f" (mem0 calls {_MEM0_DIFFERS})"
)


def code_of(category: str) -> int | None:
    """LoCoMo's code of a category name; None for categories outside LoCoMo (the update sets, LongMemEval)."""
    return _CODE_OF.get(category)


def numbered_by_locomo(answers: Iterable[Answer]) -> bool:
    """Whether some answer is in one of LoCoMo's categories. Only then do LoCoMo's numbering, its category 5 and its
    audit say anything about the answers: a LongMemEval result's question types have none of them."""
    return any(code_of(a.category) is not None for a in answers)


def numbering_line(answers: Iterable[Answer], kept: frozenset[str] | None) -> str:
    """Which numbering the categories are in, and which are shown."""
    numbering = NUMBERING_LINE if numbered_by_locomo(answers) else "categories by name (their dataset numbers none)"
    return f"{numbering}; shown: {describe_filter(kept)}"


def labelled(category: str) -> str:
    """`4 single-hop` for a LoCoMo category, the bare name otherwise: how a table row names its category."""
    code = code_of(category)
    return f"{code} {category}" if code is not None else category


def parse_categories(text: str | None, where: str = "--categories") -> frozenset[str] | None:
    """`1,2,3,4` (LoCoMo's codes) or names (`temporal,single-hop`) -> the category names kept; None keeps all."""
    if text is None:
        return None
    if not text.strip():  # `--categories ''` (an unset shell variable) once meant every category, silently
        raise DataError(f"{where}: expected LoCoMo category codes or names, found nothing (leave it out to keep all)")
    kept: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if part.isdigit() and int(part) in LOCOMO_CODES:
            kept.add(LOCOMO_CODES[int(part)])
        elif part in _CODE_OF:
            kept.add(part)
        else:
            known = ", ".join(f"{c} ({n})" for c, n in sorted(LOCOMO_CODES.items()))
            raise DataError(f"{where}: expected LoCoMo category codes or names ({known}), found {part!r}")
    return frozenset(kept)


def describe_filter(kept: frozenset[str] | None) -> str:
    if kept is None:
        return "all categories"
    return "categories " + ", ".join(labelled(c) for c in sorted(kept, key=lambda c: (code_of(c) or 99, c)))


def keep_categories(result: Result, kept: frozenset[str] | None) -> Result:
    """The result restricted to answers in the kept categories, its summary blocks recomputed; the filter is
    recorded in `extras.categories` so a filtered result never passes for the whole one."""
    if kept is None:
        return result
    answers = [a for a in result.answers if a.category in kept]
    return replace(
        with_answers(result, answers),
        extras={**result.extras, "categories": sorted(kept, key=lambda c: (code_of(c) or 99, c))},
    )


def with_answers(result: Result, answers: Sequence[Answer]) -> Result:
    """The result holding only `answers`, its accuracy blocks recomputed from them (every other field kept); what
    the category filter, the gold views and compare's shared-question pairing all need."""
    skip = {"answers", "accuracy", "accuracy_by_category"}
    rest = {name: getattr(result, name) for name in result.__dataclass_fields__ if name not in skip}
    return Result.build(answers=answers, **rest)


def split_adversarial(answers: Iterable[Answer]) -> tuple[list[Answer], list[Answer]]:
    """(answers outside category 5, every labelled answer including category 5)."""
    every = list(answers)
    return [a for a in every if code_of(a.category) != ADVERSARIAL_CODE], every


def with_and_without_5(answers: Sequence[Answer]) -> str:
    """`without 5: 120/200 = 60.0%; with 5: 150/247 = 60.7%` (with 5 only when some answer is category 5)."""
    without, every = split_adversarial(answers)
    parts = [_share("without 5", without)]
    if len(every) != len(without):
        parts.append(_share("with 5", every))
    return "; ".join(parts)


def accuracy_line(answers: Sequence[Answer]) -> str:
    """`with_and_without_5` for answers in LoCoMo's categories; `12 questions: 2/12 = 16.7%` for any others."""
    if numbered_by_locomo(answers):
        return with_and_without_5(answers)
    return _share(f"{len(answers)} questions", answers)


def _share(title: str, answers: Sequence[Answer]) -> str:
    right = sum(a.correct for a in answers)
    return f"{title}: {right}/{len(answers)} = {100 * right / len(answers):.1f}%" if answers else f"{title}: n=0"


# A table's title note: the codes of the categories its rows name.
CATEGORY_NUMBERING = "LoCoMo codes: " + ", ".join(f"{n} = {c}" for c, n in sorted(LOCOMO_CODES.items()))
