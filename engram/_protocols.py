"""The four doors through which engram reaches a model. `bench` implements them with its gateway (cache, budget,
ledger); engram's offline stand-ins and test doubles implement them directly. engram never imports `bench`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from engram._types import Ask, Completion, Decision, Extraction, ExtractionContext, Message


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised, so a dot product is the cosine."""
        ...


@runtime_checkable
class DecisionBackend(Protocol):
    name: str  # "jev" | "rules" | "llm" | "scripted" ...: recorded on every Decision
    model: str

    def ask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        """One round trip. Returns a Decision per ask key; a key may be missing or degraded (fallback=True)
        without affecting the others. Raises only when the whole request failed."""
        ...


@runtime_checkable
class LLM(Protocol):
    """A chat model, used by extraction, escalation and the LLM decider."""

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion: ...


@runtime_checkable
class Extractor(Protocol):
    name: str
    model: str

    def extract(self, message: Message, context: ExtractionContext) -> Extraction: ...
