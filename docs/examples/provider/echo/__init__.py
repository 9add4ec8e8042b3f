"""Echo: a toy chat provider, the worked example of adding a provider (docs/examples/README.md).

A provider is one folder: this module (the `Provider` subclass: whether it is paid, which key it needs, which roles
it can serve), `client.py` (the calls, each through the gateway so it is cached, priced and replayed like any
other) and `errors.py` (its failures mapped into the one provider error tree). Prices live in the stack file that
names it (`echo.toml` beside this folder). Copy the folder into the harness's providers package (it is discovered),
or ship it as a package with an entry point in group `engram_bench.providers` (../pyproject.toml).

Importing this module must stay cheap and import no gateway: a stack file is validated against the provider
registry before anything runs, so the client is imported only when a role is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.models.providers import Provider, register_provider

if TYPE_CHECKING:
    from engram import LLM


@register_provider("echo")
class EchoProvider(Provider):
    """Answers every chat call with the last line its caller wrote. No key, no network, no bill. Not a stand-in
    (`standin` stays False): its replies are cached and replayed like a real model's, and a result does not list them
    among its stand-ins."""

    paid = False
    key_env = None
    description = "a toy chat model that echoes the caller's last line (docs/examples/provider)"

    def chat(self, model: str) -> LLM:
        from echo.client import EchoChat  # the gateway comes with the client, when a role is built

        return self.keep(EchoChat(self.gateway, model))
