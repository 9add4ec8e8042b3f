"""Answering and judging a question, on either stack, plus the LLM-free scores every answer carries.

Paper stack (the article's protocol): claude-sonnet-4-6 answers with mem0's LoCoMo answer prompt and judges with
mem0's LoCoMo judge prompt (texts in `bench/prompts/`, Apache 2.0, see NOTICE.md there), through the gateway's
`AnthropicLLM`. Answer: max_tokens 1024, temperature 0.0. Judge: same settings; the reply must hold a JSON object
with "label" CORRECT or WRONG; anything unparsable is WRONG.

How the answer prompt is filled (part of the scoring protocol, recorded by `prompt_protocol()` in every result):
mem0's template has one memory list per speaker. Each retrieved line goes to the list of the speaker who said the
message it came from (a line whose source is unknown goes to the first speaker's list); each list is rendered as
`json.dumps(lines, indent=4)`, the layout mem0's evaluation used. The template is rendered as the system prompt and
the question is the user message (Anthropic needs one user turn).

Offline stack (zero keys; STAND-INS, their numbers are not the paper's):
- `ExtractiveAnswerer` ("extractive-answerer-standin-v1") returns the retrieved line that best matches the question,
  by content-word overlap plus MiniLM cosine, with its date/quote decorations stripped.
- `LexicalJudge` ("lexical-judge-standin-v1") marks CORRECT when most of the gold answer's normalised content words
  appear in the answer (definitions in `lexical_verdict`).
Both go through the gateway as provider "offline", so they are cached and replayed exactly like a real model.

Judge prompts (`JUDGE_PROMPTS`): "mem0-lenient" (mem0's LoCoMo judge prompt, the article's and the default) and
"strict" (ours: every fact of the gold with the same value). Every judge names its metric,
`judge:<model>:<prompt id>` (`bench.analysis.scoring.judge_metric`), which a result records for its labels.

LLM-free scores live in `bench.analysis.scoring`; this module keeps `evidence_recall` (how many of the question's evidence
turns a shown line came from), which needs the retrieval and so is computed at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import jinja2
import numpy as np
from py_rust_stemmers import SnowballStemmer

from bench.errors import ConfigError
from bench.models import longmemeval_answer
from bench.models.cache import OFFLINE_PROVIDER, CallRequest, LiveResponse
from bench.registry import Registry
from bench.vocab import PROMPTS_DIR, judge_metric

if TYPE_CHECKING:
    from engram import LLM, Embedder


class Gateway(Protocol):
    """What the stand-ins here need of `bench.models.gateway.Gateway`: one call, cached and replayed (its result has
    `body`, `cost_usd`, `latency_ms` and `cached`). Declared, not imported: the gateway asks bench.models.provider
    about providers, and that module builds its default answerer and judge from this one."""

    def call(self, request: CallRequest, live: Callable[[CallRequest], LiveResponse]) -> Any: ...


ANSWER_PROMPT_FILE = PROMPTS_DIR / "locomo_answer_prompt.txt"
JUDGE_PROMPT_FILE = PROMPTS_DIR / "locomo_judge_prompt.txt"
DEFAULT_JUDGE_PROMPT = "mem0-lenient"
#: judge prompt name -> its template file (a judge prompt is a file in bench/prompts/ added here)
JUDGE_PROMPTS: Registry[Path] = Registry(
    "judge prompt", hint="a template in bench/prompts/ added to bench.models.judge"
)
JUDGE_PROMPTS.add(DEFAULT_JUDGE_PROMPT, JUDGE_PROMPT_FILE, origin=__name__)
JUDGE_PROMPTS.add("strict", PROMPTS_DIR / "judge_strict_prompt.txt", origin=__name__)

ANSWER_MAX_TOKENS = 1024
JUDGE_MAX_TOKENS = 1024
TEMPERATURE = 0.0
CORRECT, WRONG = "CORRECT", "WRONG"

EXTRACTIVE_ANSWERER_MODEL = "extractive-answerer-standin-v1"
LEXICAL_JUDGE_MODEL = "lexical-judge-standin-v1"
# Bump a stand-in's rules revision whenever its behaviour changes: it is part of the request body, so cached
# verdicts of the old rules are never served for the new ones.
EXTRACTIVE_ANSWERER_RULES = 1
LEXICAL_JUDGE_RULES = 2
NO_MEMORY_ANSWER = "I don't know"  # what the extractive stand-in says when nothing was retrieved


@dataclass(frozen=True)
class Reply:
    """What an answerer said, with what it cost and took (recorded figures, replayed from the cache)."""

    text: str
    model: str
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False


@dataclass(frozen=True)
class Judgement:
    label: str  # CORRECT | WRONG
    model: str
    raw: str = ""  # the judge's reply (LLM) or the lexical evidence (stand-in), for audits
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False


# ---------------------------------------------------------------------------------------------------------------
# The protocol texts


@cache
def _template_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prompt_protocol() -> dict[str, str]:
    """Which prompt texts and which filling rule scored a result: recorded in every result file."""
    return {
        "answer_prompt_sha256": hashlib.sha256(_template_text(ANSWER_PROMPT_FILE).encode()).hexdigest(),
        "judge_prompt_sha256": hashlib.sha256(_template_text(JUDGE_PROMPT_FILE).encode()).hexdigest(),
        "answer_prompt_form": "mem0 two-speaker template; each line under the speaker of its source message",
    }


def memories_by_speaker(
    lines: Sequence[str], line_speakers: Sequence[str | None] | None, speakers: Sequence[str]
) -> dict[str, list[str]]:
    """Split the shown lines into the template's two per-speaker lists, keeping rank order within each."""
    split: dict[str, list[str]] = {speaker: [] for speaker in speakers}
    owners = list(line_speakers) if line_speakers is not None else [None] * len(lines)
    for line, owner in zip(lines, owners, strict=True):
        split[owner if owner in split else speakers[0]].append(line)
    return split


