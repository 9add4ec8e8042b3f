"""Thin wrappers that push any engram backend through the gateway, so local stand-ins are cached, counted and
replayed exactly like paid calls (provider "offline", $0).

- `GatewayDecider(inner, gateway)`: per-question cache, same key scheme as Jev (`{"state", "question": payload}`),
  model = `inner.model`; only the missing asks reach `inner.ask`, in one call.
- `GatewayExtractor(inner, gateway)`: key body = the extractor's full input (message and context).
- `OfflineLLM`: base class for local answerer/judge stand-ins; subclasses implement `respond()`.
- (the token-counter protocol is `bench.models.tokens.TokenCounter`)
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from bench.models.cache import OFFLINE_PROVIDER, CallRequest
from bench.models.gateway import Gateway, LiveResponse
from engram import (
    Ask,
    Completion,
    Decision,
    DecisionBackend,
    ExtractedFact,
    Extraction,
    ExtractionContext,
    Extractor,
    Message,
    Usage,
)


def jsonable(value: Any) -> Any:
    """Plain JSON for a key or an entry: dataclasses by field, datetimes as ISO text, sequences as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [jsonable(v) for v in value]
    return value


class GatewayDecider:
    """Any `DecisionBackend`, cached per question. Decisions report the latency recorded for their batch."""

    def __init__(self, inner: DecisionBackend, gateway: Gateway, provider: str = OFFLINE_PROVIDER) -> None:
        self.inner = inner
        self.gateway = gateway
        self.provider = provider
        self.name = inner.name
        self.model = inner.model

    def request_for(self, state: dict, ask: Ask) -> CallRequest:
        return CallRequest(self.provider, "decide", self.model, {"state": state, "question": ask.payload()}, "decide")

    def ask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        requests = [self.request_for(state, ask) for ask in asks]
        ask_by_key = {request.key(): ask for request, ask in zip(requests, asks)}

        def live(missing: list[CallRequest]) -> list[LiveResponse]:
            sent = [ask_by_key[r.key()] for r in missing]
            decisions = self.inner.ask(state, sent)
            return [
                LiveResponse(
                    body={"decision": _decision_json(decisions.get(a.key))},
                    model=self.model,
                    cost_usd=decisions[a.key].cost_usd if a.key in decisions else 0.0,
                )
                for a in sent
            ]

        results = self.gateway.call_batch(requests, live)
        out = {}
        for ask, result in zip(asks, results):
            common: dict[str, Any] = {
                "target": ask.target,
                "latency_ms": result.latency_ms,
                "cost_usd": result.cost_usd,
            }
            stored = result.body.get("decision")
            if stored is None:
                out[ask.key] = Decision.degraded(
                    ask.question,
                    backend=self.name,
                    model=result.model,
                    error=f"{self.name} returned no answer for this question",
                    **common,
                )
            else:
                decision = Decision.from_json(stored)
                out[ask.key] = dataclasses.replace(decision, question=ask.question.id, **common)
        return out


def _decision_json(decision: Decision | None) -> dict[str, Any] | None:
    return None if decision is None else decision.to_json()


class GatewayExtractor:
    """Any `Extractor`, cached on its full input. Returns one usage record for the (cached or fresh) call."""

    def __init__(self, inner: Extractor, gateway: Gateway, provider: str = OFFLINE_PROVIDER) -> None:
        self.inner = inner
        self.gateway = gateway
        self.provider = provider
        self.name = inner.name
        self.model = inner.model

    def request_for(self, message: Message, context: ExtractionContext) -> CallRequest:
        body = {"message": jsonable(message), "context": jsonable(context)}
        return CallRequest(self.provider, "extract", self.model, body, "extract")

    def extract(self, message: Message, context: ExtractionContext) -> Extraction:
        def live(request: CallRequest) -> LiveResponse:
            extraction = self.inner.extract(message, context)
            return LiveResponse(
                body={"facts": [jsonable(fact) for fact in extraction.facts]},
                input_tokens=sum(u.input_tokens for u in extraction.usage),
                output_tokens=sum(u.output_tokens for u in extraction.usage),
                cost_usd=math.fsum(u.cost_usd for u in extraction.usage),
                model=self.model,
            )

        result = self.gateway.call(self.request_for(message, context), live)
        facts = [_fact_from_json(data) for data in result.body["facts"]]
        usage = Usage(
            role="extract",
            backend=self.name,
            model=result.model,
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cached=result.cached,
        )
        return Extraction(facts=facts, usage=(usage,))


def _fact_from_json(data: Mapping[str, Any]) -> ExtractedFact:
    valid_from = data.get("valid_from")
    return ExtractedFact(**{**data, "valid_from": datetime.fromisoformat(valid_from) if valid_from else None})


class OfflineLLM(ABC):
    """A local, deterministic stand-in for a chat model (answerer, judge), served through the gateway ($0).
    Subclasses set `model` (labelled a stand-in, e.g. "answer-standin-v1") and implement `respond()`."""

    model: str  # the stand-in that answers, with its version: what a result names
    # When set, the (model, requested model) names its calls are keyed under instead of (model, the caller's
    # model): the names the shipped cache subsets were recorded with, kept so they stay valid.
    key_names: tuple[str, str] | None = None

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    @abstractmethod
    def respond(
        self, *, role: str, system: str | None, messages: list[dict], max_tokens: int, temperature: float | None
    ) -> str:
        """The stand-in's reply text, a pure function of its inputs."""

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        # `model` is the model the caller asked for; the stand-in answers under its own (labelled) name.
        key_model, requested = self.key_names or (self.model, model)
        body = {
            "requested_model": requested,
            "system": system,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        request = CallRequest(OFFLINE_PROVIDER, role, key_model, body, role)

        def live(_: CallRequest) -> LiveResponse:
            text = self.respond(
                role=role, system=system, messages=messages, max_tokens=max_tokens, temperature=temperature
            )
            return LiveResponse(body={"text": text}, model=key_model, cost_usd=0.0)

        result = self.gateway.call(request, live)
        return Completion(
            text=result.body["text"],
            model=self.model,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            cached=result.cached,
        )
