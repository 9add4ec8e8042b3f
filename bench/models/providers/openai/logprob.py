"""The `logprob` decision backend behind the gateway: engram's typed questions answered by any OpenAI-compatible chat
endpoint that reports log-probabilities (OpenAI, vLLM, llama.cpp's server, ollama).

Each ask is one chat call through the `openai` provider's client (`OpenAIChat.aask`: the prompt of
`engram.deciders.logprob_prompt`, one greedy token, its `config.LOGPROB_TOP_TOKENS` most likely alternatives), so it
is cached, budgeted and replayed like every other call. The asks of one state go out together and the client's
semaphore (the stack's `concurrency`) bounds how many are in flight. The first position's top tokens become the
options' distribution (`engram.deciders.logprob_decision`), and each decision records the tokens it was read from.

An endpoint that returns no log-probabilities cannot answer at all. The decider asks one fixed question when it is
built, before the run extracts, decides or answers anything, so such an endpoint stops the run there with one line
(`LogprobsUnavailable`, exit 2); a reply without them is never cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from bench.errors import LogprobDecisionFailed, LogprobsUnavailable, OpenAIRefused, OpenAIUnavailable
from bench.models.clients.loop import LoopThread
from bench.models.providers.openai.client import OpenAIChat, token_logprobs
from bench.models.redact import quoted
from engram import Ask, Decision, config
from engram.deciders import LOGPROB_BACKEND, logprob_decision, logprob_prompt
from engram.questions import SAME_FACT

# The question asked when the decider is built, to learn whether the endpoint reports log-probabilities at all.
PROBE_STATE: Mapping[str, Any] = {"fact_a": "Ana lives in Lisbon.", "fact_b": "Ana lives in Lisbon."}
PROBE_ASK = Ask("logprob_probe", SAME_FACT)


def first_position(body: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """The top tokens of the reply's first generated position, or None when it carries no log-probabilities."""
    tokens = token_logprobs(body)
    if not tokens or not tokens[0].top:
        return None
    return list(tokens[0].top.items())


class LogprobDecider:
    """`DecisionBackend` over an OpenAI-compatible chat endpoint's log-probabilities."""

    name = LOGPROB_BACKEND

    def __init__(self, chat: OpenAIChat, model: str, top: int = config.LOGPROB_TOP_TOKENS) -> None:
        self.chat = chat
        self.model = model
        self.top = top
        self._loop = LoopThread("logprob-decider")

    # -- DecisionBackend ---------------------------------------------------------------------------------------

    def ask(self, state: dict, asks: Sequence[Ask]) -> dict[str, Decision]:
        return self._loop.run(self.aask(state, asks))

    async def aask(self, state: Mapping[str, Any], asks: Sequence[Ask]) -> dict[str, Decision]:
        decisions = await asyncio.gather(*(self._decide(state, ask) for ask in asks))
        return {ask.key: decision for ask, decision in zip(asks, decisions)}

    def probe(self) -> Decision:
        """Ask one fixed question; an endpoint without log-probabilities raises `LogprobsUnavailable` here, whether
        it answers without them or refuses the request for them (llama.cpp without logits: HTTP 500)."""
        try:
            return self._loop.run(self._decide(PROBE_STATE, PROBE_ASK))
        except (LogprobDecisionFailed, OpenAIRefused) as exc:
            raise LogprobsUnavailable(
                f"decide = openai/{self.model} at {self.chat.target}: expected an answer with log-probabilities "
                f"to the logprob decider's probe question, found an error ({exc}); a server must return "
                f"log-probabilities for typed decisions (llama.cpp: --logits_all True)"
            ) from None

    # -- one question ------------------------------------------------------------------------------------------

    async def _decide(self, state: Mapping[str, Any], ask: Ask) -> Decision:
        try:
            reply = await self.chat.aask(
                self.model,
                [{"role": "user", "content": logprob_prompt(state, ask)}],
                purpose="decide",
                max_tokens=1,  # the letter is the first token; the rest would be paid for and never read
                temperature=0.0,
                logprobs=True,
                top_logprobs=self.top,
                check=self._require_logprobs,
            )
        except OpenAIUnavailable as exc:
            raise LogprobDecisionFailed(str(exc)) from None
        result = reply.result
        return logprob_decision(
            ask,
            first_position(result.body) or [],
            model=result.model,
            latency_ms=result.latency_ms,
            cost_usd=result.cost_usd,
        )

    def _require_logprobs(self, body: Mapping[str, Any]) -> None:
        """Run on every fresh reply before it is cached: a reply without log-probabilities is refused."""
        if first_position(body) is None:
            raise LogprobsUnavailable(
                f"decide = openai/{self.model} at {self.chat.target}: expected chat replies with "
                f"logprobs.content[0].top_logprobs (the logprob decider reads them), found none in "
                f"{quoted(str(body), 120)}; use a server that returns log-probabilities (llama.cpp: "
                f"--logits_all True)"
            )

    def close(self) -> None:
        self._loop.close()
