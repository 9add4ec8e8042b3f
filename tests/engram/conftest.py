"""Helpers for engram's unit tests: a sentence-per-fact extractor, the scripted decider, the hashed test embedder."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from engram import Completion, Engram, ExtractedFact, Extraction, ExtractionContext, Flags, Message
from engram.deciders import ScriptedDecider
from engram.testing import HashEmbedder


@dataclass
class SentenceExtractor:
    """Test extractor: every sentence of a message is one fact about the speaker, worded as given."""

    name: str = "sentences"
    model: str = "sentences-test"
    latency_ms: float = 0.0
    contexts: list[ExtractionContext] = field(default_factory=list)

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        self.contexts.append(context)
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", message.text) if s.strip()]
        usage = Completion(text="", model=self.model, latency_ms=self.latency_ms).usage("extract", self.name)
        return Extraction(
            facts=[ExtractedFact(text=s.rstrip("."), subject=message.speaker, source_text=s) for s in sentences],
            usage=[usage],
        )


def day(n: int) -> datetime:
    """Conversation day n of a made-up conversation in 2023."""
    return datetime(2023, 5, 1, 10, 0) + timedelta(days=n)


@pytest.fixture
def decider() -> ScriptedDecider:
    return ScriptedDecider()


@pytest.fixture
def make_memory(tmp_path: Path, decider: ScriptedDecider):
    """Build an Engram over the scripted decider; call again with the same name to reopen the same file."""

    def build(flags: Flags = Flags(), name: str = "engram.db", **kwargs) -> Engram:
        return Engram(
            tmp_path / name,
            extractor=kwargs.pop("extractor", SentenceExtractor()),
            decider=decider,
            embedder=HashEmbedder(),
            flags=flags,
            **kwargs,
        )

    return build


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 embedder, loaded once per test session (it is the offline stack's main cost)."""
    from engram import MiniLMEmbedder

    return MiniLMEmbedder()
