"""LoCoMo's official answer scores, as its evaluation code computes them (written here from its rules).

Normalisation (`normalize`): remove every comma, lowercase, delete every ASCII punctuation character (Python's
`string.punctuation`; typographic quotes such as ’ are kept, as LoCoMo keeps them), blank out the words a, an, the
and "and", collapse whitespace. Tokens are the normalised words, each reduced by NLTK's Porter stemmer (its default
NLTK_EXTENSIONS mode).

`token_f1`: the harmonic mean of precision and recall of the stemmed tokens, with repeated tokens counted as often
as they occur in both (multiset overlap); 0 when nothing overlaps (an empty answer included).

Per category (`locomo_f1`), with the gold answer taken as text (an integer year becomes its digits):
- 1 multi-hop: prediction and gold are each split on commas (parts stripped, empty parts kept, as LoCoMo keeps
  them); every gold part scores the best `token_f1` any prediction part reaches against it; the mean over gold
  parts is the score;
- 3 open-domain: only the gold's text before its first ";" (stripped) is scored, with `token_f1`;
- 2 temporal, 4 single-hop: `token_f1`;
- 5 adversarial: not an F1 question; `adversarial_correct` is LoCoMo's rule: 1 when the lowercased answer contains
  "no information available" or "not mentioned", else 0.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from bench.results.schema import LOCOMO_CATEGORY_NAMES

if TYPE_CHECKING:  # nltk's package import takes ~1.5 s (scipy.stats, sklearn): loaded on first score, not at start-up
    from nltk.stem import PorterStemmer

MULTI_HOP, TEMPORAL, OPEN_DOMAIN, SINGLE_HOP, ADVERSARIAL = 1, 2, 3, 4, 5
ADVERSARIAL_PHRASES = ("no information available", "not mentioned")

_CODE_OF = {name: code for code, name in LOCOMO_CATEGORY_NAMES.items()}
_DROPPED_WORDS = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def category_code(category: str) -> int | None:
    """LoCoMo's numeric category of a result's category name; None for the update sets."""
    return _CODE_OF.get(category)


def normalize(text: Any) -> str:
    """LoCoMo's normalisation of an answer (see the module docstring)."""
    lowered = str(text).replace(",", "").lower()
    return " ".join(_DROPPED_WORDS.sub(" ", lowered.translate(_PUNCTUATION)).split())


@cache
def _porter() -> PorterStemmer:
    # local import: nltk takes ~1 s to import and `engram-bench --help` loads this module
    from nltk.stem import PorterStemmer

    return PorterStemmer()  # NLTK_EXTENSIONS mode, NLTK's default and the one LoCoMo's code constructs


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _porter().stem(word)


def tokens(text: Any) -> list[str]:
    """Normalised, Porter-stemmed tokens of a text."""
    return [_stem(word) for word in normalize(text).split()]


def token_f1(prediction: Any, gold: Any) -> float:
    predicted, expected = tokens(prediction), tokens(gold)
    overlap = sum((Counter(predicted) & Counter(expected)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(predicted), overlap / len(expected)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: Any, gold: Any) -> float:
    """Category 1: the mean over comma-separated gold parts of the best F1 any prediction part reaches."""
    predicted = [part.strip() for part in str(prediction).split(",")]
    expected = [part.strip() for part in str(gold).split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in expected) / len(expected)


def locomo_f1(prediction: Any, gold: Any, category: int) -> float | None:
    """The official F1 of one answer; None for an adversarial question (scored by `adversarial_correct`).
    A question outside LoCoMo's categories (the update sets) gets the plain `token_f1`."""
    if category == ADVERSARIAL:
        return None
    if category == MULTI_HOP:
        return multi_answer_f1(prediction, gold)
    if category == OPEN_DOMAIN:
        return token_f1(prediction, str(gold).split(";")[0].strip())
    return token_f1(prediction, gold)


def adversarial_correct(prediction: Any) -> float:
    """LoCoMo's adversarial rule: 1.0 if the answer declines ("no information available" / "not mentioned")."""
    lowered = str(prediction).lower()
    return 1.0 if any(phrase in lowered for phrase in ADVERSARIAL_PHRASES) else 0.0
