"""Stacks are data: each file in stacks/ names a provider/model per role, and a bad file is one line naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.models.providers import Models, provider_class, provider_names
from bench.models.stacks import (
    RESULT_STACK_NAMES,
    ROLES,
    STACK_NAMES,
    ModelRef,
    Price,
    build_stack,
    load_stack_spec,
    price_for,
    stack_specs,
)

GOOD_ROLES = """
[roles]
extract = "offline/rules-extractor"
decide = "offline/rules-decider"
escalate = "offline/rules-decider"
llm_decider = "offline/rules-decider"
answer = "anthropic/claude-sonnet-4-6"
judge = "offline/lexical-judge"
count_tokens = "offline/wordpiece-counter"
"""
PRICED = """
[providers.anthropic.prices]
claude-sonnet-4-6 = { input = 3.0, output = 15.0 }
"""


def write_stack(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_shipped_stack_loads_and_names_a_model_for_every_role() -> None:
    assert {"offline", "paper"} <= set(STACK_NAMES) and "paper-v3" not in STACK_NAMES  # runnable ones
    assert {"offline", "paper", "paper-v3"} <= set(RESULT_STACK_NAMES)  # what a result file may name
    for name, spec in stack_specs().items():
        assert set(spec.roles) == set(ROLES), name
        assert spec.description and spec.label


def test_the_paper_stack_is_the_articles_models_and_offline_is_all_stand_ins() -> None:
    paper = build_stack("paper")
    assert paper.models["extract"] == "anthropic/claude-haiku-4-5"
    assert paper.models["decide"] == "jev/jev-1.13.0"
    assert {paper.models[r] for r in ("escalate", "llm_decider", "answer", "judge")} == {"anthropic/claude-sonnet-4-6"}
    assert paper.standins == [] and paper.paid_providers == ["anthropic", "jev"]
    offline = build_stack("offline")
    assert offline.standins == sorted(ROLES) and offline.paid_providers == []
    assert "not the paper's numbers" in offline.label


def test_prices_come_from_the_stack_files() -> None:
    assert price_for("anthropic", "claude-haiku-4-5") == Price(1.0, 5.0)
    assert price_for("jev", "jev-1.13.0").input_per_mtok == 0.042
    assert price_for("offline", "rules-decider") == Price(0.0, 0.0)
    with pytest.raises(ConfigError, match=r"expected a price for anthropic/claude-opus-9"):
        price_for("anthropic", "claude-opus-9")


def test_an_arm_may_override_a_role_with_another_provider_model() -> None:
    stack = build_stack("paper", {"answer": "anthropic/claude-haiku-4-5"})
    assert stack.models["answer"] == "anthropic/claude-haiku-4-5"
    assert stack.ref("answer") == ModelRef("anthropic", "claude-haiku-4-5")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"answer": "claude-sonnet-4-6"}, r"models\.answer: expected a model as provider/model"),
        ({"answer": "acme/big-model"}, r"models\.answer: unknown provider 'acme'; known providers: "),
        (
            {"answer": "anthropic/claude-opus-9"},
            r"models\.answer: anthropic/claude-opus-9 has no price in stacks/paper",
        ),
        ({"summarise": "anthropic/claude-haiku-4-5"}, r"models\.summarise: expected a role among extract"),
    ],
)
def test_bad_overrides_are_refused_in_one_line(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        build_stack("paper", overrides)
    assert "\n" not in str(refused.value)


def test_the_offline_stack_only_takes_stand_ins() -> None:
    with pytest.raises(ConfigError, match=r"models\.offline\.answer: the offline stack only takes offline/\*"):
        build_stack("offline", {"answer": "anthropic/claude-sonnet-4-6"})
    with pytest.raises(ConfigError, match=r"unknown stand-in offline/oracle"):
        build_stack("offline", {"answer": "offline/oracle"})


def test_an_import_only_stack_names_its_models_but_cannot_be_run() -> None:
    v3 = load_stack_spec("paper-v3")
    assert v3.import_only and str(v3.roles["answer"]) == "openai/gpt-4o-mini"
    assert str(v3.roles["decide"]) == "jev/jev-1.13.0"
    with pytest.raises(ConfigError, match=r"--stack paper-v3: stacks/paper-v3\.toml is import-only"):
        build_stack("paper-v3")


def test_an_unknown_stack_lists_the_files(tmp_path: Path) -> None:
    write_stack(tmp_path, "mine", f'description = "mine"\n{GOOD_ROLES}{PRICED}')
    with pytest.raises(ConfigError, match=r"--stack: expected one of mine .*found 'cloud'"):
        load_stack_spec("cloud", tmp_path)
    assert build_stack("mine", directory=tmp_path).models["answer"] == "anthropic/claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD_ROLES + PRICED, r"field 'description' must be a one-line text"),
        ('description = "x"\n' + GOOD_ROLES, r"roles\.answer: anthropic/claude-sonnet-4-6 has no price"),
        (
            'description = "x"\n' + GOOD_ROLES.replace('count_tokens = "offline/wordpiece-counter"\n', ""),
            "missing field 'roles.count_tokens'",
        ),
        (
            'description = "x"\n' + GOOD_ROLES + '[providers.anthropic]\nbase_url = "api.example"\n',
            r"providers\.anthropic\.base_url: expected an http\(s\):// URL",
        ),
        (
            'description = "x"\n' + GOOD_ROLES + "[providers.anthropic]\nconcurrency = 0\n",
            r"providers\.anthropic\.concurrency: expected a positive number",
        ),
        (
            'description = "x"\n' + GOOD_ROLES + "[providers.anthropic]\nturbo = true\n",
            r"providers\.anthropic: unknown setting 'turbo'",
        ),
        (
            'description = "x"\n'
            + GOOD_ROLES
            + "[providers.anthropic.prices]\nclaude-sonnet-4-6 = { input = -1, output = 0 }\n",
            r"prices\.claude-sonnet-4-6\.input: expected USD per million tokens >= 0",
        ),
        ('description = "x"\ncolour = "red"\n' + GOOD_ROLES, r"unknown key 'colour'"),
        (
            'description = "x"\n' + GOOD_ROLES.replace('"offline/lexical-judge"', '"lexical-judge"'),
            r"roles\.judge: expected a model as provider/model",
        ),
        ("description = [", r"expected a readable TOML stack file"),
    ],
)
def test_a_bad_stack_file_is_one_line_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    write_stack(tmp_path, "broken", text)
    with pytest.raises(ConfigError, match=message) as refused:
        load_stack_spec("broken", tmp_path)
    assert "\n" not in str(refused.value) and "broken.toml" in str(refused.value)


def test_routing_is_a_registry_lookup_and_records_the_version_that_ran(tmp_path: Path) -> None:
    from bench.models.embeddings import shared_minilm
    from bench.models.gateway import Gateway
    from engram.deciders import RulesDecider

    assert {"anthropic", "jev", "offline"} <= set(provider_names())
    assert provider_class("offline").paid is False and provider_class("jev").key_env == "TYPESAFE_API_KEY"
    models = Models.for_stack("offline", build_stack("offline").models, Gateway(local=None, subsets=[]), shared_minilm)
    decider = models.decider()
    models.chat("escalate")
    # The stack says offline/rules-decider; the result says which version of it ran, read off the object itself.
    assert models.ran == {"decide": f"offline/{RulesDecider.model}", "escalate": f"offline/{RulesDecider.model}"}
    assert decider.model == RulesDecider.model
    models.close()


def test_engram_bench_stacks_lists_every_file_with_its_description(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from bench.cli.commands.stacks import stacks

    stacks(as_json=False)
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["stack", "runs", "description"]
    rows = {line.split()[0]: line for line in table[1:]}
    assert set(rows) == set(RESULT_STACK_NAMES)
    assert "import only" in rows["paper-v3"] and " yes " in rows["offline"]
    assert load_stack_spec("openai").description in rows["openai"]

    stacks(as_json=True)
    listing = {item["name"]: item for item in json.loads(capsys.readouterr().out)}
    assert listing["paper"]["roles"]["decide"] == "jev/jev-1.13.0"
    assert listing["paper"]["providers"]["anthropic"]["prices_per_mtok"]["claude-sonnet-4-6"] == {
        "input": 3.0,
        "output": 15.0,
    }
    assert listing["local"]["providers"]["openai"]["paid"] is False
    assert listing["offline"]["providers"]["offline"]["paid"] is False
    assert listing["imported"]["runnable"] is False
