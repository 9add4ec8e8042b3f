"""One name per model: a stand-in is named on every screen by the name its stack writes (`offline/rules-decider`),
with the version that ran beside it, whatever id its code answers under and a result records (`rules-standin-v9`,
also its calls' cache-key model, which is why the recorded ids are not renamed)."""

from __future__ import annotations

from bench.models.provider import shown_model
from bench.models.providers import Models
from bench.models.stacks import load_stack_spec

BUILDERS = {
    "extract": Models.extractor,
    "decide": Models.decider,
    "answer": Models.answerer,
    "judge": Models.judge,
    "count_tokens": Models.token_counter,
}


def test_every_offline_role_is_shown_by_its_stack_name_with_the_version_that_ran() -> None:
    spec = load_stack_spec("offline")
    models = Models(spec.roles, spec.settings, gateway=None, embedder=lambda: None)
    for role in spec.roles:
        if role in BUILDERS:
            BUILDERS[role](models)
        else:  # escalate, llm_decider: the rules decider answering mem0's update prompt as a chat model
            models.chat(role)
    assert set(models.ran) == set(spec.roles)
    for role, recorded in models.ran.items():
        shown = shown_model(recorded)
        assert shown.startswith(f"{spec.roles[role]} (stand-in v"), (role, recorded, shown)
        assert shown.removeprefix(f"{spec.roles[role]} (stand-in v").removesuffix(")").isdigit()
    # the two whose ids do not start with their names
    assert shown_model(models.ran["count_tokens"]) == "offline/wordpiece-counter (stand-in v1)"
    assert shown_model(models.ran["decide"]).startswith("offline/rules-decider (stand-in v")


def test_a_role_never_called_keeps_the_stack_name_and_shows_no_version() -> None:
    assert shown_model("offline/rules-decider") == "offline/rules-decider"


def test_an_older_file_naming_a_stand_in_without_its_provider_is_shown_by_the_same_name() -> None:
    assert shown_model("local-token-counter-standin-v1") == "offline/wordpiece-counter (stand-in v1)"
    assert shown_model("rules-standin-v1") == "offline/rules-decider (stand-in v1)"
    assert shown_model("rules-extractor-standin-v3") == "offline/rules-extractor (stand-in v3)"


def test_real_models_and_ids_no_stand_in_answers_under_are_shown_as_recorded() -> None:
    for recorded in (
        "anthropic/claude-haiku-4-5",
        "claude-haiku-4-5",
        "openai/approx-wordpiece-v1",
        "openai/meta-llama/Llama-3.1-8B",
        "offline/rules-standin-vX",
        "rules-standin-v",
        "somebody/rules-standin-v9",  # a provider nobody registered
    ):
        assert shown_model(recorded) == recorded
