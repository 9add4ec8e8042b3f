"""The twelve typed questions engram asks, with their option lists and rubrics.

The wording here is engram-bench's own. Each question's `version` carries a digest of its wording, so any edit
yields a new version and a new cache key.

Write path state: {"new_fact": {"text", "subject", "object"}, "source_message": text}.
Read path state:  {"query": text}.
Hygiene state:    {"subject": entity}.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from engram._exceptions import InvalidInput
from engram._types import NO, YES, Question

Cardinality = Literal["one", "many"]

# The 25 relations a fact's edge can carry, with how many values each holds at a time for one subject.
EDGE_CARDINALITY: Mapping[str, Cardinality] = MappingProxyType(
    {
        "lives_in": "one",
        "born_in": "one",
        "works_at": "one",
        "has_role": "one",
        "studies_at": "one",
        "member_of": "many",
        "married_to": "one",
        "partner_of": "one",
        "family_of": "many",
        "friend_of": "many",
        "colleague_of": "many",
        "owns": "many",
        "uses": "many",
        "prefers": "many",
        "dislikes": "many",
        "allergic_to": "many",
        "has_condition": "many",
        "follows_diet": "one",
        "hobby": "many",
        "habit": "many",
        "goal": "many",
        "plans": "many",
        "attended": "many",
        "speaks": "many",
        "related_to": "many",
    }
)
EDGE_TYPES: tuple[str, ...] = tuple(EDGE_CARDINALITY)
FALLBACK_EDGE = "related_to"
PLAN_RELATIONS = frozenset({"plans", "goal"})


def cardinality(relation: str) -> Cardinality:
    """card(rel): an unknown relation is treated as multi-valued, the choice that never licenses a close."""
    return EDGE_CARDINALITY.get(relation, "many")


# R and S of the article's §3.2.
RELATIONS: tuple[str, ...] = ("new", "duplicate", "refinement", "update", "contradiction", "negates")
SUPERSEDING = frozenset({"update", "contradiction", "negates"})  # S ⊂ R: answers that could close a stored fact
SUPPORTING = frozenset({"duplicate", "refinement"})  # answers that count as evidence for a stored fact
NONE_RELATION = "none"

WORTH_REMEMBERING = Question(
    id="worth_remembering",
    kind="yes_no",
    instructions="Would a personal assistant want to keep new_fact in its long-term memory of this person?",
    criteria={
        YES: "It is a lasting or useful detail about someone: who they are, people in their life, tastes, "
        "plans, commitments, health, work, routines or a notable thing that happened.",
        NO: "It is filler: greetings, small talk, passing remarks or talk about the conversation itself.",
    },
    default=YES,  # keeping a fact is reversible; losing it is not
)

FACT_KIND = Question(
    id="fact_kind",
    kind="choice",
    instructions="What sort of fact is new_fact?",
    criteria={
        "preference": "A taste: something the person likes, loves, dislikes or prefers.",
        "bio": "A stable personal attribute such as home, age, origin, job, schooling or languages.",
        "event": "Something that happened, or will happen, at a particular time.",
        "relationship": "A tie between people, or between a person and an organisation.",
        "task": "An intention, a goal or something the person means to do.",
        "opinion": "A judgement or belief that is not a matter of taste.",
    },
    default="bio",
)

_TEMPORAL_V1 = {
    "current": "It holds now.",
    "planned": "It is meant to happen later and does not hold yet.",
    "past": "It is about an earlier time only and says nothing about now.",
    "hypothetical": "It is a possibility, a condition or a wish, not something that holds.",
}
_TEMPORAL_V2 = {
    "current": "It holds now. A report of a change that has happened (moved, switched, sold, quit, started, "
    "finished, replaced) describes the new state, which holds now.",
    "planned": "It is meant to happen later and does not hold yet.",
    "past": "It is about an earlier time only and says nothing about now.",
    "hypothetical": "It is a possibility, a condition or a wish, not something that holds. A report of a change "
    "that has already happened is never hypothetical.",
}


def temporal_question(revision: int = 2) -> Question:
    """temporal_status, v1 (E0-E4 v1 arms) or v2 (the frozen arm and the article): same options, same order."""
    if revision not in (1, 2):
        raise InvalidInput(f"temporal_status revision: expected 1 or 2, found {revision!r}")
    return Question(
        id="temporal_status",
        kind="choice",
        instructions="When does new_fact hold, as the source message tells it?",
        criteria=_TEMPORAL_V2 if revision == 2 else _TEMPORAL_V1,
        default="current",
        revision=revision,
    )


TEMPORAL_STATUS = temporal_question(2)

_EDGE_RUBRICS = {
    "lives_in": "the place where the subject lives",
    "born_in": "the place where the subject was born",
    "works_at": "the employer or workplace of the subject",
    "has_role": "the subject's job title or role",
    "studies_at": "the school or university the subject attends",
    "member_of": "a group, club or team the subject belongs to",
    "married_to": "the subject's spouse",
    "partner_of": "the subject's romantic partner",
    "family_of": "a relative of the subject",
    "friend_of": "a friend of the subject",
    "colleague_of": "someone the subject works with",
    "owns": "something the subject owns",
    "uses": "a tool, product or service the subject uses",
    "prefers": "something the subject likes or prefers",
    "dislikes": "something the subject dislikes",
    "allergic_to": "something the subject is allergic to",
    "has_condition": "a health condition of the subject",
    "follows_diet": "the diet the subject follows",
    "hobby": "a pastime of the subject",
    "habit": "something the subject does regularly",
    "goal": "something the subject wants to achieve",
    "plans": "something the subject intends to do",
    "attended": "an event or place the subject went to",
    "speaks": "a language the subject speaks",
    "related_to": "any other link; use only when nothing above fits",
}
assert tuple(_EDGE_RUBRICS) == EDGE_TYPES

EDGE_TYPE = Question(
    id="edge_type",
    kind="choice",
    instructions="Which relation links new_fact.subject to new_fact.object?",
    criteria={name: f"The object is {rubric}." for name, rubric in _EDGE_RUBRICS.items()},
    default=FALLBACK_EDGE,
)

DURABILITY = Question(
    id="durability",
    kind="choice",
    instructions="How long is new_fact likely to stay true?",
    criteria={
        "permanent": "Practically never changes.",
        "long_term": "Holds for months or years.",
        "short_lived": "Holds for days or weeks.",
    },
    default="long_term",
)

SENSITIVITY = Question(
    id="sensitivity",
    kind="choice",
    instructions="Does new_fact touch a sensitive area?",
    criteria={
        "none": "Nothing sensitive.",
        "health": "Physical or mental health.",
        "financial": "Money, income, debts or accounts.",
        "relationship": "Romantic, sexual or intimate family matters.",
        "credentials": "A password, key, PIN, security answer or identity number.",
    },
    default="none",
)

_RELATION_RUBRICS = {
    "new": "They are about different things, and both can hold at once.",
    "duplicate": "They say the same thing.",
    "refinement": "new_fact adds detail to existing_fact without making it false.",
    "update": "Same attribute of the same subject; new_fact's value replaces the older one, which no longer holds.",
    "contradiction": "They cannot both hold, and this is not a change over time.",
    "negates": "The very thing existing_fact states (same subject, relation and object) has stopped, ended, been "
    "lost or been undone.",
}


def relation_questions(revision: int = 2) -> tuple[Question, Question]:
    """relation_to_candidate and its second phrasing (the recheck), with identical options and rubrics.

    v1 has five options; v2 (the article's R) appends `negates`.
    """
    if revision not in (1, 2):
        raise InvalidInput(f"relation_to_candidate revision: expected 1 or 2, found {revision!r}")
    options = RELATIONS if revision == 2 else tuple(r for r in RELATIONS if r != "negates")
    criteria = {o: _RELATION_RUBRICS[o] for o in options}
    first = Question(
        id="relation_to_candidate",
        kind="choice",
        instructions="How does new_fact relate to existing_fact?",
        criteria=criteria,
        default="new",  # "new" never touches a stored fact
        revision=revision,
    )
    second = Question(
        id="relation_to_candidate_recheck",
        kind="choice",
        instructions="Now that new_fact has been said, what becomes of existing_fact?",
        criteria=criteria,
        default="new",
        revision=revision,
    )
    return first, second


RELATION_TO_CANDIDATE, RELATION_TO_CANDIDATE_RECHECK = relation_questions(2)

PLAN_FULFILLED = Question(
    id="plan_fulfilled",
    kind="yes_no",
    instructions="existing_fact is a plan or goal. Does new_fact say that it actually happened?",
    criteria={
        YES: "new_fact reports that the planned thing took place or was achieved.",
        NO: "new_fact is unrelated, repeats the plan, adds detail to it, or reports progress short of completion.",
    },
    default=NO,  # a missed close is recoverable; a wrong close is the failure engram exists to avoid
)

RELEVANT_TO_QUERY = Question(
    id="relevant_to_query",
    kind="yes_no",
    instructions="Does memory help answer the query?",
    criteria={
        YES: "It states, or plainly implies, part of the answer.",
        NO: "It is off-topic or only shares a word with the query.",
    },
    default=NO,
)

QUERY_RELATION = Question(
    id="query_relation",
    kind="choice",
    instructions="Which relation about a person is the query asking for?",
    criteria={
        **{name: f"It asks for {rubric}." for name, rubric in _EDGE_RUBRICS.items() if name != FALLBACK_EDGE},
        NONE_RELATION: "None of these: general knowledge, an opinion, or a relation not listed.",
    },
    default=NONE_RELATION,
)

SAME_FACT = Question(
    id="same_fact",
    kind="yes_no",
    instructions="Are fact_a and fact_b the same fact?",
    criteria={
        YES: "Either one could be removed without losing any information.",
        NO: "Each says something the other does not.",
    },
    default=NO,
)

# The six questions asked about every extracted fact, keyed by their ask key (= question id).
FACT_QUESTIONS: tuple[Question, ...] = (
    WORTH_REMEMBERING,
    FACT_KIND,
    TEMPORAL_STATUS,
    EDGE_TYPE,
    DURABILITY,
    SENSITIVITY,
)

ALL_QUESTIONS: tuple[Question, ...] = (
    WORTH_REMEMBERING,
    FACT_KIND,
    TEMPORAL_STATUS,
    EDGE_TYPE,
    DURABILITY,
    SENSITIVITY,
    RELATION_TO_CANDIDATE,
    RELATION_TO_CANDIDATE_RECHECK,
    PLAN_FULFILLED,
    RELEVANT_TO_QUERY,
    QUERY_RELATION,
    SAME_FACT,
)

BY_ID: Mapping[str, Question] = MappingProxyType({q.id: q for q in ALL_QUESTIONS})


def fact_questions(temporal_revision: int = 2) -> tuple[Question, ...]:
    """The six per-fact questions with the temporal_status wording a flag set selects."""
    return tuple(temporal_question(temporal_revision) if q.id == "temporal_status" else q for q in FACT_QUESTIONS)


# Ask keys, one place so the write path, the read path and every backend agree on them.
def relation_key(i: int) -> str:
    return f"relation_to_candidate__{i}"


def recheck_key(i: int) -> str:
    return f"relation_to_candidate_recheck__{i}"


def plan_key(i: int) -> str:
    return f"plan_fulfilled__{i}"


def relevance_key(i: int) -> str:
    return f"relevant_to_query__{i}"


QUERY_RELATION_KEY = "query_relation"

__all__ = [
    "ALL_QUESTIONS",
    "BY_ID",
    "DURABILITY",
    "EDGE_CARDINALITY",
    "EDGE_TYPE",
    "EDGE_TYPES",
    "FACT_KIND",
    "FACT_QUESTIONS",
    "FALLBACK_EDGE",
    "NONE_RELATION",
    "PLAN_FULFILLED",
    "PLAN_RELATIONS",
    "QUERY_RELATION",
    "QUERY_RELATION_KEY",
    "RELATIONS",
    "RELATION_TO_CANDIDATE",
    "RELATION_TO_CANDIDATE_RECHECK",
    "RELEVANT_TO_QUERY",
    "SAME_FACT",
    "SENSITIVITY",
    "SUPERSEDING",
    "SUPPORTING",
    "TEMPORAL_STATUS",
    "WORTH_REMEMBERING",
    "Cardinality",
    "cardinality",
    "fact_questions",
    "plan_key",
    "recheck_key",
    "relation_key",
    "relation_questions",
    "relevance_key",
    "temporal_question",
]