def render_answer_prompt(question: str, split: Mapping[str, Sequence[str]]) -> str:
    (speaker_1, lines_1), (speaker_2, lines_2) = list(split.items())[:2]
    # mem0 renders this template with Jinja2 (double-brace placeholders); autoescape off: it is plain text.
    template = jinja2.Environment(autoescape=False, keep_trailing_newline=True).from_string(
        _template_text(ANSWER_PROMPT_FILE)
    )
    return template.render(
        speaker_1_user_id=speaker_1,
        speaker_1_memories=json.dumps(list(lines_1), indent=4),
        speaker_2_user_id=speaker_2,
        speaker_2_memories=json.dumps(list(lines_2), indent=4),
        question=question,
    )


def judge_prompt_file(prompt: str) -> Path:
    """The file of a named judge prompt; RegistryError listing the names otherwise."""
    return JUDGE_PROMPTS.get(prompt, where="judge prompt")


def judge_prompt_id(prompt: str) -> str:
    """The first 12 hex digits of the prompt text's SHA-256: the prompt part of a judge's metric name."""
    return hashlib.sha256(_template_text(judge_prompt_file(prompt)).encode()).hexdigest()[:12]


def render_judge_prompt(question: str, gold: Any, answer: str, prompt: str = DEFAULT_JUDGE_PROMPT) -> str:
    template = _template_text(judge_prompt_file(prompt))
    return template.format(question=question, gold_answer=gold, generated_answer=answer)


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_label(reply: str) -> str:
    """The judge's label from its reply: the last JSON object with a "label" key; anything else is WRONG."""
    for candidate in reversed(_JSON_OBJECT.findall(reply)):
        try:
            parsed = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        label = parsed.get("label") if isinstance(parsed, dict) else None
        if isinstance(label, str) and label.strip().upper() in (CORRECT, WRONG):
            return label.strip().upper()
    return WRONG


# ---------------------------------------------------------------------------------------------------------------
# Paper stack: an LLM (the gateway's AnthropicLLM) with mem0's LoCoMo prompts


