"""The `openai` provider as stacks use it: the shipped openai and local stacks, where the base URL comes from, which
token counter a result names, mem0's extraction through the same provider, and the banner of a free local server."""

from __future__ import annotations

import io
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from fakeservers import CHAT_COMPLETIONS, FakeModelServer, default_responder, fake_chat_completion, fake_openai  # noqa: F401

from bench.errors import ConfigError
from bench.models.gateway import Gateway
from bench.models.providers import Models
from bench.models.providers.openai.client import OpenAIChat
from bench.models.stacks import ROLES, build_stack, load_stack_spec
from bench.run.preflight import Preflight, announce_and_confirm


def test_the_openai_stack_is_gpt_4o_mini_for_every_role_with_its_price() -> None:
    stack = build_stack("openai")
    assert {role: str(stack.ref(role)) for role in ROLES} == dict.fromkeys(ROLES, "openai/gpt-4o-mini")
    assert stack.standins == []  # typed decisions too: the logprob decider reads gpt-4o-mini's log-probabilities
    price = stack.settings("openai").prices["gpt-4o-mini"]
    assert (price.input_per_mtok, price.output_per_mtok) == (0.15, 0.6)
    assert stack.paid_providers == ["openai"]
    # a 429 from OpenAI must not end a run: more attempts and longer waits than the 5 s default
    assert stack.settings("openai").retries == 6 and stack.settings("openai").max_retry_after_s == 60.0


def test_the_local_stack_is_one_free_model_on_this_machine() -> None:
    stack = build_stack("local")
    assert {str(stack.ref(role)) for role in ROLES} == {"openai/local-model"}
    settings = stack.settings("openai")
    assert settings.base_url == "http://127.0.0.1:8000/v1" and settings.paid is False
    assert settings.prices["local-model"].cost_usd(1e6, 1e6) == 0.0
    assert stack.paid_providers == []


