"""Planted wrong answers for judge probes: answers built to be wrong in a way a lenient judge may still accept.

Two families, each with its own kinds, written for any dataset whose gold answers are short texts:
- specific-but-wrong: the gold's own shape with one detail changed, so the answer looks exact but is not: a date
  shifted (`shifted-date`), a person's name swapped for another person of the same conversation (`swapped-name`), a
  count changed (`swapped-number`);
- vague-but-topical: an answer on the right topic that commits to nothing checkable: a date or count widened into a
  hedged range (`hedged-range`), a concrete noun replaced by its broad class (`hypernym`).

Every generator is a pure function of the gold (and, for names, the people of the conversation), so a probe set is
the same on every machine. A generator that finds nothing to change returns None; an answer that would still
contain the gold is never planted (it might be right).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

SPECIFIC_BUT_WRONG = "specific-but-wrong"
VAGUE_BUT_TOPICAL = "vague-but-topical"

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH = "|".join(MONTHS)
_DAY_MONTH_YEAR = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)? (?P<month>{_MONTH}),? (?P<year>\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b(?P<month>{_MONTH}) (?P<day>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<year>\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b(?P<month>{_MONTH}),? (?P<year>\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b(?P<year>(?:19|20)\d{2})\b")
# A count: digits that are not a year (years are dates, handled above).
_COUNT = re.compile(r"\b(?P<n>\d{1,3})\b")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_NUMBER_WORD = re.compile(rf"\b(?P<word>{'|'.join(_NUMBER_WORDS)})\b", re.I)

SHORT_GOLD_WORDS = 6
_SEASONS = {
    "December": "winter",
    "January": "winter",
    "February": "winter",
    "March": "spring",
    "April": "spring",
    "May": "spring",
    "June": "summer",
    "July": "summer",
    "August": "summer",
    "September": "autumn",
    "October": "autumn",
    "November": "autumn",
}

# Concrete nouns common in conversational memory answers and the broad class a vague answer would name instead.
# Hand-written (no WordNet download is possible offline); a gold with none of these gets no hypernym probe.
HYPERNYMS: dict[str, str] = {
    **dict.fromkeys(
        ("dog", "dogs", "puppy", "puppies", "cat", "cats", "kitten", "kittens", "horse", "horses", "hamster", "turtle"),
        "a pet",
    ),
    **dict.fromkeys(("guitar", "piano", "violin", "drums", "flute", "clarinet", "ukulele"), "a musical instrument"),
    **dict.fromkeys(
        ("painting", "pottery", "drawing", "sculpture", "sketching", "knitting"), "an arts and crafts hobby"
    ),
    **dict.fromkeys(("camping", "hiking", "kayaking", "fishing", "surfing", "climbing"), "an outdoor activity"),
    **dict.fromkeys(
        ("soccer", "basketball", "tennis", "football", "baseball", "swimming", "running", "yoga"), "a sport"
    ),
    **dict.fromkeys(
        ("mother", "mom", "father", "dad", "sister", "brother", "grandma", "grandmother", "son", "daughter", "kids"),
        "a family member",
    ),
    **dict.fromkeys(("book", "books", "novel", "novels", "poem", "poems"), "something to read"),
    **dict.fromkeys(("pizza", "pasta", "sushi", "cake", "cookies", "pie", "tacos"), "some food"),
    **dict.fromkeys(("concert", "festival", "parade", "party", "wedding"), "an event"),
    **dict.fromkeys(("car", "bike", "bicycle", "motorcycle", "boat"), "a vehicle"),
    **dict.fromkeys(("beach", "park", "museum", "library", "gym", "cafe"), "a place in town"),
    **dict.fromkeys(("sunset", "sunrise", "lake", "mountains", "forest", "ocean"), "a nature scene"),
    **dict.fromkeys(("shelter", "charity", "fundraiser", "volunteering"), "community work"),
}
_HYPERNYM_WORD = re.compile(r"\b(?P<word>" + "|".join(sorted(HYPERNYMS, key=len, reverse=True)) + r")\b", re.I)


@dataclass(frozen=True)
class Plant:
    """One planted wrong answer for one gold answer."""

    kind: str
    family: str
    answer: str


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _month_index(name: str) -> int:
    return [m.lower() for m in MONTHS].index(name.lower())


def shifted_date(gold: str) -> str | None:
    """The gold with its first date moved: a day by three days (staying in its month), a month-year to the next
    month, a bare year to the year before."""
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        match = pattern.search(gold)
        if match:
            day = int(match["day"])
            shifted = day + 3 if day <= 25 else day - 3
            start, end = match.span("day")
            return gold[:start] + str(shifted) + gold[end:]
    match = _MONTH_YEAR.search(gold)
    if match:
        month = MONTHS[(_month_index(match["month"]) + 1) % 12]
        start, end = match.span("month")
        return gold[:start] + month + gold[end:]
    match = _YEAR.search(gold)
    if match:
        start, end = match.span("year")
        return gold[:start] + str(int(match["year"]) - 1) + gold[end:]
    return None


def hedged_range(gold: str) -> str | None:
    """A date widened to its season or year, or a count to a loose range: on topic, but not the answer."""
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _MONTH_YEAR):
        match = pattern.search(gold)
        if match:
            season = _SEASONS[MONTHS[_month_index(match["month"])]]
            return f"Sometime around the {season} of {match['year']}"
    match = _YEAR.search(gold)
    if match:
        decade = int(match["year"]) // 10 * 10
        return f"Some time in the {decade}s"
    if _short(gold) and (_COUNT.search(gold) or _NUMBER_WORD.search(gold)):
        return "A handful, more or less"
    return None


def _date_spans(gold: str) -> list[tuple[int, int]]:
    return [m.span() for p in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _MONTH_YEAR, _YEAR) for m in p.finditer(gold)]


def _short(gold: str) -> bool:
    """A count is the answer only in a short gold; in a long one "one" or "two" is usually just a word."""
    return len(gold.split()) <= SHORT_GOLD_WORDS


def swapped_number(gold: str) -> str | None:
    """The gold with its first count changed (digits outside any date, or a number word up to twelve), in a short
    gold only; dates are `shifted_date`'s."""
    if not _short(gold):
        return None
    dates = _date_spans(gold)
    for count in _COUNT.finditer(gold):
        if any(start <= count.start() < end for start, end in dates):
            continue
        start, end = count.span("n")
        return gold[:start] + str(int(count["n"]) + 1) + gold[end:]
    word = _NUMBER_WORD.search(gold)
    if word:
        index = list(_NUMBER_WORDS).index(word["word"].lower())
        start, end = word.span("word")
        return gold[:start] + _NUMBER_WORDS[(index + 2) % len(_NUMBER_WORDS)] + gold[end:]
    return None


