"""The `jev` provider: TypeSafe's Jev decision models (`bench.models.providers.jev.client`). Key: $TYPESAFE_API_KEY; base URL:
$TYPESAFE_URL, else the stack's `base_url`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from bench.models.providers import Provider, register_provider
from bench.models.providers._settings import retry_policy

if TYPE_CHECKING:
    from engram import DecisionBackend


@register_provider("jev")
class JevProvider(Provider):
    key_env = "TYPESAFE_API_KEY"
    description = "TypeSafe Jev typed decisions (/v1/systemone)"
    packages = ("httpx",)  # the client sends over httpx

    def decider(self, model: str) -> DecisionBackend:
        # local import: the client loads httpx (run extra) and the gateway; stacks validate without them
        from bench.models.providers.jev.client import JevDecider

        options: dict[str, Any] = {"retry": retry_policy(self.settings)}
        base_url = os.environ.get("TYPESAFE_URL") or self.settings.base_url
        if base_url is not None:
            options["base_url"] = base_url
        if self.settings.timeout_s is not None:
            options["timeout_s"] = float(self.settings.timeout_s)
        if self.settings.concurrency is not None:
            options["max_concurrency"] = self.settings.concurrency
        if self.settings.requests_per_second is not None:
            options["requests_per_second"] = float(self.settings.requests_per_second)
        return self.keep(JevDecider(self.gateway, model, **options))
