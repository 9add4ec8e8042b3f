"""The `offline` provider: local, deterministic stand-ins for every role ($0, no key), served through the gateway
and the cache exactly like paid models. Each stand-in is labelled as one wherever a result shows it, and its model id
(`rules-standin-v5`, ...) comes from the stand-in object itself, so a result names the version that really ran.

Stand-ins by name (what a stack file writes after `offline/`):
- `rules-extractor`: engram's `RulesExtractor` (mem0 wraps the same rules in its own output format);
- `rules-decider`: engram's `RulesDecider` for typed questions, and, as a chat model, the same rules answering
  mem0's update prompt (escalation, the LLM-decider arm);
- `extractive-answerer`, `lexical-judge`: `bench.models.judge`'s answerer and judge stand-ins;
- `wordpiece-counter`: MiniLM WordPiece token counts (`bench.models.tokens.LocalTokenCounter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError
from bench.models.cache import OFFLINE_PROVIDER
from bench.models.judge import LexicalJudge
from bench.models.providers import Provider, register_provider
from bench.models.stacks import ProviderSettings
from engram import RulesExtractor
from engram.deciders import RulesDecider

if TYPE_CHECKING:
    from engram import LLM, DecisionBackend, Extractor

# stand-in name -> the capabilities it has
STANDINS: dict[str, tuple[str, ...]] = {
    "rules-extractor": ("extractor",),
    "rules-decider": ("decider", "chat"),
    "extractive-answerer": ("answerer",),
    "lexical-judge": ("judge",),
    "wordpiece-counter": ("token_counter",),
}


@register_provider(OFFLINE_PROVIDER)
class OfflineProvider(Provider):
    paid = False
    standin = True
    max_reply_bytes = None  # the stand-ins run in this process: nothing to guard against
    description = "local deterministic stand-ins (labelled as such), $0, no key"

    @classmethod
    def judge_metric(cls, model: str, prompt: str) -> str:
        """Its one judge, the lexical stand-in, judges by its rules revision whatever the prompt names."""
        return LexicalJudge.metric

    @classmethod
    def check_model(cls, model: str, settings: ProviderSettings, where: str) -> None:
        if model not in STANDINS:
            raise ConfigError(
                f"{where}: unknown stand-in offline/{model}; expected one of offline/{', offline/'.join(STANDINS)}"
            )

    def _require(self, model: str, capability: str, what: str) -> None:
        if capability not in STANDINS.get(model, ()):
            raise ConfigError(f"models: offline/{model} cannot serve as {what}")

    def _rules_decider(self) -> DecisionBackend:
        return RulesDecider(self.embedder())

    def extractor(self, model: str) -> Extractor:
        self._require(model, "extractor", "an extractor")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.clients.wrappers import GatewayExtractor

        return GatewayExtractor(RulesExtractor(), self.gateway)

    def decider(self, model: str) -> DecisionBackend:
        self._require(model, "decider", "a decision backend")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.clients.wrappers import GatewayDecider

        return GatewayDecider(self._rules_decider(), self.gateway)

    def chat(self, model: str) -> LLM:
        self._require(model, "chat", "a chat model")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.providers.offline.standins import RulesUpdateStandin

        return RulesUpdateStandin(self.gateway, self._rules_decider())

    def answerer(self, model: str) -> Any:
        self._require(model, "answerer", "the answerer")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.judge import ExtractiveAnswerer

        return ExtractiveAnswerer(self.gateway, self.embedder())

    def judge(self, model: str, prompt: str) -> Any:
        self._require(model, "judge", "the judge")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.judge import LexicalJudge, check_standin_judge_prompt

        check_standin_judge_prompt(prompt)
        return LexicalJudge(self.gateway)

    def token_counter(self, model: str) -> Any:
        self._require(model, "token_counter", "the token counter")
        # local import: the stand-in loads the gateway when its role is built; stacks validate without it
        from bench.models.tokens import LocalTokenCounter

        return LocalTokenCounter(self.gateway)