class LLMAnswerer:
    """Answers with mem0's LoCoMo answer prompt on a chat model (claude-sonnet-4-6 on the paper stack); a question
    asked on a date (LongMemEval's) with LongMemEval's own answer prompt, which states that date
    (bench.models.longmemeval_answer)."""

    def __init__(self, llm: LLM, model: str) -> None:
        self.llm = llm
        self.model = model

    def answer(
        self,
        question: str,
        lines: Sequence[str],
        speakers: Sequence[str],
        line_speakers: Sequence[str | None] | None = None,
        asked_on: str | None = None,
    ) -> Reply:
        if asked_on is not None:  # upstream sends its filled prompt as the one user message, with no system prompt
            system, user = None, longmemeval_answer.render(question, asked_on, lines)
        else:
            system, user = render_answer_prompt(question, memories_by_speaker(lines, line_speakers, speakers)), question
        reply = self.llm.complete(
            role="answer",
            model=self.model,
            system=system,
            messages=[{"role": "user", "content": user}],
            max_tokens=ANSWER_MAX_TOKENS,
            temperature=TEMPERATURE,
        )
        return Reply(reply.text.strip(), reply.model, reply.cost_usd, reply.latency_ms, reply.cached)


class LLMJudge:
    """Judges with a named judge prompt (mem0's LoCoMo judge prompt by default); an unparsable reply is WRONG."""

    def __init__(self, llm: LLM, model: str, prompt: str = DEFAULT_JUDGE_PROMPT) -> None:
        self.llm = llm
        self.model = model
        self.prompt = prompt
        self.metric = judge_metric(model, judge_prompt_id(prompt))

    def judge(self, question: str, gold: Any, answer: str) -> Judgement:
        reply = self._ask(render_judge_prompt(question, gold, answer, self.prompt), JUDGE_MAX_TOKENS)
        return Judgement(
            parse_label(reply.text), reply.model, reply.text, reply.cost_usd, reply.latency_ms, reply.cached
        )

    def judge_rendered(
        self, prompt: str, correct: Callable[[str], bool], max_tokens: int = JUDGE_MAX_TOKENS
    ) -> Judgement:
        """Judge with a prompt rendered by a benchmark's own protocol (LongMemEval: bench.models.longmemeval_judge)
        and its own rule for reading the reply."""
        reply = self._ask(prompt, max_tokens)
        label = CORRECT if correct(reply.text) else WRONG
        return Judgement(label, reply.model, reply.text, reply.cost_usd, reply.latency_ms, reply.cached)

    def _ask(self, prompt: str, max_tokens: int) -> Any:
        """One judge call: the prompt as the only user message, at temperature 0."""
        return self.llm.complete(
            role="judge",
            model=self.model,
            system=None,
            messages=[{"role": "user", "content": prompt}],
            max_tokens=max_tokens,
            temperature=TEMPERATURE,
        )


# ---------------------------------------------------------------------------------------------------------------
# Normalisation of the lexical stand-ins (LoCoMo's official F1 has its own, in bench.analysis.scoring.locomo)

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”")


def normalize_answer(text: Any) -> str:
    """The stand-ins' normalisation: lowercase, drop commas, punctuation (typographic quotes too) and the words a,
    an, the and "and", collapse whitespace. Ints (some golds are years) become their decimal text."""
    lowered = str(text).replace(",", "").lower()
    return " ".join(_ARTICLES.sub(" ", lowered.translate(_PUNCTUATION)).split())


@cache
def _stemmer() -> Any:
    return SnowballStemmer("english")


def stems(text: Any) -> list[str]:
    """Normalised, Snowball-stemmed tokens of a text: the lexical judge's rule (rules revision 2), kept as it is so
    its cached verdicts stay valid; it is a stand-in, not LoCoMo's F1."""
    stemmer = _stemmer()
    return [stemmer.stem_word(token) for token in normalize_answer(text).split()]


# spaCy lists these as stop words, but in an answer they are the content: "May" is a month, "two" a count.
_KEPT_WORDS = frozenset(
    "may one two three four five six seven eight nine ten eleven twelve fifteen twenty forty fifty sixty hundred "
    "first second third last".split()
)


