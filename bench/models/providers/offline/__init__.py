"""The `offline` provider: local, deterministic stand-ins for every role ($0, no key), served through the gateway
and the cache exactly like paid models. Each stand-in is labelled as one wherever a result shows it, and its model id
(`rules-standin-v9`, ...) comes from the stand-in object itself, so a result names the version that really ran.

One name per stand-in: the name a stack writes (`offline/rules-decider`). The id a result records is the one the
stand-in's code answers under, which is also the model in its calls' cache keys (`rules-standin-v9`); two of those
ids do not start with the name (the counter's and the decider's). Renaming the ids would change every key of the
shipped cache subsets and the models of every committed offline result, so the ids stay and every screen shows a
recorded id by its stand-in's name with the version beside it (`OfflineProvider.model_name`, from `STANDINS`):
`offline/rules-decider (stand-in v9)`.

Stand-ins by name (what a stack file writes after `offline/`):
- `rules-extractor`: engram's `RulesExtractor` (mem0 wraps the same rules in its own output format);
- `rules-decider`: engram's `RulesDecider` for typed questions, and, as a chat model, the same rules answering
  mem0's update prompt (escalation, the LLM-decider arm);
- `extractive-answerer`, `lexical-judge`: `bench.models.judge`'s answerer and judge stand-ins;
- `wordpiece-counter`: MiniLM WordPiece token counts (`bench.models.tokens.LocalTokenCounter`).
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Standin:
    """What a stack may ask of a stand-in, and the ids its versions answer under: `<recorded_as><N>`."""

    capabilities: tuple[str, ...]
    recorded_as: str

    def version_of(self, model: str) -> str | None:
        """The version ("v9") when `model` is an id this stand-in answers under; None otherwise."""
        number = model.removeprefix(self.recorded_as)
        return f"v{number}" if number != model and number.isdigit() else None


# stand-in name (what a stack writes after `offline/`) -> what it serves and the ids it records
STANDINS: dict[str, Standin] = {
    "rules-extractor": Standin(("extractor",), "rules-extractor-standin-v"),
    "rules-decider": Standin(("decider", "chat"), "rules-standin-v"),
    "extractive-answerer": Standin(("answerer",), "extractive-answerer-standin-v"),
    "lexical-judge": Standin(("judge",), "lexical-judge-standin-v"),
    "wordpiece-counter": Standin(("token_counter",), "local-token-counter-standin-v"),
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
    def model_name(cls, model: str) -> tuple[str, str | None]:
        """A recorded id by its stand-in's name and version (`rules-standin-v9`: `rules-decider`, "v9"); a
        stand-in's name as it is (a role the run never called records the stack's name)."""
        for name, standin in STANDINS.items():
            version = standin.version_of(model)
            if version is not None:
                return name, version
        return model, None

    @classmethod
    def check_model(cls, model: str, settings: ProviderSettings, where: str) -> None:
        if model not in STANDINS:
            raise ConfigError(
                f"{where}: unknown stand-in offline/{model}; expected one of offline/{', offline/'.join(STANDINS)}"
            )

    def _require(self, model: str, capability: str, what: str) -> None:
        standin = STANDINS.get(model)
        if standin is None or capability not in standin.capabilities:
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
