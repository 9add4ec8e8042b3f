"""Every error the harness raises on purpose, in one place.

Each one a user can cause carries a one-line message that names the file or field, what was expected and what was
found. The CLI turns any `BenchError` into that line on stderr and exit code 2. Code catches the narrowest class
that says what went wrong; a new error belongs in this tree, under the branch it is a case of:

    BenchError                  a problem the user can fix (exit 2)
    ├── DataError               a data file is missing, altered or malformed
    ├── ConfigError             an arm, stack, flag or option is invalid
    │   ├── RegistryError       a part's name (system, provider, dataset, ...) is unknown, registered twice, or
    │                           its installed package's entry point fails to load
    │   └── PathError           a folder or file to write is a file, read-only, or under a file
    ├── CacheError              the call cache cannot serve a request
    │   ├── CacheMiss           replay met a request no cache holds (no network was touched)
    │   └── CorruptEntry        one entry of the local cache is unreadable (`cache delete KEY`, `verify --repair`)
    ├── BudgetExceeded          a call would exceed the spend budget; it was not sent
    ├── SpendNotConfirmed       a run that may send paid calls got no yes (--yes, ENGRAM_ASSUME_YES=1, a terminal)
    ├── RunLocked               another run of the same arm, slice and stack holds this checkout's run lock
    ├── ProviderError           a live model provider failed or refused; `.provider` names it. By kind of failure:
    │   ├── ProviderUnavailable no usable reply after the retries (the per-provider classes below are also engram's
    │   │   │                   DecisionError or LLMError, so the write degrades instead of stopping)
    │   │   ├── ProviderRateLimited     every attempt was answered 429: slow down or raise the provider's limit
    │   │   ├── ProviderMalformedReply  a reply that does not read as the provider's API says
    │   │   ├── JevUnavailable          Jev failed after its retries (also engram's DecisionError)
    │   │   │   ├── JevRateLimited      ... every attempt a 429 (also ProviderRateLimited)
    │   │   │   └── JevMalformedReply   ... a body that is not the JSON with answers (also ProviderMalformedReply)
    │   │   ├── AnthropicUnavailable    the Anthropic call failed after its retries (also engram's LLMError)
    │   │   │   ├── AnthropicRateLimited
    │   │   │   └── AnthropicMalformedReply
    │   │   ├── OpenAIUnavailable       an OpenAI-compatible call failed after its retries (also engram's LLMError)
    │   │   │   ├── OpenAIRateLimited
    │   │   │   └── OpenAIMalformedReply
    │   │   └── LogprobDecisionFailed   a logprob decision call failed after its retries (also DecisionError)
    │   ├── ProviderRefused     the key or the request was refused (401/403/4xx): a configuration problem, the run
    │   │   │                   stops
    │   │   ├── JevRefused
    │   │   ├── AnthropicRefused
    │   │   ├── OpenAIRefused
    │   │   └── LogprobsUnavailable   the logprob decider's endpoint returns no log-probabilities
    │   └── ReplyTooLarge       a reply over its provider's size limit: refused, not cached, the run stops
    ├── ResultError             a result file does not match the result schema, or is missing
    │   ├── QuestionSetMismatch two results to pair do not ask the same questions
    │   └── TraceError          a trace sidecar is missing, unparsable or not in the trace schema
    ├── SystemFailed            a memory system under test failed: unreachable, crashed, too slow, or broke the protocol
    │   ├── IsolationLeak       one conversation's memory came back when retrieving for another
    │   └── ToolRefused         an MCP tool answered isError (a duplicate, a missing folder): counted, not a stop
    ├── GitError                git failed, or is missing, where provenance or the held-out guard needs it
    ├── GridError               a grid cannot start: its executor is missing, or a Ray address does not answer
    ├── HeldoutRefused          the held-out guard said no (wrong commit, modified tree, would overwrite)
    ├── ReproduceError          `reproduce-dev` lacks the shipped subset or a committed result
    ├── WriteFailed             a write stopped on the disk (no space left, quota, read-only); nothing half-written
    ├── UnhealthyRun            most model replies of a role were unusable, or nothing was stored (`--strict`)
    ├── ExportError             the dataset export cannot be written or pushed
    └── PaperError              the paper build cannot go on
        ├── EntryError          an appendix entry name the build does not produce
        ├── FormatError         a number with an unknown display kind or an unprintable value
        └── NumberError         a number id was registered twice, or used without being registered
"""