@cache
def _stop_words() -> frozenset[str]:
    """spaCy's English stop-word list, read from its data module without importing spaCy itself (the package
    import takes seconds; the list is a plain Python set literal with no imports)."""
    spec = importlib.util.find_spec("spacy")
    if spec is None or spec.origin is None:
        raise RuntimeError("spaCy is not installed: the lexical judge needs its English stop-word list")
    path = Path(spec.origin).parent / "lang" / "en" / "stop_words.py"
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return frozenset(namespace["STOP_WORDS"]) - _KEPT_WORDS


def content_stems(text: Any) -> list[str]:
    """Stems of the words that carry content: stop words removed before stemming, duplicates kept once, in order."""
    stemmer = _stemmer()
    stop = _stop_words()
    words = [w for w in normalize_answer(text).split() if w not in stop]
    return list(dict.fromkeys(stemmer.stem_word(w) for w in words))


# ---------------------------------------------------------------------------------------------------------------
# LLM-free scores


def evidence_recall(line_sources: Sequence[Sequence[str]], evidence: Sequence[str]) -> float | None:
    """Share of the question's evidence turns that at least one shown line came from (so a single-evidence
    question scores 0 or 1: "did a retrieved line come from the evidence turn?"). None when the question lists no
    evidence, since there is nothing to recall."""
    wanted = set(evidence)
    if not wanted:
        return None
    shown = {source for sources in line_sources for source in sources}
    return len(wanted & shown) / len(wanted)


# ---------------------------------------------------------------------------------------------------------------
# Offline stand-ins


_LINE_DATE_PREFIXES = (
    re.compile(r"^\[said (?P<date>[^\]]+)\]\s*"),  # engram compact:   [said 2023-05-08] fact - "quote"
    re.compile(r"^\[(?P<date>[^\]]+)\]\s*"),  # full-context / raw-turn-rag:   [8:56 pm on 20 July, 2023] Speaker: text
    re.compile(r"^(?P<date>\d{1,2}:\d{2} [ap]m on \d{1,2} \w+, \d{4}):\s*"),  # mem0:   <session date>: memory
)
_TRAILING_QUOTE = re.compile(r"\s+-\s+[\"“].*$", re.DOTALL)  # engram's " - "<source quote>" suffix
_TEMPORAL_QUESTION = re.compile(r"^\s*(when|what (year|month|date|day|time)|how long|which (year|month|day))\b", re.I)


def strip_decorations(line: str) -> tuple[str, str | None]:
    """(the statement a line carries, the date it was said if the line shows one)."""
    date = None
    body = line.strip()
    for pattern in _LINE_DATE_PREFIXES:
        match = pattern.match(body)
        if match:
            date, body = match.group("date"), body[match.end() :]
            break
    return _TRAILING_QUOTE.sub("", body).strip(), date


class ExtractiveAnswerer:
    """OFFLINE STAND-IN for the answer model: returns the shown line that best matches the question.

    Score of a line = 0.5 × (share of the question's content stems found in the line) + 0.5 × MiniLM cosine between
    question and line statement; ties go to the higher-ranked line. The answer is the line's statement without its
    date and quote decorations; for a when/what-year/how-long question the line's date is appended, because the date
    is then the answer. No lines → "I don't know". A question asked on a date (LongMemEval's) has that date in its
    request, as the LLM answerer's prompt has it, so its answers are keyed on it; the rules above do not read it.
    """

    model = EXTRACTIVE_ANSWERER_MODEL

    def __init__(self, gateway: Gateway, embedder: Embedder) -> None:
        self.gateway = gateway
        self.embedder = embedder

    def answer(
        self,
        question: str,
        lines: Sequence[str],
        speakers: Sequence[str],
        line_speakers: Sequence[str | None] | None = None,
        asked_on: str | None = None,
    ) -> Reply:
        shown = list(lines)
        body: dict[str, Any] = {"question": question, "lines": shown, "rules": EXTRACTIVE_ANSWERER_RULES}
        if asked_on is not None:  # only then: an undated question's request (every LoCoMo one) keeps its key
            body["asked_on"] = asked_on
        request = CallRequest(
            provider=OFFLINE_PROVIDER, endpoint="answer", model=self.model, body=body, purpose="answer"
        )
        result = self.gateway.call(request, lambda _: LiveResponse({"text": self.best_line_answer(question, shown)}))
        return Reply(result.body["text"], self.model, result.cost_usd, result.latency_ms, result.cached)

    def best_line_answer(self, question: str, lines: list[str]) -> str:
        if not lines:
            return NO_MEMORY_ANSWER
        parsed = [strip_decorations(line) for line in lines]
        statements = [statement or line for (statement, _), line in zip(parsed, lines, strict=True)]
        wanted = set(content_stems(question))
        overlap = np.array([len(wanted & set(content_stems(s))) / max(len(wanted), 1) for s in statements])
        vectors = self.embedder.embed([question, *statements])
        cosine = vectors[1:] @ vectors[0]
        scores = 0.5 * overlap + 0.5 * cosine
        best = int(np.argmax(np.round(scores, 6)))  # argmax keeps the first of equal scores: rank breaks ties
        statement, date = parsed[best][0] or lines[best], parsed[best][1]
        if date and _TEMPORAL_QUESTION.match(question):
            return f"{statement} (said {date})"
        return statement


