"""The `openai` provider: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp's server, ollama)
over the harness's keep-alive HTTP client (`bench.models.providers.openai.client`).

Base URL: $OPENAI_BASE_URL, else the stack's `base_url` (one of them is required). Key: $OPENAI_API_KEY; a server on
127.0.0.1/localhost is called without one (it gets a placeholder). Retries: the harness's one policy with the
stack's `retries` / `max_retry_after_s`. Token counts (`count_tokens`): tiktoken for the named model when it is
installed and knows it, else a declared approximate counter (`bench.models.tokens.counter_for_model`). Typed decisions
(`decide`): the logprob decider (`bench.models.providers.openai.logprob`) on the same client.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError
from bench.models.providers import Provider, register_provider
from bench.models.providers._settings import retry_policy
from bench.models.stacks import ProviderSettings

if TYPE_CHECKING:
    from engram import LLM, DecisionBackend

BASE_URL_ENV = "OPENAI_BASE_URL"
# Model ids as OpenAI, Hugging Face (org/name), ollama (name:tag) and GGUF file names spell them.
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*")


def base_url_for(settings: ProviderSettings) -> str | None:
    return os.environ.get(BASE_URL_ENV) or settings.base_url


@register_provider("openai")
class OpenAIProvider(Provider):
    key_env = "OPENAI_API_KEY"
    # Its token counts are computed here (tiktoken or the declared approximation), never sent.
    unbilled_endpoints = frozenset({"count_tokens"})
    description = (
        "OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, ollama); tiktoken or approximate counts"
    )
    default_base_url = "https://api.openai.com/v1"
    # The harness's own HTTP client sends (bench.models.clients.http1), and httpx when a proxy setting covers the server.
    packages = ("httpx",)
    _llm: Any = None

    @classmethod
    def reply_text(cls, body: Mapping[str, Any]) -> str | None:
        """A chat completion's first message: its text, or its tool calls as JSON (a tool call is an answer in
        JSON); None for a body of another shape."""
        choices = body.get("choices")
        if not isinstance(choices, list):
            return None
        message = (choices[0].get("message") or {}) if choices and isinstance(choices[0], dict) else {}
        if message.get("tool_calls"):
            return json.dumps(message["tool_calls"])
        return str(message.get("content") or "")

    @classmethod
    def check_model(cls, model: str, settings: ProviderSettings, where: str) -> None:
        if not MODEL_ID.fullmatch(model):
            raise ConfigError(
                f"{where}: expected an OpenAI-compatible model id (letters, digits and . _ : / @ + -, e.g. "
                f"openai/gpt-4o-mini or openai/qwen2.5:0.5b), found {model!r}"
            )

    @classmethod
    def check_ready(cls, settings: ProviderSettings, where: str) -> None:
        base_url = base_url_for(settings)
        if not base_url:
            raise ConfigError(
                f"{where}.base_url: expected the server's base URL (e.g. http://127.0.0.1:8000/v1) in the stack "
                f"file or ${BASE_URL_ENV}, found neither"
            )
        # local import: the client loads the gateway and the cache; stacks validate without them
        from bench.models.providers.openai.client import server_identity

        server_identity(base_url, f"{where}.base_url (or ${BASE_URL_ENV})")

    def chat(self, model: str) -> LLM:
        if self._llm is None:
            # local import: the client loads the gateway and the cache; stacks validate without them
            from bench.models.providers.openai.client import OpenAIChat

            base_url = base_url_for(self.settings)
            if not base_url:
                self.check_ready(self.settings, "providers.openai")
            assert base_url is not None
            options: dict[str, Any] = {"retry": retry_policy(self.settings)}
            if self.settings.timeout_s is not None:
                options["timeout_s"] = float(self.settings.timeout_s)
            if self.settings.concurrency is not None:
                options["max_concurrency"] = self.settings.concurrency
            self._llm = self.keep(OpenAIChat(self.gateway, base_url, **options))
        return self._llm

    def decider(self, model: str) -> DecisionBackend:
        """`decide = "openai/<model>"`: the logprob decider, the one way an OpenAI-compatible endpoint answers typed
        questions (each option's probability read from the endpoint's log-probabilities). Built with one probe
        question, so an endpoint without log-probabilities stops the run before anything else is sent or cached."""
        # local import: the client loads the gateway and the cache; stacks validate without them
        from bench.models.providers.openai.client import OpenAIChat
        from bench.models.providers.openai.logprob import LogprobDecider

        chat = self.chat(model)
        assert isinstance(chat, OpenAIChat)
        decider = self.keep(LogprobDecider(chat, model))
        decider.probe()
        return decider

    def token_counter(self, model: str) -> Any:
        # local import: the client loads the gateway and the cache; stacks validate without them
        from bench.models.tokens import counter_for_model

        return counter_for_model(self.gateway, model)