from __future__ import annotations

from engram import DecisionError, LLMError

__all__ = [
    "AnthropicMalformedReply",
    "AnthropicRateLimited",
    "AnthropicRefused",
    "AnthropicUnavailable",
    "BenchError",
    "BudgetExceeded",
    "CacheError",
    "CacheMiss",
    "ConfigError",
    "CorruptEntry",
    "DataError",
    "EntryError",
    "ExportError",
    "FormatError",
    "GitError",
    "GridError",
    "HeldoutRefused",
    "JevMalformedReply",
    "JevRateLimited",
    "JevRefused",
    "JevUnavailable",
    "LogprobDecisionFailed",
    "LogprobsUnavailable",
    "NumberError",
    "OpenAIMalformedReply",
    "OpenAIRateLimited",
    "OpenAIRefused",
    "OpenAIUnavailable",
    "PaperError",
    "PathError",
    "ProviderError",
    "ProviderMalformedReply",
    "ProviderRateLimited",
    "ProviderRefused",
    "ProviderUnavailable",
    "QuestionSetMismatch",
    "RegistryError",
    "ReproduceError",
    "ReplyTooLarge",
    "ResultError",
    "RunLocked",
    "TraceError",
    "UnhealthyRun",
    "WriteFailed",
    "SpendNotConfirmed",
    "SystemFailed",
    "IsolationLeak",
    "ToolRefused",
]


class BenchError(Exception):
    """Base class: a problem the user can fix. The message is one line and says how."""

    exit_code = 2


class DataError(BenchError):
    """A data file is missing, altered or malformed."""


class ConfigError(BenchError):
    """An arm file, stack, flag or option is invalid."""


class RegistryError(ConfigError):
    """A part's name is unknown or registered twice (the line lists the known names and how to add one), or an
    installed package's entry point for it fails to load (the line names the entry point and its distribution)."""


class PathError(ConfigError):
    """A folder or file the harness must write (--out, $ENGRAM_CACHE_DIR...) is a file, read-only, or under a file:
    found before any work, so nothing was read, sent or written."""


class WriteFailed(BenchError):
    """A write stopped on the disk (no space left, quota, read-only file system); the file was not replaced."""


class CacheError(BenchError):
    """The call cache cannot serve a request (corrupt entry, unreadable subset)."""


class CacheMiss(CacheError):
    """Replay mode met a request that no cache holds; no network was touched."""


class CorruptEntry(CacheError):
    """One cache entry is unreadable (not JSON, wrong key, failed checksum); the rest of the cache is fine."""


class BudgetExceeded(BenchError):
    """A call would exceed the run or cumulative spend budget; it was not sent."""


class SpendNotConfirmed(BenchError):
    """A run that may send paid calls was not confirmed; nothing was sent."""


class RunLocked(BenchError):
    """Another run of the same arm on the same slice and stack is in progress in this checkout."""


class ProviderError(BenchError):
    """A live model provider failed after its retries, or refused the request. `provider` names it (a class
    attribute on the per-provider classes; any ProviderError may be given one: `ProviderError(msg, provider=...)`)."""

    provider: str = ""

    def __init__(self, *args: object, provider: str | None = None) -> None:
        super().__init__(*args)
        if provider is not None:
            self.provider = provider


class ProviderUnavailable(ProviderError):
    """No usable reply after the retries (timeouts, connection errors, 5xx): a transient failure."""


class ProviderRateLimited(ProviderUnavailable):
    """Every attempt was answered 429 (rate limited): slow the run down or raise the provider's limit."""


class ProviderMalformedReply(ProviderUnavailable):
    """A reply that does not read as the provider's API says (not JSON, no choices, no answers)."""


class ProviderRefused(ProviderError):
    """The provider refused the key or the request (401/403/400/404/422...): a configuration problem; the run
    stops."""


# -- per provider: the same kinds, with engram's own error so engram degrades the write on an unavailable reply --


class JevUnavailable(ProviderUnavailable, DecisionError):
    """The whole request failed (retries exhausted, or a non-JSON reply): the write path degrades the fact."""

    provider = "jev"


