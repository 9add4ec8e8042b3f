"""A researcher's own stack file with a mistake in it: `run` and `plan` refuse it in one line naming the file and
field, exit 2, and leave no run folder, cache, ledger or result behind. The stack files live outside the checkout
(ENGRAM_STACKS_DIR), so these run the real command line in a fresh process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.models.stacks import ROLES
from bench.vocab import REPO_ROOT

GOOD_OPENAI = """
[providers.openai]
base_url = "http://127.0.0.1:8000/v1"
[providers.openai.prices]
my-model = { input = 0.0, output = 0.0 }
"""


def stack_text(answer: str, providers: str = GOOD_OPENAI) -> str:
    roles = {role: "openai/my-model" for role in ROLES} | {"decide": "offline/rules-decider", "answer": answer}
    lines = "\n".join(f'{role} = "{model}"' for role, model in roles.items())
    return f'description = "my own server"\n[roles]\n{lines}\n{providers}'


CASES = {
    "unknown provider": (stack_text("mistral/large"), "roles.answer: unknown provider 'mistral'"),
    "model without provider": (stack_text("gpt-4o-mini"), "roles.answer: expected a model as provider/model"),
    "model id with a space": (stack_text("openai/my model"), "expected an OpenAI-compatible model id"),
    "unpriced model on a paid provider": (
        stack_text("openai/gpt-4.1"),
        "openai/gpt-4.1 has no price in",
    ),
    "no base URL anywhere": (
        stack_text("openai/my-model", "[providers.openai.prices]\nmy-model = { input = 0.0, output = 0.0 }"),
        "providers.openai.base_url: expected the server's base URL",
    ),
}


def engram_bench(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *argv], capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120
    )


@pytest.fixture
def home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    for shipped in (REPO_ROOT / "stacks").glob("*.toml"):  # arms name the shipped stacks, so they stay available
        shutil.copy(shipped, stacks / shipped.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "TYPESAFE_"))}
    env |= {
        "ENGRAM_STACKS_DIR": str(stacks),
        "ENGRAM_CACHE_DIR": str(tmp_path / "cache"),
        "ENGRAM_RUNS_DIR": str(tmp_path / "runs"),
        "ENGRAM_LEDGER": str(tmp_path / "ledger.jsonl"),
    }
    return tmp_path, env


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_stack_is_one_line_exit_2_and_nothing_is_written(home: tuple[Path, dict[str, str]], case: str) -> None:
    root, env = home
    text, message = CASES[case]
    (root / "stacks" / "mine.toml").write_text(text)
    for argv in (
        [
            "run",
            "full-context",
            "--slice",
            "dev",
            "--stack",
            "mine",
            "--mode",
            "record",
            "--yes",
            "--out",
            str(root / "out"),
        ],
        ["plan", "full-context", "--slice", "dev", "--stack", "mine"],
    ):
        done = engram_bench(argv, env)
        assert done.returncode == 2, done.stderr
        assert message in done.stderr and "mine.toml" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    assert sorted(p.name for p in root.iterdir()) == ["stacks"]  # no out/, runs/, cache/ or ledger


@pytest.mark.slow
def test_a_good_stack_of_ones_own_is_listed_and_planned(home: tuple[Path, dict[str, str]]) -> None:
    root, env = home
    (root / "stacks" / "mine.toml").write_text(stack_text("openai/my-model"))
    listed = engram_bench(["stacks"], env)
    assert listed.returncode == 0 and any(line.startswith("mine ") for line in listed.stdout.splitlines())
    planned = engram_bench(["plan", "full-context", "--slice", "dev", "--stack", "mine"], env)
    assert planned.returncode == 0, planned.stderr
    assert "openai/my-model" in planned.stdout and "up to $0.00" in planned.stdout
