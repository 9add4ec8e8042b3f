"""Extraction: which facts does a message state?

Two extractors implement `engram._protocols.Extractor`:

- `Mem0PromptExtractor`: the article's extraction. One claude-haiku-4-5 call per message with mem0 2.1.0's additive
  extraction prompt, imported from mem0 (never retyped), fed exactly the inputs mem0's `Memory.add` builds: the
  last 10 messages, the 10 stored facts most similar to the message, and a pinned "current date".
- `RulesExtractor`: an OFFLINE STAND-IN with no model at all. Each sentence that states something becomes a draft
  fact, first person rewritten to the speaker's name, small talk and questions dropped. It is a stand-in for the
  LLM and is labelled so in its name and model.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from typing import Any, Literal

from engram import _lexical as lexical
from engram import config
from engram._exceptions import InvalidInput
from engram._protocols import LLM
from engram._types import ExtractedFact, Extraction, ExtractionContext, Message

UNSPECIFIED = "unspecified"


# --------------------------------------------------------------------------------------------------------------
# mem0's prompt on an LLM
# --------------------------------------------------------------------------------------------------------------


def _mem0_prompts() -> Any:
    # mem0 reads MEM0_TELEMETRY at import time; it must never phone home from here.
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    # local import: mem0 (the run extra) reads MEM0_TELEMETRY at import, set just above
    import mem0.configs.prompts as prompts

    return prompts


def locomo_time(when: datetime) -> str:
    """LoCoMo's date format, which the original fed to mem0: "1:56 pm on 8 May, 2023"."""
    hour = when.hour % 12 or 12
    meridiem = "am" if when.hour < 12 else "pm"
    return f"{hour}:{when.minute:02d} {meridiem} on {when.day} {when:%B}, {when.year}"


def message_line(message: Message) -> str:
    """One message as the original gave it to mem0: "[<LoCoMo date>] <speaker>: <text>"."""
    return f"[{locomo_time(message.when)}] {message.speaker}: {message.text}"


def build_extraction_request(message: Message, context: ExtractionContext) -> tuple[str, str]:
    """(system prompt, user prompt) for one message, exactly as mem0 2.1.0's `Memory.add` would build them.

    mem0 passes every prior message with role "user" (LoCoMo turns are all user-side), the new message through its
    `parse_messages` ("user: <content>\\n"), existing memories as [{"id": "0", "text": ...}], no summary and no
    recently extracted memories; the current date is pinned so the prompt, and its cache key, are stable.
    """
    prompts = _mem0_prompts()
    # local import: mem0 is the run extra, which the analysis-only install lacks
    from mem0.memory.utils import parse_messages

    previous = list(context.previous)[-config.EXTRACT_PREVIOUS_MESSAGES :]
    last_k = [{"role": "user", "content": message_line(m)} for m in previous]
    existing = [{"id": str(i), "text": text} for i, text in enumerate(context.similar_facts)]
    new_messages = parse_messages([{"role": "user", "content": message_line(message)}])
    user_prompt = prompts.generate_additive_extraction_prompt(
        existing_memories=existing,
        new_messages=new_messages,
        last_k_messages=last_k,
        current_date=context.current_date,
    )
    return prompts.ADDITIVE_EXTRACTION_PROMPT, user_prompt


def parse_memory_list(reply: str) -> list[dict[str, Any]]:
    """The `memory` list of a mem0-style JSON reply, parsed the way mem0 does (code fences stripped, outermost
    JSON object as a fallback); an unreadable reply is an empty list, as in mem0."""
    # local import: mem0 is the run extra, which the analysis-only install lacks
    from mem0.memory.utils import extract_json, remove_code_blocks

    body = remove_code_blocks(reply)
    if not body:
        return []
    try:
        data = json.loads(body, strict=False)
    except json.JSONDecodeError:
        try:
            data = json.loads(extract_json(body), strict=False)
        except json.JSONDecodeError:
            return []
    items = data.get("memory", []) if isinstance(data, dict) else []
    return [item for item in items if isinstance(item, dict)]


class Mem0PromptExtractor:
    """The article's extractor: claude-haiku-4-5 with mem0 2.1.0's additive extraction prompt, via `LLM`."""

    name = "anthropic"

    def __init__(self, llm: LLM, model: str = config.EXTRACT_MODEL) -> None:
        self._llm = llm
        self.model = model

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        system, user = build_extraction_request(message, context)
        # mem0's defaults for its LLM calls: 2000 output tokens, temperature 0.1.
        completion = self._llm.complete(
            role="extract",
            model=self.model,
            system=system,
            messages=[{"role": "user", "content": user}],
            max_tokens=config.UPDATE_MAX_TOKENS,
            temperature=config.UPDATE_TEMPERATURE,
        )
        texts = [str(item.get("text", "")).strip() for item in parse_memory_list(completion.text)]
        # mem0 drops identical texts by hash; empty texts carry nothing.
        unique = list(dict.fromkeys(t for t in texts if t))
        facts = [
            ExtractedFact(text=t, subject=message.speaker, object=UNSPECIFIED, source_text=message.text) for t in unique
        ]
        return Extraction(facts=facts, usage=[completion.usage("extract", backend=self.name)])


