"""Model providers: one class per provider, registered by name, and the per-run hub that serves each role.

A stack names each role's model as `provider/model`; the provider name is looked up here (`PROVIDERS`, a
`bench.registry.Registry`; installed packages add theirs under the entry point group `engram_bench.providers`).

Adding a provider = one folder here plus one stack file (docs/examples/provider/). The folder `<name>/` holds:
`__init__.py`, the `Provider` subclass decorated `@register_provider("<name>")` (its facts: whether it is paid,
whether it is a stand-in, the key it needs, its default base URL, the shape of its replies, the packages a result's
provenance records for it; and what its models can serve, its token counter); `client.py`, its calls, each through the gateway; `errors.py`,
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

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError
from bench.models.judge import DEFAULT_JUDGE_PROMPT
from bench.models.provider import (
    PROVIDERS,
    Provider,
    api_key_envs,
    default_base_url,
    is_standin,
    is_unbilled,
    judge_metric_for,
    plugin_records,
    provenance_packages,
    provider_class,
    provider_names,
    register_provider,
    reply_limit,
    reply_text,
    standin_providers,
)
from bench.models.stacks import ModelRef, ProviderSettings, load_stack_spec

# The base class and the registry live in bench.models.provider (the stacks are checked against it without importing
# the providers); the provider folders import them from here.
__all__ = [
    "PROVIDERS",
    "Models",
    "Provider",
    "api_key_envs",
    "default_base_url",
    "is_standin",
    "is_unbilled",
    "judge_metric_for",
    "plugin_records",
    "provenance_packages",
    "provider_class",
    "provider_names",
    "register_provider",
    "reply_limit",
    "reply_text",
    "standin_providers",
]

if TYPE_CHECKING:
    from bench.models.gateway import Gateway
    from engram import LLM, DecisionBackend, Embedder, Extractor


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
        """Whether `role` is served by a labelled stand-in (not merely by a free model, such as a local server)."""
        return provider_class(self.ref(role).provider).standin

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
        return self._build("judge", "judge", prompt or DEFAULT_JUDGE_PROMPT)

    def token_counter(self) -> Any:
        return self._build("count_tokens", "token_counter")

    def close(self) -> None:
        for provider in self._providers.values():
            provider.close()
        self._providers = {}
        self._built = {}
