"""mem0's evaluation scores for LoCoMo, as its evaluation code computes them (written here from its rules).

mem0's evaluation skips category 5 (adversarial); both scores are computed on the answer and the gold as text, each
stripped of surrounding whitespace.

`mem0_f1` (its "f1_score"): tokens are the lowercased text with every ".", ",", "!" and "?" replaced by a space,
split on whitespace; the two texts' token SETS are compared (a repeated word counts once); precision = shared /
answer tokens, recall = shared / gold tokens, F1 their harmonic mean; 0 when either text is empty or nothing is
shared. No stemming, no stop words, other punctuation stays attached to its word.

`mem0_bleu1` (its "bleu_score"): NLTK's `sentence_bleu` of the answer against the gold as the single reference,
weights (1, 0, 0, 0) (unigram precision with the brevity penalty) and NLTK's smoothing method 1, over NLTK
`word_tokenize` tokens of the lowercased texts. `word_tokenize` first splits sentences with Punkt; mem0's run used
NLTK's pretrained English Punkt model, which is NLTK data rather than a package and cannot be installed here, so we
split with NLTK's Punkt tokenizer untrained (its default parameters). The two differ only on multi-sentence answers
in which an abbreviation the English model knows ("dr.", "mr.", "st.") ends a word before a space: untrained Punkt
also breaks a sentence there, detaching that period as its own token.

Long answers: NLTK runs every regular expression of its tokenizers under a wall-clock limit (`nltk.redos`, 5 s), so
a long answer on a busy machine would end in a TimeoutError, or score differently by load. Scoring turns that limit
off for NLTK's own fixed patterns and instead bounds the text each one sees: an answer longer than
`PIECE_CHARS` is tokenized in pieces cut at whitespace (or, with none, every `PIECE_CHARS` characters). Every answer
shorter than that is tokenized exactly as before; a longer one can differ only where a cut falls.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # nltk's package import takes ~1.5 s (scipy.stats, sklearn): loaded on first score, not at start-up
    from nltk.tokenize import PunktSentenceTokenizer
    from nltk.tokenize.destructive import NLTKWordTokenizer

_SEPARATORS = re.compile(r"[.,!?]")
BLEU1_WEIGHTS = (1.0, 0.0, 0.0, 0.0)


def simple_tokens(text: Any) -> set[str]:
    return set(_SEPARATORS.sub(" ", str(text).lower()).split())


def mem0_f1(prediction: Any, gold: Any) -> float:
    predicted, expected = simple_tokens(str(prediction).strip()), simple_tokens(str(gold).strip())
    if not predicted or not expected:
        return 0.0
    shared = len(predicted & expected)
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return 2 * precision * recall / (precision + recall)


@cache
def _sentences() -> PunktSentenceTokenizer:
    # local import: nltk takes ~1 s to import and `engram-bench --help` loads this module
    from nltk.tokenize import PunktSentenceTokenizer

    _no_wall_clock_limit()
    return PunktSentenceTokenizer()


def _no_wall_clock_limit() -> None:
    """Turn off nltk.redos's default match time limit (NLTK >= 3.9.3): its tokenizers' patterns are NLTK's own,
    the text each sees is bounded (`pieces`), and a score must not depend on how busy the machine is."""
    try:
        # local import: nltk takes ~1 s to import and `--help` loads this module; an NLTK without redos is allowed
        from nltk import redos
    except ImportError:  # an NLTK without the limit
        return
    redos.DEFAULT_TIMEOUT = None


@cache
def _words() -> NLTKWordTokenizer:
    # local import: nltk takes ~1 s to import and `engram-bench --help` loads this module
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


PIECE_CHARS = 20_000


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` cut into pieces of at most about `size` characters, each cut at the last whitespace before the limit
    (a hard cut when a piece has none); the pieces, concatenated, are the text."""
    out: list[str] = []
    start = 0
    while len(text) - start > size:
        cut = text.rfind(" ", start + 1, start + size)
        cut = cut if cut > start else start + size
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def word_tokens(text: str) -> list[str]:
    """NLTK's `word_tokenize` (Treebank-style words per Punkt sentence), with untrained Punkt (module docstring),
    one bounded piece at a time."""
    sentences, words = _sentences(), _words()
    return [
        token for piece in pieces(text) for sentence in sentences.tokenize(piece) for token in words.tokenize(sentence)
    ]


@cache
def _smoothing() -> Any:
    # local import: nltk takes ~1 s to import and `engram-bench --help` loads this module
    from nltk.translate.bleu_score import SmoothingFunction

    return SmoothingFunction().method1


def mem0_bleu1(prediction: Any, gold: Any) -> float:
    hypothesis = word_tokens(str(prediction).strip().lower())
    reference = word_tokens(str(gold).strip().lower())
    # local import: nltk takes ~1 s to import and `engram-bench --help` loads this module
    from nltk.translate.bleu_score import sentence_bleu

    return float(sentence_bleu([reference], hypothesis, weights=BLEU1_WEIGHTS, smoothing_function=_smoothing()))
