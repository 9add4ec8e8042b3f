"""Provider settings turned into client options (shared by the provider modules)."""

from __future__ import annotations

from bench.models.clients.retry import RetryPolicy
from bench.models.stacks import ProviderSettings


def retry_policy(settings: ProviderSettings) -> RetryPolicy:
    """The harness's retry policy with a stack's `retries` / `max_retry_after_s`, else its defaults."""
    default = RetryPolicy()
    return RetryPolicy(
        attempts=settings.retries if settings.retries is not None else default.attempts,
        max_retry_after_s=(
            float(settings.max_retry_after_s) if settings.max_retry_after_s is not None else default.max_retry_after_s
        ),
    )