def swapped_name(gold: str, people: Sequence[str]) -> str | None:
    """The gold with the first person of `people` it names replaced by another of them (the next in order)."""
    names = [p for p in dict.fromkeys(people) if p]
    if len(names) < 2:
        return None
    for i, name in enumerate(names):
        match = re.search(rf"\b{re.escape(name)}\b", gold)
        if match:
            other = names[(i + 1) % len(names)]
            return gold[: match.start()] + other + gold[match.end() :]
    return None


def hypernym(gold: str) -> str | None:
    """An answer naming only the broad class of the gold's first concrete noun ("a pet" for "her dog Max")."""
    match = _HYPERNYM_WORD.search(gold)
    if match is None:
        return None
    return f"Something to do with {HYPERNYMS[match['word'].lower()]}"


GENERATORS: dict[str, tuple[str, Callable[[str, Sequence[str]], str | None]]] = {
    "shifted-date": (SPECIFIC_BUT_WRONG, lambda gold, _people: shifted_date(gold)),
    "swapped-name": (SPECIFIC_BUT_WRONG, swapped_name),
    "swapped-number": (SPECIFIC_BUT_WRONG, lambda gold, _people: swapped_number(gold)),
    "hedged-range": (VAGUE_BUT_TOPICAL, lambda gold, _people: hedged_range(gold)),
    "hypernym": (VAGUE_BUT_TOPICAL, lambda gold, _people: hypernym(gold)),
}


def could_be_right(gold: str, answer: str) -> bool:
    """An answer that repeats the whole gold (after normalising case and punctuation) is not planted: a judge
    accepting it would be right to."""
    wanted = _normal(gold)
    return not wanted or wanted in _normal(answer)


def plants_for(gold: Any, people: Sequence[str] = ()) -> list[Plant]:
    """Every planted wrong answer the generators make for one gold answer, in the generators' order."""
    text = str(gold).strip()
    plants = []
    for kind, (family, generate) in GENERATORS.items():
        answer = generate(text, people)
        if answer is not None and not could_be_right(text, answer):
            plants.append(Plant(kind, family, answer))
    return plants
