"""Two questions the harness asks of every call, each answered by the provider's registered class: does it bill money
(`Provider.paid`, which a stack may override for its own server) and is it a labelled stand-in computed here
(`Provider.standin`)? A free model server is not a stand-in: its replies are a real model's, replayed from the cache,
and a result must not call them stand-ins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.errors import ConfigError
from bench.models import budget, stacks
from bench.models.gateway import provider_mode
from bench.models.provider import PROVIDERS, Provider, is_standin, is_unbilled, standin_providers
from bench.models.providers import Models
from bench.models.stacks import FREE, ModelRef, ProviderSettings


class PantryServer(Provider):
    """A model server on the researcher's own machine: free, but a real model."""

    paid = False


class ParrotStandin(Provider):
    """A plug-in's own deterministic stand-in."""

    paid = False
    standin = True


@pytest.fixture
def two_free_providers() -> Iterator[None]:
    PROVIDERS.add("pantry", PantryServer)
    PROVIDERS.add("parrot", ParrotStandin)
    try:
        yield
    finally:
        PROVIDERS.remove("pantry")
        PROVIDERS.remove("parrot")


def hub_with(model: str) -> Models:
    refs = {"extract": ModelRef.parse(model, "models.extract")}
    return Models(refs, lambda provider: ProviderSettings(), gateway=None, embedder=lambda: None)  # type: ignore[arg-type]


def test_a_free_local_server_is_not_labelled_a_stand_in(two_free_providers: None) -> None:
    assert not hub_with("pantry/granite-tiny").is_standin("extract")
    assert hub_with("parrot/echo-rules").is_standin("extract")
    assert hub_with("offline/rules-extractor").is_standin("extract")
    assert not hub_with("openai/gpt-4o-mini").is_standin("extract")


def test_stand_ins_are_named_by_their_class_not_by_the_word_offline(two_free_providers: None) -> None:
    assert is_standin("offline") and is_standin("parrot")
    assert not is_standin("pantry") and not is_standin("anthropic")
    assert not is_standin("a-provider-nobody-registered")
    assert {"offline", "parrot"} <= set(standin_providers()) and "pantry" not in standin_providers()


def test_a_free_server_replays_its_real_replies_while_a_stand_in_computes_them(two_free_providers: None) -> None:
    no_keys: dict[str, str] = {}
    assert provider_mode("pantry", None, no_keys) == "replay"
    assert provider_mode("parrot", None, no_keys) == "live"
    assert provider_mode("offline", None, no_keys) == "live"
    assert provider_mode("parrot", "replay", no_keys) == "replay"  # an explicit mode still wins


def test_a_provider_that_never_bills_needs_no_price_but_a_paid_one_does(two_free_providers: None) -> None:
    assert stacks.price_for("pantry", "any-model-at-all") == FREE
    assert stacks.price_for("offline", "lexical-judge") == FREE
    assert stacks.price_for("openai", "gpt-4o-mini").input_per_mtok > 0
    with pytest.raises(ConfigError, match=r"expected a price for openai/gpt-5-unpriced"):
        stacks.price_for("openai", "gpt-5-unpriced")


def test_token_counting_bills_nothing_where_the_provider_says_so() -> None:
    # Anthropic's counting endpoint is free; the OpenAI provider counts here (tiktoken or the declared approximation).
    assert is_unbilled("anthropic", "count_tokens") and not is_unbilled("anthropic", "messages")
    assert is_unbilled("openai", "count_tokens") and not is_unbilled("openai", "chat.completions")
    assert budget.price_for("anthropic", "claude-haiku-4-5", "count_tokens") == FREE
    assert budget.price_for("anthropic", "claude-haiku-4-5", "messages").input_per_mtok > 0
    # Jev serves typed decisions only and has no counter: nothing of it is unbilled by name.
    assert not is_unbilled("jev", "count_tokens")
    assert budget.price_for("jev", "jev-1.13.0", "count_tokens") == stacks.price_for("jev", "jev-1.13.0")