def test_openai_base_url_in_the_environment_overrides_the_stack(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    stack = build_stack("openai")
    models = Models(stack.refs, stack.settings, Gateway(local=tmp_path, subsets=[]), lambda: None)  # type: ignore[arg-type,return-value]
    try:
        llm = models.chat("answer")
        assert isinstance(llm, OpenAIChat) and llm.target == "http://127.0.0.1:11434/v1"
        monkeypatch.delenv("OPENAI_BASE_URL")
        other = Models(stack.refs, stack.settings, Gateway(local=tmp_path, subsets=[]), lambda: None)  # type: ignore[arg-type,return-value]
        assert other.chat("answer").target == "https://api.openai.com:443/v1"  # type: ignore[attr-defined]
        other.close()
    finally:
        models.close()


def stack_file(directory: Path, name: str, providers: str, model: str = "openai/my-model") -> Path:
    roles = "\n".join(f'{role} = "{model}"' for role in ROLES)
    path = directory / f"{name}.toml"
    path.write_text(f'description = "a test stack"\n[roles]\n{roles}\n{providers}\n')
    return path


def test_a_stack_without_any_base_url_is_refused_before_anything_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    stack_file(tmp_path, "nourl", "[providers.openai.prices]\nmy-model = { input = 0.0, output = 0.0 }")
    with pytest.raises(ConfigError, match=r"providers\.openai\.base_url: expected the server's base URL") as info:
        build_stack("nourl", directory=tmp_path)
    assert "\n" not in str(info.value)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
    assert build_stack("nourl", directory=tmp_path).providers == ["openai"]


@pytest.mark.parametrize(
    ("providers", "model", "message"),
    [
        ('[providers.openai]\nbase_url = "http://127.0.0.1:1/v1"', "openai/my-model", "has no price"),
        (
            '[providers.openai]\nbase_url = "http://127.0.0.1:1/v1"\n[providers.openai.prices]\n'
            "my-model = { input = 0.0, output = 0.0 }",
            "openai/my model",
            "expected an OpenAI-compatible model id",
        ),
        (
            '[providers.openai]\nbase_url = "http://127.0.0.1:1/v1"\npaid = false\n[providers.openai.prices]\n'
            "my-model = { input = 0.5, output = 1.0 }",
            "openai/my-model",
            r"paid: false, but .*prices\.my-model is not 0",
        ),
        (
            '[providers.openai]\nbase_url = "http://127.0.0.1:1/v1"\npaid = "no"',
            "openai/my-model",
            "paid: expected true or false",
        ),
    ],
    ids=["unpriced model", "model id with a space", "paid = false but priced", "paid not a boolean"],
)
def test_bad_openai_stacks_are_one_line(tmp_path: Path, providers: str, model: str, message: str) -> None:
    stack_file(tmp_path, "bad", providers, model)
    with pytest.raises(ConfigError, match=message) as info:
        load_stack_spec("bad", tmp_path)
    assert "\n" not in str(info.value)


def test_tokens_per_question_come_from_a_declared_counter_which_the_result_names(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # tiktoken absent (it is not a dependency)
    stack = build_stack("openai")
    models = Models(stack.refs, stack.settings, Gateway(local=tmp_path / "a", subsets=[]), lambda: None)  # type: ignore[arg-type,return-value]
    counter = models.token_counter()
    assert counter.count("Caroline went to the support group.") > 0
    assert models.ran["count_tokens"] == "openai/approx-wordpiece-v1"

    class Encoding:
        name = "o200k_base"

        def encode(self, text: str, disallowed_special: Any = ()) -> list[int]:
            return list(range(len(text.split())))

    fake = types.SimpleNamespace(encoding_for_model=lambda model: Encoding())
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    models = Models(stack.refs, stack.settings, Gateway(local=tmp_path / "b", subsets=[]), lambda: None)  # type: ignore[arg-type,return-value]
    assert models.token_counter().count("four words right here") == 4
    assert models.ran["count_tokens"] == "openai/tiktoken-o200k_base"


def preflight_for(stack_name: str, modes: dict[str, str]) -> Preflight:
    return Preflight(
        arm="full-context",
        slice_name="dev",
        stack=build_stack(stack_name),
        modes=modes,
        strict=False,
        run_limit_usd=20.0,
        total_limit_usd=100.0,
        spent_usd=0.0,
        destination=Path("runs/x"),
    )


def test_a_free_local_server_asks_no_spending_question_but_openai_does() -> None:
    lines: list[str] = []
    local = preflight_for("local", {"openai": "record", "offline": "live"})
    assert not local.may_spend
    announce_and_confirm(local, assume_yes=False, say=lines.append, stdin=io.StringIO(""), environ={})
    assert "openai record (declared free in the stack: $0)" in lines[0]
    paid = preflight_for("openai", {"openai": "record", "offline": "live"})
    assert paid.may_spend and paid.paid_providers == ["openai"]


def mem0_responder(path: str, body: Any) -> tuple[int, dict[str, str], Any]:
    """mem0's extraction prompt (a long system message) gets one fact back; anything else the default fake."""
    if path != CHAT_COMPLETIONS:
        return default_responder(path, body)
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if len(system) > 5000:
        fact = "Caroline said: " + " ".join(str(body["messages"][-1]["content"]).split()[-8:])
        return 200, {}, fake_chat_completion(body, json.dumps({"memory": [{"id": "0", "text": fact}]}))
    return 200, {}, fake_chat_completion(body)


@pytest.mark.slow
def test_mem0_extracts_through_the_openai_provider(tmp_path: Path, monkeypatch) -> None:
    from bench.data.slices import load_slice
    from bench.models.embeddings import shared_minilm
    from bench.systems import SystemContext, build_system

    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-mem0-test")
    dev = load_slice("dev")
    stack = build_stack("openai")
    with FakeModelServer(mem0_responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        context = SystemContext(
            stack="openai",
            models=stack.models,
            gateway=Gateway(local=tmp_path / "cache", subsets=[], mode="live"),
            run_dir=tmp_path / "run",
            conversation=dev.conversation,
            speakers=dev.speakers,
            embedder=shared_minilm(),
        )
        system = build_system("mem0", {}, context)
        try:
            usages = [system.write(m) for m in dev.messages[:2]]
            facts = system.facts_for_audit()
        finally:
            system.close()
            context.hub.close()
        sent = [r for r in server.requests if r.path == CHAT_COMPLETIONS]
    assert len(sent) == 2 and all(r.body["model"] == "gpt-4o-mini" for r in sent)
    assert all(r.body["messages"][0]["role"] == "system" for r in sent)
    assert context.hub.ran["extract"] == "openai/gpt-4o-mini"
    assert sum(u.facts for u in usages) == len(facts) > 0 and all(u.cost_usd > 0 for u in usages)
