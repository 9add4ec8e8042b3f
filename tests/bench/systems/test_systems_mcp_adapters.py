"""Adapter folders for third-party MCP servers (`protocol = "mcp"`): an npm package installed by `npm ci`, an
interpreter that must pass the manifest's own check, and a setup step run in the new environment."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.systems.adapters import load_adapter
from tests.cli_main import exit_code_of

MCP_MANIFEST = (
    'description = "a notebook server spoken to over MCP"\nlibrary = "notebook-mcp"\nstore = "a file"\n'
    'protocol = "mcp"\n'
)


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_code_of(argv, monkeypatch)
    out, err = capsys.readouterr()
    return code, out, err


def _folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    return tmp_path / "systems"


def _local_npm_package(root: Path) -> Path:
    """A package folder npm can install from disk (a `file:` dependency), so `npm ci` needs no registry."""
    package = root / "notebook-mcp"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "notebook-mcp", "version": "3.1.4", "main": "i.js"}))
    (package / "i.js").write_text("console.log('notebook');\n")
    return package


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed here")
def test_an_npm_adapter_is_installed_from_its_lock_file_and_reports_the_locked_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    systems = _folders(monkeypatch, tmp_path)
    folder = systems / "notebook"
    folder.mkdir(parents=True)
    package = _local_npm_package(tmp_path / "packages")
    (folder / "package.json").write_text(json.dumps({"name": "x", "dependencies": {"notebook-mcp": f"file:{package}"}}))
    locked = subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "--offline"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert locked.returncode == 0, locked.stderr
    (folder / "adapter.toml").write_text(MCP_MANIFEST + 'environment = "npm"\nrequirements = "package.json"\n')

    _, out, _ = _cli(["systems", "list", "--json"], monkeypatch, capsys)
    row = {r["name"]: r for r in json.loads(out)}["notebook"]
    assert row["runnable"] is False and "systems install notebook" in row["why_not"]
    assert row["arm"] == "arms/notebook.toml"

    code, out, err = _cli(["systems", "install", "notebook"], monkeypatch, capsys)
    assert code == 0, err
    installed = tmp_path / "venvs" / "notebook" / "node_modules" / "notebook-mcp"
    assert (installed / "i.js").read_text() == "console.log('notebook');\n"
    adapter = load_adapter("notebook")
    assert adapter.not_runnable_reason() is None and adapter.installed_version() == "3.1.4"


def test_an_npm_adapter_without_its_lock_file_is_refused_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = _folders(monkeypatch, tmp_path) / "unlocked"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text('{"dependencies": {}}')
    (folder / "adapter.toml").write_text(MCP_MANIFEST + 'environment = "npm"\nrequirements = "package.json"\n')
    with pytest.raises(ConfigError, match="expected package-lock.json beside package.json") as refused:
        load_adapter("unlocked")
    assert "npm install --package-lock-only" in str(refused.value)


def test_an_mcp_adapter_is_started_by_its_arm_so_a_command_in_its_manifest_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = _folders(monkeypatch, tmp_path) / "twostarts"
    folder.mkdir(parents=True)
    (folder / "requirements.txt").write_text("\n")
    (folder / "adapter.toml").write_text(
        MCP_MANIFEST + 'environment = "venv"\nrequirements = "requirements.txt"\ncommand = ["{python}", "s.py"]\n'
    )
    with pytest.raises(ConfigError, match=r"command: an adapter with protocol = 'mcp' is started by its arm"):
        load_adapter("twostarts")


def test_an_http_arm_naming_an_mcp_adapter_is_told_to_use_its_arm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = _folders(monkeypatch, tmp_path) / "graphnotes"
    folder.mkdir(parents=True)
    (folder / "adapter.toml").write_text(MCP_MANIFEST + 'environment = "project"\n')
    arm = tmp_path / "graphnotes-http.toml"
    arm.write_text('system = "http"\nk = 3\n[settings]\nadapter = "graphnotes"\n')
    code, out, err = _cli(["systems", "check", "--arm", str(arm)], monkeypatch, capsys)
    assert code == 2
    assert "it is an MCP server: run it with its arm, arms/graphnotes.toml" in out + err


def _checked_venv_adapter(systems: Path, name: str, check: str) -> Path:
    folder = systems / name
    folder.mkdir(parents=True)
    (folder / "requirements.txt").write_text("# nothing from an index\n")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (folder / "adapter.toml").write_text(
        MCP_MANIFEST + f'environment = "venv"\nrequirements = "requirements.txt"\npython = "{version}"\n'
        f"python_check = {json.dumps(check)}\n"
        'setup = ["{python}", "-c", "import pathlib, sys; pathlib.Path(sys.argv[1], \'placed\').write_text(sys.prefix)", '
        '"{venv}"]\n'
    )
    return folder


def test_an_interpreter_that_fails_the_manifests_python_check_is_passed_over_and_none_left_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    systems = _folders(monkeypatch, tmp_path)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    _checked_venv_adapter(systems, "picky", "import no_interpreter_has_this_module")
    code, _, err = _cli(["systems", "install", "picky"], monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "that runs its python_check (import no_interpreter_has_this_module)" in err
    assert not (tmp_path / "venvs").exists() or not any((tmp_path / "venvs").iterdir())


def test_the_setup_step_runs_in_the_new_environment_before_it_is_moved_into_place(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    systems = _folders(monkeypatch, tmp_path)
    _checked_venv_adapter(systems, "placer", "import json")
    code, out, err = _cli(["systems", "install", "placer"], monkeypatch, capsys)
    assert code == 0, err
    venv = tmp_path / "venvs" / "placer"
    # The step ran with the new environment's own python, in the folder that then became .venvs/placer.
    assert (venv / "placed").read_text() == str(tmp_path / "venvs" / ".placer.building")
    assert not (tmp_path / "venvs" / ".placer.building").exists()
    # Console scripts name the interpreter of the final folder, so `.venvs/placer/bin/pip` runs as a user's would.
    pip = (venv / "bin" / "pip").read_text().splitlines()[0]
    assert pip.startswith(f"#!{venv}/bin/python")
    assert subprocess.run([str(venv / "bin" / "pip"), "--version"], capture_output=True, check=False).returncode == 0
