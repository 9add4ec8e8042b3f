"""Model providers: one class per provider, registered by name, and the per-run hub that serves each role.

A stack names each role's model as `provider/model`; the provider name is looked up here (`PROVIDERS`, a
`bench.registry.Registry`; installed packages add theirs under the entry point group `engram_bench.providers`).

Adding a provider = one folder here plus one stack file (docs/examples/provider/). The folder `<name>/` holds:
`__init__.py`, the `Provider` subclass decorated `@register_provider("<name>")` (whether it is paid, the key it
needs, what its models can serve, its token counter); `client.py`, its calls, each through the gateway; `errors.py`,
its SDK's exceptions mapped into the one provider error tree (`bench.errors`: unavailable, rate-limited, malformed
reply, refused). Its prices are in the stack files that name it. Folders and modules here are discovered. The
provider module imports no client: SDKs, the gateway and engram's models are imported when a role is built, so a
stack file is validated against this registry without them.

A provider offers what its models can do, each through the gateway (cache, budget, ledger, virtual clock):
`chat(model)` (engram's `LLM`), `decider(model)` (a `DecisionBackend`), `extractor(model)`, `answerer(model)`,
`judge(model)` and `token_counter(model)`; the defaults build the extractor, answerer and judge on `chat`.

`Models` (one per gateway) builds each role's object once and records the model that really served it: the
`provider/model` of the object itself (a stand-in's own versioned id), so a result cannot name a version that
did not run.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from bench.errors import ConfigError, RegistryError
from bench.models.stacks import ModelRef, ProviderSettings, load_stack_spec
from bench.registry import Registry

if TYPE_CHECKING:
    from bench.models.gateway import Gateway
    from engram import LLM, DecisionBackend, Embedder, Extractor

P = TypeVar("P", bound=type["Provider"])


class Provider:
    """The models of one provider, bound to one gateway. Subclasses set `name`, `paid` and `key_env`."""

    name: ClassVar[str]
    paid: ClassVar[bool] = True
    key_env: ClassVar[str | None] = None  # the API key's environment variable (None: needs no key)
    description: ClassVar[str] = ""
    # The largest reply body (JSON bytes) the gateway accepts from this provider; a larger one is refused and not
    # cached (a runaway or hostile server must not fill the cache, nor feed megabytes to scoring). None: no limit.
    max_reply_bytes: ClassVar[int | None] = 512 * 1024

    def __init__(self, settings: ProviderSettings, gateway: Gateway, embedder: Callable[[], Embedder]) -> None:
        self.settings = settings
        self.gateway = gateway
        self.embedder = embedder
        self._closers: list[Any] = []

    @classmethod
    def check_model(cls, model: str, settings: ProviderSettings, where: str) -> None:
        """Refuse a model this provider cannot serve (called when a stack or an arm names it)."""

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
        from engram import Mem0PromptExtractor

        return Mem0PromptExtractor(self.chat(model), model)

    def answerer(self, model: str) -> Any:
        from bench.analysis.judge import LLMAnswerer

        return LLMAnswerer(self.chat(model), model)

    def judge(self, model: str, prompt: str) -> Any:
        from bench.analysis.judge import LLMJudge

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
    """Import every module of this package once, so their @register_provider decorators run."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


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


class Models:
    """Each role's model object for one run, built on first use on one gateway, one provider instance per provider.

    `ran` maps each role that was used to the `provider/model` that served it (the object's own model id)."""

    def __init__(
        self,
        refs: Mapping[str, ModelRef],
        settings: Callable[[str], ProviderSettings],
        gateway: Gateway,
        embedder: Callable[[], Embedder],
    ) -> None:
        self.refs = dict(refs)
        self._settings = settings
        self.gateway = gateway
        self._embedder = embedder
        self._providers: dict[str, Provider] = {}
        self._built: dict[tuple[Any, ...], Any] = {}
        self.ran: dict[str, str] = {}

    @classmethod
    def for_stack(
        cls, stack_name: str, models: Mapping[str, str], gateway: Gateway, embedder: Callable[[], Embedder]
    ) -> Models:
        """From a stack's name and its role -> "provider/model" map (provider settings come from its file)."""
        spec = load_stack_spec(stack_name)
        refs = {role: ModelRef.parse(model, f"models.{role}") for role, model in models.items()}
        return cls(refs, spec.settings, gateway, embedder)

    def ref(self, role: str) -> ModelRef:
        try:
            return self.refs[role]
        except KeyError:
            raise ConfigError(f"models.{role}: the stack names no model for role {role!r}") from None

    def provider(self, role: str) -> Provider:
        name = self.ref(role).provider
        if name not in self._providers:
            self._providers[name] = provider_class(name)(self._settings(name), self.gateway, self._embedder)
        return self._providers[name]

    def is_standin(self, role: str) -> bool:
        return not provider_class(self.ref(role).provider).paid

    def _build(self, role: str, what: str, *args: Any) -> Any:
        ref = self.ref(role)
        key = (what, str(ref), *args)
        if key not in self._built:
            self._built[key] = getattr(self.provider(role), what)(ref.model, *args)
        built = self._built[key]
        self.used(role, getattr(built, "model", None) or ref.model)
        return built

    def used(self, role: str, model: str) -> None:
        """Record that `model` (provider-local id) served `role`."""
        self.ran[role] = f"{self.ref(role).provider}/{model}"

    def chat(self, role: str) -> LLM:
        return self._build(role, "chat")

    def decider(self, role: str = "decide") -> DecisionBackend:
        return self._build(role, "decider")

    def extractor(self, role: str = "extract") -> Extractor:
        return self._build(role, "extractor")

    def answerer(self) -> Any:
        return self._build("answer", "answerer")

    def judge(self, prompt: str | None = None) -> Any:
        """The judge with a named judge prompt (default: mem0's LoCoMo prompt)."""
        from bench.analysis.judge import DEFAULT_JUDGE_PROMPT

        return self._build("judge", "judge", prompt or DEFAULT_JUDGE_PROMPT)

    def token_counter(self) -> Any:
        return self._build("count_tokens", "token_counter")

    def close(self) -> None:
        for provider in self._providers.values():
            provider.close()
        self._providers = {}
        self._built = {}
