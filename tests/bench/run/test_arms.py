"""A researcher declares arms in TOML files; bad files are refused with one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.errors import ConfigError
from bench.run.arms import ARMS_DIR, arm_names, load_all_arms, load_arm
from bench.systems import RetrievedLines, Setting, System, WriteUsage, register_system


@register_system("test-notebook")
class NotebookSystem(System):
    """A registered system with two settings, so arm validation has something real to check against."""

    SETTINGS = (
        Setting("depth", int, 1, "how deep"),
        Setting("mode", str, "plain", "how", choices=("plain", "fancy")),
    )

    def write(self, message: Any) -> WriteUsage:
        return WriteUsage()

    def retrieve(self, question: Any, k: int) -> RetrievedLines:
        return RetrievedLines((), ())

    def stats(self) -> dict[str, Any]:
        return {}


def write_arm(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_child_arm_inherits_and_overrides_its_parent(tmp_path: Path) -> None:
    write_arm(
        tmp_path,
        "base",
        'system = "test-notebook"\nk = 20\n[settings]\ndepth = 2\n[models]\nanswer = "claude-sonnet-4-6"\n',
    )
    write_arm(tmp_path, "child", 'extends = "base"\nk = [3, 20]\n[settings]\nmode = "fancy"\n')

    child = load_arm("child", tmp_path)

    assert child.system == "test-notebook"
    assert child.settings == {"depth": 2, "mode": "fancy"}
    assert child.k == (3, 20)
    assert child.models_for("paper") == {"answer": "claude-sonnet-4-6"}
    assert child.lineage == ("child", "base")


def test_hash_follows_behaviour_not_wording(tmp_path: Path) -> None:
    write_arm(tmp_path, "a", 'system = "test-notebook"\ndescription = "first"\n[settings]\ndepth = 2\n')
    write_arm(tmp_path, "b", 'system = "test-notebook"\ndescription = "second wording"\n[settings]\ndepth = 2\n')
    write_arm(tmp_path, "c", 'system = "test-notebook"\n[settings]\ndepth = 3\n')

    a, b, c = (load_arm(n, tmp_path) for n in "abc")

    # The name is part of the resolved arm, so compare the settings-bearing parts through a renamed copy.
    assert a.resolved() | {"name": "x"} == b.resolved() | {"name": "x"}
    assert a.hash != c.hash
    assert len(a.hash) == 64


def test_hash_is_the_same_after_inheritance_as_when_written_out(tmp_path: Path) -> None:
    write_arm(tmp_path, "parent", 'system = "test-notebook"\nk = 5\n[settings]\ndepth = 4\n')
    write_arm(tmp_path, "flat", 'system = "test-notebook"\nk = 5\n[settings]\ndepth = 4\nmode = "fancy"\n')
    write_arm(tmp_path, "derived", 'extends = "parent"\n[settings]\nmode = "fancy"\n')
    flat, derived = load_arm("flat", tmp_path), load_arm("derived", tmp_path)
    assert {**flat.resolved(), "name": ""} == {**derived.resolved(), "name": ""}


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('system = "test-notebook"\ncolour = "red"\n', ["bad.toml", "unknown key 'colour'", "extends"]),
        ("system = 3\n", ["bad.toml", "'system'", "a string", "int 3"]),
        ("k = 3\n", ["bad.toml", "missing field 'system'"]),
        ('system = "no-such-system"\n', ["bad.toml", "'no-such-system'", "test-notebook"]),
        ('system = "test-notebook"\nextends = "ghost"\n', ["bad.toml", "'extends'", "'ghost'"]),
        ('system = "test-notebook"\nk = [3, 0]\n', ["bad.toml", "'k'", "positive integer"]),
        ('system = "test-notebook"\nk = true\n', ["bad.toml", "'k'"]),
        ('system = "test-notebook"\n[settings]\nwidth = 1\n', ["bad.toml", "settings.width", "depth, mode"]),
        ('system = "test-notebook"\n[settings]\ndepth = "deep"\n', ["bad.toml", "settings.depth", "int"]),
        ('system = "test-notebook"\n[settings]\nmode = "odd"\n', ["bad.toml", "settings.mode", "fancy"]),
        ('system = "test-notebook"\n[models]\nwriter = "claude-haiku-4-5"\n', ["bad.toml", "models.writer", "extract"]),
        ('system = "test-notebook"\n[scoring]\nadversarial = "yes"\n', ["bad.toml", "scoring.adversarial"]),
        ('system = "test-notebook"\n[token_match]\nsweep_arm = "bad"\n', ["bad.toml", "token_match.reference_arm"]),
        ('system = "test-notebook"\nname = "other"\n', ["bad.toml", "'name'", "'bad'"]),
        ('system = "test-notebook"\nk = [\n', ["bad.toml", "not valid TOML"]),
    ],
)
def test_a_bad_arm_file_is_refused_with_one_line_naming_file_and_field(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    write_arm(tmp_path, "bad", text)
    with pytest.raises(ConfigError) as caught:
        load_arm("bad", tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_an_inheritance_cycle_is_named(tmp_path: Path) -> None:
    write_arm(tmp_path, "a", 'extends = "b"\nsystem = "test-notebook"\n')
    write_arm(tmp_path, "b", 'extends = "a"\n')
    with pytest.raises(ConfigError, match="cycle: a -> b -> a"):
        load_arm("a", tmp_path)


def test_an_unknown_arm_lists_the_ones_that_exist(tmp_path: Path) -> None:
    write_arm(tmp_path, "real", 'system = "test-notebook"\n')
    with pytest.raises(ConfigError, match="expected one of: real"):
        load_arm("imaginary", tmp_path)


def test_k_by_slice_applies_to_every_heldout_conversation(tmp_path: Path) -> None:
    write_arm(tmp_path, "sweep", 'system = "test-notebook"\nk = 20\n[k_by_slice]\nheldout = [3, 20]\ndev_updates = 3\n')
    arm = load_arm("sweep", tmp_path)
    assert arm.ks_for("dev") == (20,)
    assert arm.ks_for("heldout:conv-41") == (3, 20)
    assert arm.ks_for("dev_updates") == (3,)


def test_token_matched_arm_chooses_its_k_at_run_time(tmp_path: Path) -> None:
    write_arm(tmp_path, "sweep", 'system = "test-notebook"\nk = 20\n')
    write_arm(tmp_path, "ref", 'system = "test-notebook"\nk = 3\n')
    write_arm(
        tmp_path,
        "matched",
        'extends = "sweep"\n[token_match]\nsweep_arm = "sweep"\nreference_arm = "ref"\nreference_k = 3\nks = [3, 4, 5]\n',
    )
    arm = load_arm("matched", tmp_path)
    assert arm.k is None
    assert arm.token_match is not None and arm.token_match.ks == (3, 4, 5)


# ------------------------------------------------------------------------------------------ the shipped arms


SHIPPED = {
    "mem0",
    "engram-llm-decider",
    "engram-jev",
    "engram",
    "engram-reranking-off",
    "mem0-token-matched",
    "full-context",
    "raw-turn-rag",
}


def test_every_arm_the_article_needs_is_shipped() -> None:
    assert SHIPPED <= set(arm_names(ARMS_DIR))


def test_shipped_arms_all_load_with_distinct_hashes() -> None:
    arms = load_all_arms(ARMS_DIR)
    hashes = {arm.hash for arm in arms}
    assert len(hashes) == len(arms)


def test_shipped_arms_say_what_the_article_ran() -> None:
    mem0 = load_arm("mem0")
    assert mem0.ks_for("dev") == (20,)
    assert mem0.ks_for("heldout:conv-30") == (3, 4, 5, 6, 7, 8, 20)
    llm = load_arm("engram-llm-decider")
    assert llm.models_for("paper")["llm_decider"] == "anthropic/claude-sonnet-4-6"
    assert llm.models_for("offline") == {}
    assert load_arm("engram-jev").models_for("paper")["decide"] == "jev/jev-1.13.0"
    off = load_arm("engram-reranking-off")
    assert off.settings["retrieval_rerank"] is False
    assert off.ks_for("heldout:conv-30") == (3,)
    matched = load_arm("mem0-token-matched")
    assert matched.token_match is not None
    assert (matched.token_match.sweep_arm, matched.token_match.reference_arm) == ("mem0", "engram")
    assert matched.token_match.reference_k == 3


def test_arms_json_lists_every_arm_with_its_resolved_settings_and_hash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from bench.cli.program import main

    monkeypatch.setattr("sys.argv", ["engram-bench", "arms", "--json"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    listing = {arm["name"]: arm for arm in json.loads(capsys.readouterr().out)}
    assert SHIPPED <= set(listing)
    assert listing["engram-reranking-off"]["settings"] == {"preset": "E4_FROZEN", "retrieval_rerank": False}
    assert listing["engram-reranking-off"]["extends"] == ["engram"]
    assert listing["engram"]["hash"] == load_arm("engram").hash
