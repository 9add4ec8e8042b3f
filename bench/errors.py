"""One exception hierarchy for the harness.

Every error a user can cause carries a one-line message that names the file or field and what was expected.
The CLI turns any `BenchError` into that line on stderr and exit code 2.
"""

from __future__ import annotations


class BenchError(Exception):
    """Base class: a problem the user can fix. The message is one line and says how."""

    exit_code = 2


class DataError(BenchError):
    """A data file is missing, altered or malformed."""


class ConfigError(BenchError):
    """An arm file, flag or option is invalid."""


class CacheError(BenchError):
    """The call cache cannot serve a request (corrupt entry, unreadable subset)."""


class CacheMiss(CacheError):
    """Replay mode met a request that no cache holds; no network was touched."""


class BudgetExceeded(BenchError):
    """A call would exceed the run or cumulative spend budget; it was not sent."""


class ProviderError(BenchError):
    """A live model provider failed after its retries, or refused the request."""


class ResultError(BenchError):
    """A result file does not match the result schema."""
