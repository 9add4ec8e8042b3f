"""What a provider knows about itself is asked of its registered class: the server its SDK calls by default, how to
read the text of one of its replies, and which installed packages a result's provenance records for it. A plug-in
provider states the same facts in its own class and the harness reads them the same way."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import metadata
from types import SimpleNamespace
from typing import Any

import pytest

from bench.models.provider import (
    PROVIDERS,
    Provider,
    default_base_url,
    provenance_packages,
    provider_names,
    reply_text,
)
from bench.run.health import RunHealth


class KioskProvider(Provider):
    """A plug-in's provider whose replies put their text under `output`."""

    default_base_url = "http://127.0.0.1:9911/api"
    packages = ("kiosk-sdk",)

    @classmethod
    def reply_text(cls, body: Mapping[str, Any]) -> str | None:
        output = body.get("output")
        return output if isinstance(output, str) else None


@pytest.fixture
def kiosk() -> Iterator[None]:
    PROVIDERS.add("kiosk", KioskProvider)
    try:
        yield
    finally:
        PROVIDERS.remove("kiosk")


def test_each_sdk_provider_names_the_server_it_calls_when_the_stack_names_none() -> None:
    assert default_base_url("anthropic") == "https://api.anthropic.com"
    assert default_base_url("openai") == "https://api.openai.com/v1"
    assert default_base_url("offline") == "" and default_base_url("no-such-provider") == ""


def test_a_claude_reply_and_a_chat_completion_are_each_read_by_their_own_provider() -> None:
    claude = {"content": [{"type": "text", "text": "Paris"}, {"type": "text", "text": " in 2019"}]}
    completion = {"choices": [{"message": {"role": "assistant", "content": "Lyon"}}]}
    assert reply_text("anthropic", claude) == "Paris in 2019"
    assert reply_text("openai", completion) == "Lyon"
    # neither shape is the other's, and a stand-in's or a decision service's body has no text to read
    assert reply_text("anthropic", completion) is None and reply_text("openai", claude) is None
    assert reply_text("offline", {"text": "x"}) is None and reply_text("jev", completion) is None
    assert reply_text("no-such-provider", completion) is None


def test_a_tool_call_reply_reads_as_its_calls_in_json() -> None:
    called = {"choices": [{"message": {"content": None, "tool_calls": [{"function": {"name": "add_memory"}}]}}]}
    assert reply_text("openai", called) == '[{"function": {"name": "add_memory"}}]'


def test_provenance_records_each_providers_packages_once_in_the_order_first_named() -> None:
    assert provenance_packages(["offline", "anthropic", "openai", "jev"]) == ("anthropic", "httpx")
    assert provenance_packages(["offline", "openai", "anthropic", "jev"]) == ("httpx", "anthropic")
    assert provenance_packages(["offline"]) == ()
    assert provenance_packages(["no-such-provider"]) == ()


def test_every_package_a_built_in_provider_names_is_a_distribution_name() -> None:
    named = provenance_packages(provider_names())
    assert "anthropic" in named and "httpx" in named
    for package in named:
        try:
            metadata.version(package)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{package} is not installed here (the run extra)")


def test_a_plug_in_providers_own_facts_reach_the_run_health_record(kiosk: None) -> None:
    assert provenance_packages(["kiosk", "openai"]) == ("kiosk-sdk", "httpx")
    assert reply_text("kiosk", {"output": "Berlin"}) == "Berlin"

    health = RunHealth()
    request = SimpleNamespace(provider="kiosk", purpose="answer", target=None, body={}, caller="")
    health.watch(request, SimpleNamespace(body={"output": "", "model": "kiosk-7b"}))

    assert health.servers["answer"] == {
        "provider": "kiosk",
        "base_url": "http://127.0.0.1:9911/api",
        "model_reported": "kiosk-7b",
    }
    assert health.roles["answer"].empty == 1  # its reply was read through its own shape: empty text
