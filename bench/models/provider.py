"""The `Provider` base class and the provider registry (`PROVIDERS`): what a stack file is validated against.

The providers themselves are folders and modules of `bench/models/providers/`, found on the registry's first lookup
(its discover hook imports that package by name), so `bench.models.stacks` checks a stack against this registry
without a cycle: the providers import the stacks' settings types, the stacks import only this module.

A provider offers what its models can do, each through the gateway (cache, budget, ledger, virtual clock):
`chat(model)` (engram's `LLM`), `decider(model)` (a `DecisionBackend`), `extractor(model)`, `answerer(model)`,
`judge(model)` and `token_counter(model)`; the defaults build the extractor, answerer and judge on `chat`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from bench.errors import ConfigError, RegistryError
from bench.models.judge import DEFAULT_JUDGE_PROMPT, LLMAnswerer, LLMJudge, judge_prompt_id
from bench.registry import Registry, import_modules
from bench.vocab import judge_metric
from engram import Mem0PromptExtractor

if TYPE_CHECKING:
    from engram import LLM, DecisionBackend, Embedder, Extractor

PROVIDERS_PACKAGE = "bench.models.providers"

P = TypeVar("P", bound=type["Provider"])


# What a stack file sets for a provider (`[providers.NAME]`, read by bench.models.stacks) and its prices: kept
# with the provider, so the provider module imports no stack.


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost_usd(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


FREE = Price(0.0, 0.0)


@dataclass(frozen=True)
class ProviderSettings:
    """A stack's settings for one provider; None = the provider's own default."""

    base_url: str | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    retries: int | None = None
    max_retry_after_s: float | None = None
    requests_per_second: float | None = None
    paid: bool | None = None  # None: the provider's own default (every provider but `offline` is paid)
    prices: Mapping[str, Price] = field(default_factory=dict)
    # What the server can take, for the gateway endpoint's translations (bench.models.endpoint.translate); None: OpenAI's
    # behaviour. Declared here, never guessed from replies.
    json_schema: bool | None = None  # false: response_format json_schema is sent as json_object with a schema
    tools: bool | None = None  # false: tool calls are emulated with a schema over the offered tools
    max_array_items: int | None = None  # set: arrays without maxItems in a schema sent upstream get this bound
    max_string_length: int | None = None  # set: strings without maxLength in a schema sent upstream get this bound
    repair_json: bool | None = None  # true: raw control characters inside returned JSON strings are escaped
    default_max_tokens: int | None = None  # set: a request without max_tokens gets this many


class Provider:
    """The models of one provider, bound to one gateway. Subclasses set `name`, `paid` and `key_env`."""

    name: ClassVar[str]
    # Whether its calls bill money. A stack may still declare a paid provider free for its own servers (`paid =
    # false` beside a local base URL): ask `bench.models.stacks.is_paid` for a stack's answer.
    paid: ClassVar[bool] = True
    # Whether its calls are computed in this process by deterministic stand-ins, labelled as stand-ins wherever a
    # result shows them. Such a call needs no key and no network: a cache miss is computed in every mode but strict
    # replay, it is never budgeted, and a foreign system's prompts cannot be served by it. A free model server (a
    # local llama.cpp) is not a stand-in: its replies are a real model's, and replay reads them from the cache.
    standin: ClassVar[bool] = False
    # Endpoints of this provider that bill nothing even when the provider is paid (Anthropic's token counting).
    unbilled_endpoints: ClassVar[frozenset[str]] = frozenset()
    key_env: ClassVar[str | None] = None  # the API key's environment variable (None: needs no key)
    description: ClassVar[str] = ""
    # The largest reply body (JSON bytes) the gateway accepts from this provider; a larger one is refused and not
    # cached (a runaway or hostile server must not fill the cache, nor feed megabytes to scoring). None: no limit.
    max_reply_bytes: ClassVar[int | None] = 512 * 1024
    # The server its SDK calls when a stack names no base URL, recorded so a result always names one ("": none).
    default_base_url: ClassVar[str] = ""
    # The installed distributions that make its calls, whose versions a result's provenance records.
    packages: ClassVar[tuple[str, ...]] = ()

    # `gateway` is a bench.models.gateway.Gateway, typed loosely: the gateway asks this module what each provider is
    # (a stand-in, its reply limit), and the models package has no import circle, not even for annotations.
    def __init__(self, settings: ProviderSettings, gateway: Any, embedder: Callable[[], Embedder]) -> None:
        self.settings = settings
        self.gateway = gateway
        self.embedder = embedder
        self._closers: list[Any] = []

    @classmethod
    def reply_text(cls, body: Mapping[str, Any]) -> str | None:
        """The text of one of its replies as the cache holds it (its reply shape); None when it has no text reply
        shape (a decision service, a stand-in)."""
        return None

    @classmethod
    def judge_metric(cls, model: str, prompt: str) -> str:
        """The metric its model `model` judges under with the judge prompt `prompt` (e.g. judge:anthropic/...)."""
        return judge_metric(f"{cls.name}/{model}", judge_prompt_id(prompt))

    @classmethod
    def check_model(cls, model: str, settings: ProviderSettings, where: str) -> None:
        """Refuse a model this provider cannot serve (called when a stack or an arm names it)."""

    @classmethod
    def model_name(cls, model: str) -> tuple[str, str | None]:
        """The name a stack writes for the model a result records as `model`, and its version when the recorded id
        carries one apart from that name (a stand-in's); a model whose id is its name: (model, None)."""
        return model, None

    @classmethod
    def check_ready(cls, settings: ProviderSettings, where: str) -> None:
        """Refuse settings this provider cannot run with here (called when a run's stack is built, before anything
        is written or sent; unlike `check_model` it may read the environment, e.g. a base URL variable)."""

    def _unsupported(self, what: str, model: str) -> ConfigError:
        return ConfigError(f"models: {self.name}/{model} cannot serve as {what} (provider {self.name!r} has none)")

    def chat(self, model: str) -> LLM:
        raise self._unsupported("a chat model", model)

    def decider(self, model: str) -> DecisionBackend:
        raise self._unsupported("a decision backend", model)

    def extractor(self, model: str) -> Extractor:
        return Mem0PromptExtractor(self.chat(model), model)

    def answerer(self, model: str) -> Any:
        return LLMAnswerer(self.chat(model), model)

    def judge(self, model: str, prompt: str) -> Any:
        return LLMJudge(self.chat(model), model, prompt)

    def token_counter(self, model: str) -> Any:
        raise self._unsupported("a token counter", model)

    def keep(self, client: Any) -> Any:
        """Remember a client to close with the provider."""
        self._closers.append(client)
        return client

    def close(self) -> None:
        for client in self._closers:
            closer = getattr(client, "close", None)
            if closer is not None:
                closer()
        self._closers = []


def _discover() -> None:
    """Import every module of the providers package once, so their @register_provider decorators run."""
    import_modules(PROVIDERS_PACKAGE)


def _adopt(name: str, factory: Any) -> type[Provider]:
    """A provider is a `Provider` subclass; it learns the name it is registered under (also one from a plug-in)."""
    if not (isinstance(factory, type) and issubclass(factory, Provider)):
        raise RegistryError(
            f"provider {name!r}: expected a subclass of bench.models.providers.Provider, found {factory!r}"
        )
    factory.name = name
    return factory


PROVIDERS: Registry[type[Provider]] = Registry(
    "provider",
    discover=_discover,
    adopt=_adopt,
    hint="a module in bench/models/providers/ with a Provider subclass decorated @register_provider(NAME)",
)


def register_provider(name: str) -> Callable[[P], P]:
    def decorate(cls: P) -> P:
        PROVIDERS.add(name, cls)
        return cls

    return decorate


def reply_limit(provider: str) -> int | None:
    """The reply size limit of `provider` (its class's `max_reply_bytes`); the default for a name not registered."""
    try:
        return PROVIDERS.get(provider).max_reply_bytes
    except RegistryError:
        return Provider.max_reply_bytes


def registered_class(provider: str) -> type[Provider] | None:
    """The class registered as `provider`, or None for a name nobody registered (a broken plug-in still fails in
    one line here, as everywhere it is used)."""
    return PROVIDERS.get(provider) if provider in PROVIDERS else None


def is_standin(provider: str) -> bool:
    """Whether `provider` is a registered stand-in provider (`Provider.standin`): the one answer to "is this call
    computed here, for $0, by a labelled stand-in". A name that is not registered is not a stand-in."""
    cls = registered_class(provider)
    return cls is not None and cls.standin


def shown_model(recorded: str) -> str:
    """A result's model as every screen names it: `provider/name`, the name a stack writes, with a stand-in's version
    beside it (`offline/rules-standin-v9` is shown `offline/rules-decider (stand-in v9)`). An older offline file
    records a stand-in's id without its provider (`rules-standin-v1`); it is named by the stand-in provider whose id
    it is. A model of a provider nobody registered is shown as recorded."""
    provider, slash, model = recorded.partition("/")
    if not slash:
        provider, model = "", recorded
    for name in [provider] if provider else standin_providers():
        cls = registered_class(name)
        if cls is None:
            continue
        shown, version = cls.model_name(model)
        if version is None:
            if provider:
                return f"{name}/{shown}"
            continue
        return f"{name}/{shown} ({'stand-in ' if cls.standin else ''}{version})"
    return recorded


def standin_providers() -> list[str]:
    """The registered stand-in providers, by name (plug-ins not yet loaded are not imported to ask)."""
    return [name for name in PROVIDERS.names() if PROVIDERS.is_loaded(name) and PROVIDERS.get(name).standin]


def is_unbilled(provider: str, endpoint: str) -> bool:
    """Whether `provider` bills nothing for `endpoint` whatever the model (`Provider.unbilled_endpoints`)."""
    cls = registered_class(provider)
    return cls is not None and endpoint in cls.unbilled_endpoints


def reply_text(provider: str, body: Mapping[str, Any]) -> str | None:
    """The text of a reply of `provider` (its class's `reply_text`); None for a name nobody registered."""
    cls = registered_class(provider)
    return cls.reply_text(body) if cls is not None else None


def judge_metric_for(models: Mapping[str, str], prompt: str = DEFAULT_JUDGE_PROMPT) -> str:
    """The metric name of the judge the `judge` role names (`provider/model`) with this prompt, as its provider
    states it, without building the judge."""
    provider, _, model = models["judge"].partition("/")
    cls = registered_class(provider)
    return (
        cls.judge_metric(model, prompt) if cls is not None else judge_metric(models["judge"], judge_prompt_id(prompt))
    )


def default_base_url(provider: str) -> str:
    """The server `provider`'s SDK calls when the stack names none (its class's `default_base_url`; "": none)."""
    cls = registered_class(provider)
    return cls.default_base_url if cls is not None else ""


def provenance_packages(providers: Iterable[str]) -> tuple[str, ...]:
    """The distributions whose versions a result's provenance records for the providers a run used (each class's
    `packages`), once each, in the order first named."""
    found: dict[str, None] = {}
    for provider in providers:
        cls = registered_class(provider)
        found |= dict.fromkeys(cls.packages if cls is not None else ())
    return tuple(found)


def provider_names() -> list[str]:
    return PROVIDERS.names()


def provider_class(name: str, where: str = "models") -> type[Provider]:
    return PROVIDERS.get(name, where)


def api_key_envs() -> dict[str, str]:
    """provider -> the environment variable holding its API key (paid providers that need one).

    Only built-in providers and plug-ins already in use are asked: listing key variables must not import every
    installed package (a broken one would break every command that reads keys)."""
    out: dict[str, str] = {}
    for name in PROVIDERS.names():
        if not PROVIDERS.is_loaded(name):
            continue
        key_env = PROVIDERS.get(name).key_env
        if key_env:
            out[name] = key_env
    return out


def plugin_records(models: Mapping[str, str]) -> list[dict[str, Any]]:
    """For a result's `provenance.plugins`: the registry record of each provider an installed package provides,
    with the roles it serves as parameters ({role: model}); built-in providers are left out."""
    served: dict[str, dict[str, str]] = {}
    for role, ref in sorted(models.items()):
        provider, _, model = ref.partition("/")
        served.setdefault(provider, {})[role] = model
    records = []
    for provider, roles in sorted(served.items()):
        if provider in PROVIDERS:
            info = PROVIDERS.info(provider, roles)
            if info.plugin:
                records.append(info.to_json())
    return records
