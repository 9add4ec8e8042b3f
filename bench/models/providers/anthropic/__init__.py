"""The `anthropic` provider: Claude models over the Messages API (`bench.models.providers.anthropic.client`), and Anthropic's
token-count endpoint as a token counter. Key: $ANTHROPIC_API_KEY; base URL: $ANTHROPIC_BASE_URL or the SDK's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench.models.providers import Provider, register_provider
from bench.models.providers._settings import retry_policy

if TYPE_CHECKING:
    from engram import LLM


@register_provider("anthropic")
class AnthropicProvider(Provider):
    key_env = "ANTHROPIC_API_KEY"
    unbilled_endpoints = frozenset({"count_tokens"})  # Anthropic does not bill token counting
    description = "Anthropic Messages API (Claude), token counting via its count endpoint"
    default_base_url = "https://api.anthropic.com"
    packages = ("anthropic", "httpx")  # the SDK sends over httpx
    _llm: Any = None

    @classmethod
    def reply_text(cls, body: Mapping[str, Any]) -> str | None:
        """A Messages reply's text blocks joined; None for a body of another shape."""
        content = body.get("content")
        if not isinstance(content, list):
            return None
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))

    def chat(self, model: str) -> LLM:
        if self._llm is None:
            # local import: the client loads the anthropic SDK (run extra) and the gateway; stacks validate without them
            from bench.models.providers.anthropic.client import AnthropicLLM

            options: dict[str, Any] = {"retry": retry_policy(self.settings)}
            if self.settings.timeout_s is not None:
                options["timeout_s"] = float(self.settings.timeout_s)
            if self.settings.concurrency is not None:
                options["max_concurrency"] = self.settings.concurrency
            self._llm = self.keep(AnthropicLLM(self.gateway, **options))
        return self._llm

    def token_counter(self, model: str) -> Any:
        # local import: the client loads the anthropic SDK (run extra) and the gateway; stacks validate without them
        from bench.models.providers.anthropic.client import AnthropicTokenCounter

        return AnthropicTokenCounter(self.chat(model), model)  # type: ignore[arg-type]
