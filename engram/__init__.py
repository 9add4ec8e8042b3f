"""engram: an agent-memory system whose every write decision is a typed question with a probability per option.

Public API (other components use only these):
    Engram, Flags, config, and the records Fact, Line, Message, Decision, Ask, Question, Usage, Completion,
    WriteReport, Extraction, ExtractedFact, ExtractionContext, and the protocols Embedder, DecisionBackend, LLM,
    Extractor.
"""

from engram import config
from engram.api import Engram
from engram.flags import Flags
from engram.protocols import LLM, DecisionBackend, DecisionError, Embedder, Extractor, LLMError
from engram.read import Retrieval
from engram.types import (
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
from engram.write import Escalation, Escalator, Mem0UpdateEscalator

__all__ = [
    "Ask",
    "Completion",
    "DecisionBackend",
    "DecisionError",
    "Decision",
    "Embedder",
    "Engram",
    "Escalation",
    "Escalator",
    "ExtractedFact",
    "Extraction",
    "ExtractionContext",
    "Extractor",
    "Fact",
    "FactOutcome",
    "Flags",
    "LLM",
    "LLMError",
    "Line",
    "Mem0UpdateEscalator",
    "Message",
    "Question",
    "Retrieval",
    "Usage",
    "WriteReport",
    "config",
]
