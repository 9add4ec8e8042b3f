"""Each provider is one folder (provider, client, errors), and each folder maps its wire's failures into the one
provider error tree by kind of failure."""

from __future__ import annotations

import subprocess
import sys

import anthropic
import httpx
import pytest

from bench.errors import (
    ProviderMalformedReply,
    ProviderRefused,
)
from bench.models.clients.http1 import Reply
from bench.models.clients.retry import RetryableFailure
from bench.models.providers import PROVIDERS
from bench.models.providers.anthropic.errors import sdk_failure as anthropic_failure
from bench.models.providers.jev.errors import status_failure, transport_failure
from bench.models.providers.openai.errors import completion_body, not_a_completion, retry_after
from bench.models.providers.openai.errors import status_failure as openai_status
from bench.models.providers.openai.errors import transport_failure as openai_transport
from bench.vocab import REPO_ROOT

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/anything")


def reply(status: int, headers: dict[str, str] | None = None, text: str = "{}") -> httpx.Response:
    return httpx.Response(status, headers=headers, text=text, request=REQUEST)


def test_every_built_in_provider_with_a_client_is_one_folder() -> None:
    folder = REPO_ROOT / "bench" / "models" / "providers"
    for name in ("anthropic", "jev", "openai"):
        assert PROVIDERS.origin(name).startswith(f"bench.models.providers.{name}.")
        assert {"__init__.py", "client.py", "errors.py"} <= {p.name for p in (folder / name).iterdir()}
    assert (folder / "offline" / "__init__.py").is_file() and (folder / "offline" / "standins.py").is_file()


def test_the_anthropic_sdks_exceptions_by_kind() -> None:
    where = "anthropic messages (claude-x, answer)"
    assert isinstance(anthropic_failure(anthropic.APITimeoutError(REQUEST), where)[1], RetryableFailure)
    outcome, error = anthropic_failure(anthropic.APIStatusError("busy", response=reply(529), body=None), where)
    assert outcome is None and isinstance(error, RetryableFailure) and error.outcome == "529"
    outcome, error = anthropic_failure(anthropic.APIStatusError("no", response=reply(401), body=None), where)
    assert outcome == "401" and isinstance(error, ProviderRefused) and error.provider == "anthropic"
    assert where in str(error) and "ANTHROPIC_API_KEY" in str(error)
    outcome, error = anthropic_failure(ValueError("Expecting value"), where)
    assert outcome == "malformed" and isinstance(error, ProviderMalformedReply)
    assert anthropic_failure(KeyError("not the SDK's"), where) is None


def test_an_openai_compatible_servers_failures_by_kind() -> None:
    where = "openai chat.completions at http://127.0.0.1:9 (m, answer)"
    assert isinstance(openai_transport(TimeoutError("deadline")), RetryableFailure)
    assert openai_transport(ConnectionResetError("reset")).outcome == "connection"
    assert openai_transport(KeyError("not the client's")) is None
    assert openai_status(Reply(200, {}, b"{}"), where) is None
    outcome, error = openai_status(Reply(429, {"retry-after-ms": "2500"}, b""), where)
    assert outcome is None and isinstance(error, RetryableFailure) and error.retry_after == "2.5"
    outcome, error = openai_status(Reply(404, {}, b'{"error": {"message": "no such model"}}'), where)
    assert outcome == "404" and isinstance(error, ProviderRefused) and error.provider == "openai"
    assert where in str(error) and "no such model" in str(error) and "OPENAI_API_KEY" in str(error)
    assert retry_after({"retry-after": "7"}) == "7"
    assert completion_body(b'{"choices": [{"message": {}}]}', where) == {"choices": [{"message": {}}]}
    unreadable = completion_body(b'{"choices": [tru', where)
    assert isinstance(unreadable, ProviderMalformedReply) and "expected a JSON reply" in str(unreadable)
    assert not_a_completion({"choices": [{"message": {}}]}, where) is None
    empty = not_a_completion({"choices": []}, where)
    assert isinstance(empty, ProviderMalformedReply) and empty.provider == "openai"


def test_jevs_http_failures_by_kind() -> None:
    where = "jev http://127.0.0.1:9/v1/systemone"
    assert isinstance(transport_failure(httpx.ConnectTimeout("slow")), RetryableFailure)
    assert transport_failure(RuntimeError("not httpx's")) is None
    assert status_failure(reply(200), where, "jev-1") is None
    retried = status_failure(reply(503, {"retry-after": "1"}), where, "jev-1")
    assert isinstance(retried, RetryableFailure) and retried.retry_after == "1"
    refused = status_failure(reply(422, text='{"detail": "bad model"}'), where, "jev-9")
    assert isinstance(refused, ProviderRefused) and refused.provider == "jev" and "'jev-9'" in str(refused)


@pytest.mark.parametrize("name", ["anthropic", "jev", "openai", "offline"])
def test_importing_a_provider_imports_no_client(name: str) -> None:
    probe = f"import sys, bench.models.providers.{name}; print(sorted(m for m in sys.modules if m.endswith('.client') or m == 'bench.models.gateway'))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip() == "[]"