# --------------------------------------------------------------------------------------------------------------
# The offline stand-in
# --------------------------------------------------------------------------------------------------------------

# Sentences opening like these talk to or about the listener, not about the speaker's life.
_SECOND_PERSON = frozenset({"you", "your", "yours", "u", "yourself"})
# Subjects the stand-in cannot resolve without the conversation ("It's special to me", "That was fun").
_UNRESOLVED_SUBJECTS = frozenset({"it", "that", "this", "these", "those", "they", "he", "she", "there"})
# Interjections that open a statement without being part of it ("Yeah, I painted that lake").
_LEADING_FILLER = re.compile(
    r"^(?:(?:yeah|yep|yes|wow|well|oh|so|hey|haha|lol|ok|okay|um|btw|by the way|anyway|actually|honestly)"
    r"[,!.]*\s+)+",
    re.IGNORECASE,
)


def states_something(sentence: str) -> bool:
    """Does the sentence assert a fact, as opposed to asking, greeting, reacting or addressing the listener?"""
    if lexical.is_question(sentence) or lexical.is_small_talk(sentence):
        return False
    doc = lexical.parse(sentence)
    has_verb = any(t.pos_ in {"VERB", "AUX"} for t in doc)
    subjects = [t for t in doc if t.dep_ in {"nsubj", "nsubjpass"}]
    if not has_verb or not subjects:
        return False  # fragments ("Oh wow, the beach!") and imperatives state nothing about anyone
    subject_words = {t.lower_ for t in subjects[0].subtree}
    if subject_words & _SECOND_PERSON or subjects[0].lower_ in _UNRESOLVED_SUBJECTS:
        return False
    return bool(lexical.content_lemmas(sentence))


def _object_phrase(text: str) -> str:
    """The object side of a fact, as its content words in sentence order ("unspecified" when there are none)."""
    wanted = lexical.frame(text).object
    words = [t.text for t in lexical.parse(text) if t.lemma_.lower() in wanted]
    return " ".join(dict.fromkeys(words)) or UNSPECIFIED


def _predicate_hint(text: str) -> str:
    evidence = lexical.edge_evidence(text)
    if not evidence:
        return "related_to"
    # Highest count wins; ties go to the relation listed first, so the hint is deterministic.
    order = list(lexical.EDGE_LEMMAS)
    return max(evidence, key=lambda r: (evidence[r], -order.index(r)))


# v4: words that introduce a person by their tie to the speaker ("my friend Tariq", "my sister Lena"): a fact whose
# subject is such a named person is that person's, not the speaker's. A bare name is left the speaker's fact, since
# it may be a pet's or a thing's ("Biscuit died": the speaker's loss, compared with "I have a dog named Biscuit").
_PERSON_TIES = frozenset(
    {
        "friend",
        "sister",
        "brother",
        "mother",
        "mom",
        "mum",
        "father",
        "dad",
        "son",
        "daughter",
        "cousin",
        "aunt",
        "uncle",
        "neighbor",
        "neighbour",
        "colleague",
        "coworker",
        "boss",
        "roommate",
        "flatmate",
        "partner",
        "wife",
        "husband",
        "boyfriend",
        "girlfriend",
        "grandma",
        "grandpa",
        "grandmother",
        "grandfather",
        "niece",
        "nephew",
    }
)


def _subjectless_first_person(sentence: str) -> str | None:
    """v4: "Sold my Civic and bought a Tesla yesterday." leaves its "I" out; spaCy's small model then reads an
    imperative or a name and the sentence states nothing. With "I" put back, a sentence whose main verb is in the
    past tense is the speaker's report ("I sold my Civic ..."); an imperative ("Call me later") stays a command,
    since its verb is not in the past tense."""
    stated = _LEADING_FILLER.sub("", sentence).strip()
    if not stated or lexical.is_question(stated) or stated.split()[0].lower() in {"i", "we", "i'm", "i've", "i'd"}:
        return None
    doc = lexical.parse(stated)
    if any(t.dep_ in {"nsubj", "nsubjpass", "expl"} for t in doc):
        return None
    with_subject = "I " + (stated[:1].lower() + stated[1:] if not stated[:2].isupper() else stated)
    head = next((t for t in lexical.parse(with_subject) if t.dep_ == "ROOT"), None)
    if head is None or head.tag_ != "VBD" or not any(c.lower_ == "i" and c.dep_ == "nsubj" for c in head.children):
        return None
    return with_subject if states_something(with_subject) else None