class JevRateLimited(JevUnavailable, ProviderRateLimited):
    """Jev answered 429 on every attempt."""


class JevMalformedReply(JevUnavailable, ProviderMalformedReply):
    """Jev's reply is not the JSON body with answers its API returns."""


class JevRefused(ProviderRefused):
    """Jev refused the request (401/403/422...): a configuration problem that stops the run."""

    provider = "jev"


class AnthropicUnavailable(ProviderUnavailable, LLMError):
    """The call failed after its retries, or the reply was unreadable: engram degrades (tentative fact)."""

    provider = "anthropic"


class AnthropicRateLimited(AnthropicUnavailable, ProviderRateLimited):
    """The Messages API answered 429 (or 529, overloaded) on every attempt."""


class AnthropicMalformedReply(AnthropicUnavailable, ProviderMalformedReply):
    """The Messages API's reply could not be read."""


class AnthropicRefused(ProviderRefused):
    """The API refused the key or the request (401/403/400...): a configuration problem that stops the run."""

    provider = "anthropic"


class OpenAIUnavailable(ProviderUnavailable, LLMError):
    """An OpenAI-compatible call failed after its retries, or its reply was unreadable: engram degrades."""

    provider = "openai"


class OpenAIRateLimited(OpenAIUnavailable, ProviderRateLimited):
    """An OpenAI-compatible server answered 429 on every attempt."""


class OpenAIMalformedReply(OpenAIUnavailable, ProviderMalformedReply):
    """An OpenAI-compatible server's reply is not a chat completion."""


class OpenAIRefused(ProviderRefused):
    """An OpenAI-compatible server refused the key or the request (401/403/400/404...): the run stops."""

    provider = "openai"


class ReplyTooLarge(ProviderError):
    """A provider's reply is larger than its size limit: refused, not cached, and the run stops."""


class LogprobsUnavailable(ProviderRefused):
    """The endpoint behind the logprob decider returns no log-probabilities, so no typed question can be answered:
    a configuration problem that stops the run before anything is cached (not a DecisionError: degrading every
    decision to its default would be a run of defaults, not of the model)."""

    provider = "openai"


class LogprobDecisionFailed(ProviderUnavailable, DecisionError):
    """A logprob decider's call failed after its retries: like Jev's, the write path degrades the fact."""

    provider = "openai"


class ResultError(BenchError):
    """A result file does not match the result schema, or a result a step needs is missing."""


class QuestionSetMismatch(ResultError):
    """Two result sets do not answer the same questions, so a paired comparison is meaningless."""


class TraceError(ResultError):
    """A trace sidecar that is missing, unparsable or not in the trace schema."""


class SystemFailed(BenchError):
    """A memory system in another process (an http or mcp arm, an adapter) did not answer, crashed, exceeded its
    time limit or replied outside the protocol: the message names the system and what it did."""


class IsolationLeak(SystemFailed):
    """The isolation canary came back: a marker written under one namespace was retrieved for another."""


class ToolRefused(SystemFailed):
    """An MCP tool answered with isError: a refusal (a duplicate, a missing folder), which the caller may count as a
    refused write instead of stopping the run."""


class GitError(BenchError):
    """A git command failed (or git is missing) where provenance or the held-out guard needs its answer."""


class GridError(BenchError):
    """A grid cannot start: its executor is not installed, or the Ray cluster at its address does not answer."""


class HeldoutRefused(BenchError):
    """The held-out guard said no: wrong commit, modified tree, or a result that would be overwritten."""


class ReproduceError(BenchError):
    """The shipped subset or a committed result needed for the comparison is missing."""


class ExportError(BenchError):
    """The export cannot be written or pushed."""


class PaperError(BenchError):
    """The paper build cannot go on."""


class EntryError(PaperError):
    """An appendix entry name that the build does not produce."""


class FormatError(PaperError):
    """A number was registered with an unknown display kind or an unprintable value."""


class NumberError(PaperError):
    """A number id was registered twice, or referenced without being registered."""


class UnhealthyRun(BenchError):
    """A run whose model replies were mostly unusable in some role, or that stored nothing from what it wrote
    (`--strict`; bench.run.health)."""
