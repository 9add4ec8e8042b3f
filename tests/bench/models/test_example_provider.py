"""The worked example of adding a provider (docs/examples/provider/): one folder (provider, client, errors) and one
stack file. Installed beside engram-bench, its stack runs an existing arm, the answers come from it, and the result
names the package that served them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.vocab import REPO_ROOT
from tests.bench.installed import bench_cli, install_package

STACKS_DIR = REPO_ROOT / "stacks"
EXAMPLE = REPO_ROOT / "docs" / "examples" / "provider"


def stacks_with_echo(tmp_path: Path) -> Path:
    stacks = tmp_path / "stacks"
    shutil.copytree(STACKS_DIR, stacks)
    shutil.copy(EXAMPLE / "echo.toml", stacks / "echo.toml")
    return stacks


@pytest.mark.slow  # two whole runs in a subprocess each, as the installed plugin system's run is
def test_a_provider_folder_and_a_stack_file_serve_a_role_of_an_existing_arm(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)
    env = {"ENGRAM_STACKS_DIR": str(stacks_with_echo(tmp_path))}
    out = tmp_path / "out"

    ran = bench_cli(
        [
            "run",
            "full-context",
            "--slice",
            "dev",
            "--limit",
            "2",
            "--stack",
            "echo",
            "--mode",
            "live",
            "--out",
            str(out),
        ],
        site,
        tmp_path,
        env,
    )

    assert ran.returncode == 0, ran.stderr[-2000:]
    (written,) = sorted(out.glob("full-context*.json"))
    result = json.loads(written.read_text())
    assert result["stack"] == "echo" and result["models"]["answer"] == "echo/parrot-1"
    # The answerer sends the question as the user message (the memories go in the system prompt): echoed back.
    assert [a["answer"] for a in result["answers"]] == [a["question"] for a in result["answers"]]
    assert len({a["answer"] for a in result["answers"]}) == 2
    assert {
        "kind": "provider",
        "name": "echo",
        "params": {"answer": "parrot-1"},
        "distribution": "echo-provider",
        "version": "0.2.0",
    } in result["provenance"]["plugins"]

    # A second run replays the echo calls from the cache: nothing is computed again, the answers are the same.
    again = bench_cli(
        ["run", "full-context", "--slice", "dev", "--limit", "2", "--stack", "echo", "--out", str(tmp_path / "again")],
        site,
        tmp_path,
        env,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    replayed = json.loads(next((tmp_path / "again").glob("full-context*.json")).read_text())
    assert [a["answer"] for a in replayed["answers"]] == [a["answer"] for a in result["answers"]]


def test_the_stack_validates_against_the_registry_without_importing_the_gateway(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)
    env = {"ENGRAM_STACKS_DIR": str(stacks_with_echo(tmp_path))}
    listed = bench_cli(["stacks", "--json"], site, tmp_path, env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "echo" in listed.stdout

    probe = (
        "import sys\n"
        "from bench.models.stacks import STACK_NAMES, load_stack_spec, check_model\n"
        "for name in STACK_NAMES:\n"
        "    spec = load_stack_spec(name)\n"
        "    for role, ref in spec.roles.items():\n"
        "        check_model(spec, ref, f'{name}.{role}')\n"
        # the gateway (and its budget, ledger and clients) stays unloaded; the cache's request type may load with the
        # judge prompts' registry, which a stack's judge role is checked against
        "print(sorted(m for m in sys.modules if m.startswith(('bench.models.gateway', 'bench.models.budget'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        env={**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(site)])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
