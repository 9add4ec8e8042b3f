"""engram: an agent-memory system whose every write decision is a typed question with a probability per option.

The public API is what this module exports (`__all__`, pinned by a test), plus three public modules:
`engram.config` (every threshold, one file), `engram.questions` (the typed question catalogue) and
`engram.deciders` (the decision backends that ship with engram), and `engram.testing` (test doubles). Every other
module is private (its name starts with an underscore) and may change without notice; each public name has
exactly one import path.
"""

from engram import config
from engram._answers import decision_from_answer, validate_answer
from engram._api import Engram
from engram._embed import MiniLMEmbedder
from engram._escalation import Escalation, Escalator, Mem0UpdateEscalator
from engram._exceptions import DecisionError, EngramError, InvalidInput, LLMError, MalformedAnswer, MissingInput
from engram._extract import Mem0PromptExtractor, RulesExtractor
from engram._flags import Flags
from engram._hygiene import HygieneReport
from engram._llm_decider import RelationDecider
from engram._protocols import LLM, DecisionBackend, Embedder, Extractor
from engram._read import Retrieval
from engram._types import (
    Ask,
    Completion,
    Decision,
    ExtractedFact,
    Extraction,
    ExtractionContext,
    Fact,
    FactOutcome,
    Line,
    Message,
    Question,
    Usage,
    WriteReport,
)

__all__ = [
    "LLM",
    "Ask",
    "Completion",
    "Decision",
    "DecisionBackend",
    "DecisionError",
    "Embedder",
    "Engram",
    "EngramError",
    "Escalation",
    "Escalator",
    "ExtractedFact",
    "Extraction",
    "ExtractionContext",
    "Extractor",
    "Fact",
    "FactOutcome",
    "Flags",
    "HygieneReport",
    "InvalidInput",
    "LLMError",
    "Line",
    "MalformedAnswer",
    "Mem0PromptExtractor",
    "Mem0UpdateEscalator",
    "Message",
    "MiniLMEmbedder",
    "MissingInput",
    "Question",
    "RelationDecider",
    "Retrieval",
    "RulesExtractor",
    "Usage",
    "WriteReport",
    "config",
    "decision_from_answer",
    "validate_answer",
]
