"""Every threshold and cap engram uses, in one file. `tests/engram/test_config_matches_article.py` checks each value
against the article's §3, so the paper and the code cannot drift apart silently.
"""

from __future__ import annotations

from typing import Literal

# The five thresholds of the article's §3.
THETA_ACT = 0.85  # a decision acts at pi* >= theta_act (also the bar for g_T and g_A)
THETA_ESC = 0.60  # a superseding relation with pi* < theta_esc is escalated to an LLM
THETA_REL = 0.5  # a retrieved fact is relevant when rho > theta_rel (strictly greater)
THETA_CLOSE = 0.25  # an open fact closes when its belief drops below this
THETA_OPEN = 0.60  # a belief-closed fact reopens when its belief rises above this

# Belief lives in [b_min, b_max] so that log-odds stay finite (§3.1).
BELIEF_MIN = 0.02
BELIEF_MAX = 0.98
INITIAL_TENTATIVE_BELIEF = 0.5  # a fact stored in the "tentative" zone starts undecided

# Write path caps (§3.2).
CANDIDATE_K = 10  # Top_10 s_cos(f, .)
GRAPH_CANDIDATE_K = 10  # Top_10 G(f)
EXTRACT_PREVIOUS_MESSAGES = 10  # m_{t-10} .. m_{t-1}
EXTRACT_SIMILAR_FACTS = 10  # Top_10 s_cos(m_t, .)
RARE_ENTITY_MIN_COMMON = 3  # an entity is "common" in >= max(3, 20% of the pool) facts; rare otherwise
RARE_ENTITY_COMMON_SHARE = 0.2

# Read path caps (§3.3).
SHORTLIST_K = 30  # A(q) = Top_30 s_cos(q, .)
FLOOR_K = 10  # the ten closest facts are kept even if judged irrelevant
RELATION_PULL_K = 10  # currently valid facts of a named relation pulled in
HISTORY_DEPTH = 5  # how many superseded generations a kept fact brings along

# Choices the article leaves unstated, set to what the original implementation did (no committed result depends on
# another value). Each has a test in tests/engram/test_unstated_settings.py; the article test records them apart.
#
# Where an acted-on fact's belief starts. None: clamp(pi*), the confidence of the answer that acted (the original).
# Consequence: a fact stored with no candidates acts at pi* = 1 and starts at b_max = 0.98, so one confirmed
# superseding answer (pi and pi' both counting) closes it only when both are at least about 0.924, the p with
# 2 logit p = logit b_max - logit theta_close, which is above theta_act = 0.85; an answer pair at 0.85-0.92 leaves it
# open just above theta_close and a second such answer closes it. A number here starts every acted fact there.
INITIAL_ACTED_BELIEF: float | None = None
# Whose fact an extracted fact is. "extracted": the subject the extractor names (the mem0 prompt and the rules
# extractor name the speaker unless the sentence is about someone else), so the cardinality gate's same-subject test
# and G(f) look at that person's facts. "speaker": every fact is the speaker's, whatever the extractor said.
FACT_SUBJECT: Literal["extracted", "speaker"] = "extracted"
# The read path pulls in the valid facts of the relation a question names when the query_relation answer chose a
# relation with at least this confidence (the original used theta_act's value).
RELATION_PULL_CONFIDENCE = 0.85

# Models (names only; calls go through the LLM/DecisionBackend protocols).
EXTRACT_MODEL = "claude-haiku-4-5"
LLM_MODEL = "claude-sonnet-4-6"  # escalation and the LLM decider
JEV_MODEL = "jev-1.13.0"
PINNED_CURRENT_DATE = "2026-09-23"  # the "current date" in extraction prompts, pinned for cache stability

# The mem0 update prompt call as the original made it (escalation and the LLM decider).
UPDATE_MAX_TOKENS = 2000
UPDATE_TEMPERATURE = 0.1

# The logprob decider (typed decisions read from an OpenAI-compatible endpoint's log-probabilities).
LOGPROB_TOP_TOKENS = 20  # alternatives asked for at the answer's position: the most OpenAI's chat API returns

# The embedder's torch threads ($ENGRAM_EMBED_THREADS): torch sizes its OpenMP pool by this number, and 999999
# ended the process in a segmentation fault, so a number past any machine's cores is refused instead of tried.
EMBED_THREADS_ENV = "ENGRAM_EMBED_THREADS"
MAX_EMBED_THREADS = 256