MOST = 0.5  # CORRECT needs at least this share of the gold's content stems (see lexical_verdict)


def lexical_verdict(gold: Any, answer: str) -> tuple[str, list[str], list[str]]:
    """(label, gold stems found, gold stems missing).

    Normalisation: `normalize_answer` (lowercase; punctuation, commas and articles removed; an int gold such as a
    year becomes its digits), then English stop words (spaCy's list, minus month and number words such as "may",
    "two", "first") are dropped and the rest Snowball-stemmed, so "adopted"/"adopting" and "kids"/"kid" match.
    CORRECT needs both:
    - "most": at least half of the gold's distinct content stems (ceil(n/2) of n) appear among the answer's stems;
    - every number written in digits in the gold (a day, a year, a count) appears in the answer, because an answer
      with the wrong day or year is wrong however many other words it shares ("8 May 2023" for "7 May 2023").
    A gold made only of stop words (e.g. "not at all") is compared on all its stems instead.
    """
    expected = content_stems(gold) or list(dict.fromkeys(stems(gold)))
    if not expected:
        return WRONG, [], []
    present = set(stems(answer))
    found = [s for s in expected if s in present]
    missing = [s for s in expected if s not in present]
    numbers_present = all(s in present for s in expected if s.isdigit())
    label = CORRECT if numbers_present and len(found) >= math.ceil(MOST * len(expected)) else WRONG
    return label, found, missing


class LexicalJudge:
    """OFFLINE STAND-IN for the judge model: CORRECT when most of the gold answer's content words are in the
    answer (see `lexical_verdict`)."""

    model = LEXICAL_JUDGE_MODEL
    metric = judge_metric(LEXICAL_JUDGE_MODEL, f"rules-v{LEXICAL_JUDGE_RULES}")

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def judge(self, question: str, gold: Any, answer: str) -> Judgement:
        body = {"question": question, "gold": gold, "answer": answer, "rules": LEXICAL_JUDGE_RULES}

        def compute(_: CallRequest) -> LiveResponse:
            label, found, missing = lexical_verdict(gold, answer)
            return LiveResponse({"label": label, "found": found, "missing": missing})

        request = CallRequest(provider=OFFLINE_PROVIDER, endpoint="judge", model=self.model, body=body, purpose="judge")
        result = self.gateway.call(request, compute)
        raw = json.dumps({"found": result.body["found"], "missing": result.body["missing"]})
        return Judgement(result.body["label"], self.model, raw, result.cost_usd, result.latency_ms, result.cached)


# ---------------------------------------------------------------------------------------------------------------
# The judge a stack names (built by `bench.models.providers.Models.judge`)


def check_standin_judge_prompt(prompt: str) -> None:
    """The lexical stand-in has no prompt: any prompt but the default is refused."""
    judge_prompt_file(prompt)
    if prompt != DEFAULT_JUDGE_PROMPT:
        raise ConfigError(f"judge prompt {prompt!r}: the lexical stand-in judge {LEXICAL_JUDGE_MODEL} takes no prompt")