def _tied_names(text: str) -> set[str]:
    """The names the text introduces by a tie to the speaker ("my cousin Ilse" -> {"Ilse"})."""
    names: set[str] = set()
    for token in lexical.parse(text):
        if token.pos_ == "PROPN" and any(
            w.lemma_.lower() in _PERSON_TIES and any(c.lower_ in {"my", "our"} for c in w.children)
            for w in (token.head, *token.children)
        ):
            names.add(token.text)
    return names


def _named_person_subject(sentence: str, known: set[str]) -> str | None:
    """v4: the named person a sentence is about when the speaker ties them to herself, here ("My friend Tariq moved
    to Leeds" -> "Tariq") or in an earlier message (`known`: "Tariq lives in York now"); None when the sentence is
    about the speaker or names nobody that way (a bare name may be a pet's: it stays the speaker's fact)."""
    doc = lexical.parse(sentence)
    subject = next((t for t in doc if t.dep_ in {"nsubj", "nsubjpass"}), None)
    if subject is None:
        return None
    if any(t.lower_ in {"i", "we"} for t in subject.subtree):
        return None  # "my uncle Piet and I went fishing": the speaker's own report too
    names = [t.text for t in subject.subtree if t.pos_ == "PROPN"]
    persons = [n for n in names if n in known | _tied_names(sentence)]
    return persons[0] if persons else None


def _unnamed_tie_subject(sentence: str, speaker: str) -> str | None:
    """v4: the person a sentence is about when the speaker names them only by their tie ("My brother sold his boat"
    -> "Oskar's brother"), so it is compared with that person's facts, not the speaker's. A pet ("my dog") is no
    tie: its news stays the speaker's, to meet "I have a dog named ..."."""
    doc = lexical.parse(sentence)
    subject = next((t for t in doc if t.dep_ in {"nsubj", "nsubjpass"}), None)
    if subject is None or any(t.lower_ in {"i", "we"} for t in subject.subtree):
        return None
    tie = subject.lemma_.lower()
    if tie not in _PERSON_TIES or not any(c.lower_ in {"my", "our"} for c in subject.children):
        return None
    return f"{speaker}'s {tie}"


class RulesExtractor:
    """OFFLINE STAND-IN for LLM extraction: one draft per stating sentence, first person resolved to the speaker.

    Deterministic: the same message always yields the same drafts. It reads only the message (the context is
    accepted for protocol compatibility), so it cannot resolve "she" or "it" the way an LLM would.

    `version` 4 (the default since 2026-12-05) or 3, the previous default (mem0's extraction stand-in keeps it), which
    lacks what v4 adds: v4 keeps first-person
    statements that leave their "I" out ("Moved to Leeds in May.") and makes a fact about a person the speaker names
    by a tie ("my cousin Ilse ...") that person's fact (subject Ilse), or names only by the tie ("my brother ...",
    subject "<speaker>'s brother"), so it is compared with that person's facts and not taken as the speaker's own. The version is in the model name, hence in every cache key.
    """

    name = "rules"

    def __init__(self, version: Literal[3, 4] = 4) -> None:
        if version not in (3, 4):
            raise InvalidInput(f"RulesExtractor version: expected 3 or 4, found {version!r}")
        self.version = version
        # v3: the relation hints of rules-standin-v6/v7's lexicon; v4: subjectless statements and named persons
        self.model = f"rules-extractor-standin-v{version}"

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        drafts: list[ExtractedFact] = []
        seen: set[str] = set()
        known = {n for m in context.previous for n in _tied_names(m.text)} if self.version >= 4 else set()
        for said in lexical.sentences(message.text):
            sentence = said
            if not states_something(sentence):
                restored = _subjectless_first_person(sentence) if self.version >= 4 else None
                if restored is None:
                    continue
                sentence = restored
            stated = _LEADING_FILLER.sub("", sentence).strip()
            text = lexical.first_person_to(stated[:1].upper() + stated[1:], message.speaker).rstrip(" .!;,")
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            person = None
            if self.version >= 4:
                person = _named_person_subject(stated, known) or _unnamed_tie_subject(stated, message.speaker)
            drafts.append(
                ExtractedFact(
                    text=text,
                    subject=person or message.speaker,
                    object=_object_phrase(text),
                    predicate_hint=_predicate_hint(text),
                    source_text=said,  # the words as said, without a restored "I"
                )
            )
        return Extraction(facts=drafts)
