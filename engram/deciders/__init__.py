"""Decision backends that ship with engram, each behind the `engram.DecisionBackend` protocol (or, for the
LLM-decider arm, `engram.RelationDecider`):

- `ScriptedDecider`: answers written down by a test (unit tests of each gate); `Raw` passes a raw wire answer.
- `RulesDecider`: an offline, deterministic STAND-IN decision model (lexical rules + MiniLM cosine), labelled as a
  stand-in in its name and model.
- the `logprob` backend's pure half (`logprob_prompt`, `logprob_decision`): a prompt listing every option under a
  letter, and the options' probabilities read from the model's top tokens; the harness sends the request through
  its gateway (`bench.models.providers.openai.logprob`).
- `LLMRelationDecider`: the LLM-decider arm (mem0's update prompt on an LLM, one call per extracted fact), and
  `RulesUpdateLLM`, an offline STAND-IN for the chat model that answers that prompt.

The Jev backend lives in `bench.models.clients` because every Jev call goes through the harness's gateway.
"""

from engram.deciders._llm import LLMRelationDecider, RulesUpdateLLM
from engram.deciders._logprob import (
    LOGPROB_BACKEND,
    logprob_decision,
    logprob_prompt,
)
from engram.deciders._rules import RulesDecider
from engram.deciders._scripted import Raw, ScriptedDecider

__all__ = [
    "LLMRelationDecider",
    "LOGPROB_BACKEND",
    "Raw",
    "RulesDecider",
    "RulesUpdateLLM",
    "ScriptedDecider",
    "logprob_decision",
    "logprob_prompt",
]
