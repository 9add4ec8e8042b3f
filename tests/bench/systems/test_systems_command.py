"""`engram-bench systems list | install | check`: what a researcher sees when bringing a memory system."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_letta_server import FakeLettaServer
from fakeservers import CHAT_COMPLETIONS, FakeModelServer, schema_valid_responder

from bench.errors import ConfigError
from bench.systems.adapters import adapter_names, load_adapter
from tests.cli_main import exit_code_of

TESTS = Path(__file__).parents[1]


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = exit_code_of(argv, monkeypatch)
    out, err = capsys.readouterr()
    return code, out, err


def _venv_adapter(root: Path, name: str, requirements: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "requirements.txt").write_text(requirements)
    (folder / "adapter.toml").write_text(
        'description = "a scrapbook memory in its own environment"\nlibrary = "scrapbook"\n'
        'store = "json files"\nenvironment = "venv"\nrequirements = "requirements.txt"\n'
        'command = ["{python}", "{dir}/server.py", "--port", "{port}"]\n'
    )


def test_list_shows_in_process_systems_the_two_generic_kinds_and_each_adapter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _cli(["systems", "list", "--json"], monkeypatch, capsys)
    rows = {(r["name"], r["kind"]): r for r in json.loads(out)}
    assert code == 0
    assert {("engram", "in-process"), ("mem0", "in-process"), ("http", "http"), ("mcp", "mcp")} <= set(rows)
    shipped = rows[("mem0", "adapter")]
    assert shipped["runnable"] and shipped["library"] == "mem0ai" and shipped["environment"] == "project"
    assert shipped["arm"] == 'system = "http", adapter = "mem0"'


def test_the_listing_keeps_its_columns_when_a_name_is_longer_than_the_usual(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    _venv_adapter(tmp_path / "systems", "a-rather-long-memory-server", "# no third-party packages\n")
    _, out, _ = _cli(["systems", "list"], monkeypatch, capsys)
    header, *rows = out.splitlines()
    kind_column = header.index("kind")
    listed = [row for row in rows if row.split(" ", 1)[0] in ("engram", "a-rather-long-memory-server")]
    assert len(listed) == 2 and all(row[kind_column:].split()[0] in ("in-process", "adapter") for row in listed)


@pytest.mark.slow
def test_an_adapter_is_not_runnable_until_installed_and_install_builds_its_own_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    _venv_adapter(tmp_path / "systems", "scrapbook", "# no third-party packages\n")

    _, out, _ = _cli(["systems", "list"], monkeypatch, capsys)
    assert "engram-bench systems install scrapbook" in out

    code, out, _ = _cli(["systems", "install", "scrapbook"], monkeypatch, capsys)
    assert code == 0 and "installed in" in out
    python = tmp_path / "venvs" / "scrapbook" / "bin" / "python"
    assert python.exists() and (tmp_path / "venvs" / "scrapbook" / "pyvenv.cfg").is_file()
    _, out, _ = _cli(["systems", "list", "--json"], monkeypatch, capsys)
    assert {r["name"]: r for r in json.loads(out)}["scrapbook"]["runnable"] is True


@pytest.mark.slow
def test_a_failed_install_is_one_line_and_leaves_no_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    _venv_adapter(tmp_path / "systems", "garbled", "this line is not a requirement ((\n")
    code, _, err = _cli(["systems", "install", "garbled"], monkeypatch, capsys)
    assert code == 2 and "adapter 'garbled': install step" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "venvs" / "garbled").exists()
    assert not list((tmp_path / "venvs").glob(".garbled*"))


@pytest.mark.slow
def test_a_cpu_torch_pin_that_no_index_holds_is_named_with_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An adapter pinning torch's CPU build, on a machine where neither PyTorch's CPU index nor pip's own
    configuration has it: one line saying where it looked and what to set, and no environment left behind."""
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    monkeypatch.setenv("ENGRAM_TORCH_INDEX", "http://127.0.0.1:9/whl/cpu")  # nothing listens there
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip's own configuration: an empty folder and no index
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    _venv_adapter(tmp_path / "systems", "tensorpad", "torch==2.13.0+cpu\n")
    code, _, err = _cli(["systems", "install", "tensorpad"], monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "torch==2.13.0+cpu (the CPU build its requirements pin) is neither at http://127.0.0.1:9/whl/cpu" in err
    assert "ENGRAM_TORCH_INDEX" in err
    assert not (tmp_path / "venvs" / "tensorpad").exists() and not list((tmp_path / "venvs").glob(".tensorpad*"))


def _interpreter(path: Path, version: str, *, works: bool, log: Path | None = None) -> None:
    """A `python<version>` stand-in: the harness's own interpreter behind a script that answers the version probe
    with `version` (and logs every other use), or, with works=False, a pyenv shim that cannot run it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if works:
        body = (
            f'case "$2" in *version_info*) echo "{version} $0"; exit 0;; esac\n'
            f'echo "$@" >> {log}\nexec {sys.executable} "$@"\n'
        )
    else:
        body = f'echo "pyenv: python{version}: command not found" >&2\nexit 127\n'
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.mark.slow
def test_an_adapter_asking_for_another_python_gets_its_environment_built_with_that_interpreter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The manifest says `python = "3.97"`: a shim on PATH that cannot run it is passed over, pyenv's build is
    asked its version and builds the venv."""
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    used = tmp_path / "used.log"
    _interpreter(tmp_path / "shims" / "python3.97", "3.97", works=False)
    _interpreter(tmp_path / "pyenv" / "versions" / "3.97.2" / "bin" / "python3.97", "3.97", works=True, log=used)
    monkeypatch.setenv("PATH", f"{tmp_path / 'shims'}:/usr/bin:/bin")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    _venv_adapter(tmp_path / "systems", "futurelog", "# no third-party packages\n")
    manifest = tmp_path / "systems" / "futurelog" / "adapter.toml"
    manifest.write_text(manifest.read_text() + 'python = "3.97"\n')
    assert load_adapter("futurelog").python_version == "3.97"

    code, out, err = _cli(["systems", "install", "futurelog"], monkeypatch, capsys)
    assert code == 0, err
    assert used.read_text().startswith(f"-m venv {tmp_path / 'venvs' / '.futurelog.building'}")
    assert (tmp_path / "venvs" / "futurelog" / "bin" / "python").exists()


def test_an_adapter_whose_python_is_nowhere_is_refused_in_one_line_before_anything_is_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    monkeypatch.setenv("ENGRAM_VENVS_DIR", str(tmp_path / "venvs"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    _venv_adapter(tmp_path / "systems", "oldtimer", "# no third-party packages\n")
    manifest = tmp_path / "systems" / "oldtimer" / "adapter.toml"
    manifest.write_text(manifest.read_text() + 'python = "3.98"\n')
    code, _, err = _cli(["systems", "install", "oldtimer"], monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"adapter 'oldtimer': {manifest}: python: the adapter needs Python 3.98" in err
    assert "pyenv install 3.98" in err
    assert not (tmp_path / "venvs").exists() or not any((tmp_path / "venvs").iterdir())


@pytest.mark.parametrize(
    ("environment", "line", "said"),
    [
        ("venv", 'python = "three-twelve"', "python: expected a Python version such as \"3.12\", found 'three-twelve'"),
        ("venv", "python = 3.12", 'python: expected a Python version such as "3.12", found 3.12'),
        ("project", 'python = "3.12"', "python: only an adapter with environment = 'venv' can choose its interpreter"),
    ],
)
def test_a_python_the_manifest_cannot_mean_is_refused_naming_the_field(
    environment: str, line: str, said: str, tmp_path: Path
) -> None:
    _venv_adapter(tmp_path, "oddball", "# no third-party packages\n")
    manifest = tmp_path / "oddball" / "adapter.toml"
    manifest.write_text(manifest.read_text().replace('"venv"', f'"{environment}"') + line + "\n")
    with pytest.raises(ConfigError, match="oddball") as refused:
        load_adapter("oddball", tmp_path)
    assert str(refused.value) == f"{manifest}: {said}"


def test_a_malformed_manifest_is_refused_naming_its_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(tmp_path / "systems"))
    folder = tmp_path / "systems" / "halfdone"
    folder.mkdir(parents=True)
    (folder / "adapter.toml").write_text(
        'description = "x"\nlibrary = "x"\nstore = "x"\nenvironment = "conda"\ncommand = "x"\n'
    )
    code, _, err = _cli(["systems", "install", "halfdone"], monkeypatch, capsys)
    assert code == 2 and "adapter.toml: environment: expected one of ['venv', 'project', 'npm'], found 'conda'" in err


# The reference MCP server's search_nodes keeps what contains the whole query as a substring, with no ranking: the
# contract's question in words is in no turn, so its round trip passes only on the turn's name, and says so.
MATCHES_TEXT = {"server-memory"}


# Each shipped adapter's real library in its own process (mem0's with its models, in the project's environment; the
# others in .venvs/): the slowest single tests of the suite, so `make test` leaves them to `make test-all`.
@pytest.mark.slow
@pytest.mark.parametrize("adapter", adapter_names())
def test_every_shipped_adapter_passes_the_contract(
    adapter: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    loaded = load_adapter(adapter)
    if loaded.not_runnable_reason() is not None:
        pytest.skip(f"{adapter}: {loaded.not_runnable_reason()}")
    if adapter == "letta":  # it talks to a Letta server, which does not install here: the fake one stands in
        letta = FakeLettaServer().start()
        request.addfinalizer(letta.stop)
        monkeypatch.setenv("LETTA_BASE_URL", letta.url)
    if loaded.environment == "venv" and "extract" in loaded.roles:
        # Its library asks a chat model for every write, which the offline stack does not have: the local stack,
        # with a fake server whose every reply is JSON valid under the schema asked for (the real server, SmolLM2,
        # is tests/bench/systems/test_adapters_local_server.py's).
        with FakeModelServer(schema_valid_responder) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
            code, out, err = _cli(
                ["systems", "check", adapter, "--stack", "local", "--mode", "record"], monkeypatch, capsys
            )
        assert server.count(CHAT_COMPLETIONS) > 0  # the library's calls reached the model through the endpoint
    else:
        code, out, err = _cli(["systems", "check", adapter], monkeypatch, capsys)
    assert code == 0, err + out
    assert f"adapter {adapter!r}: all 8 contract checks passed" in out
    assert "FAIL" not in out
    by_keyword = f"adapter {adapter!r}: ok   round trip: found only by its keyword 'Odalys'"
    assert (by_keyword in out) == (adapter in MATCHES_TEXT), out


def _service_arm(folder: Path, *flags: str) -> Path:
    command = json.dumps([sys.executable, str(TESTS / "memory_service.py"), "--port", "{port}", *flags])
    path = folder / "wordbag-check.toml"
    path.write_text(f'system = "http"\nk = 4\n[settings]\ncommand = {command}\ntimeout_s = 10\n')
    return path


def test_a_protocol_service_passes_the_contract_from_its_arm_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _cli(["systems", "check", "--arm", str(_service_arm(tmp_path))], monkeypatch, capsys)
    assert code == 0, err
    assert "ok   reset isolation" in out and "ok   errors in one line" in out


@pytest.mark.parametrize(
    ("flag", "failing"),
    [("--too-many", "FAIL k respected"), ("--leak", "isolation canary leaked")],
)
def test_a_service_that_breaks_the_contract_fails_the_check_with_exit_2(
    flag: str, failing: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _cli(["systems", "check", "--arm", str(_service_arm(tmp_path, flag))], monkeypatch, capsys)
    assert code == 2
    assert failing in out and "FAIL" in out
    assert len(err.strip().splitlines()) == 1 and "contract checks failed" in err
    assert failing.removeprefix("FAIL ") in err  # the cause is on the error line, not only in the listing above it


def test_an_mcp_server_passes_the_contract_from_its_arm_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    command = json.dumps([sys.executable, str(TESTS / "mcp_memory_server.py")])
    arm = tmp_path / "notebook-check.toml"
    arm.write_text(f'system = "mcp"\nk = 4\n[settings]\ncommand = {command}\ntimeout_s = 20\n')
    code, out, err = _cli(["systems", "check", "--arm", str(arm)], monkeypatch, capsys)
    assert code == 0, err
    assert "ok   namespace isolation" in out and "ok   k respected" in out


def test_an_in_process_system_passes_the_same_contract_by_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(["systems", "check", "raw-turn-rag"], monkeypatch, capsys)
    assert code == 0, err
    assert "system 'raw-turn-rag': all 8 contract checks passed" in out


def test_a_name_shared_by_an_adapter_and_an_in_process_system_needs_no_guessing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.cli.commands.systems import _resolve

    assert _resolve("mem0", None) == ("http", {"adapter": "mem0"}, "adapter 'mem0'")
    assert _resolve("mem0", None, in_process=True) == ("mem0", {}, "system 'mem0'")
    code, _, err = _cli(["systems", "check", "no-such-memory"], monkeypatch, capsys)
    assert code == 2 and "no-such-memory" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------- `make adapters`


def _make_adapters(folder: Path) -> list[str]:
    shown = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", "show-adapters: ; @echo $(ADAPTERS)", "show-adapters"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout.split()


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_adapters_builds_every_adapter_that_asks_for_its_own_environment() -> None:
    repo = Path(__file__).resolve().parents[3]
    own_venv = [
        name
        for name in adapter_names(repo / "systems")
        if load_adapter(name, repo / "systems").environment in ("venv", "npm")
    ]
    assert "letta" in own_venv and "mem0" not in own_venv  # mem0's adapter runs in the project's environment
    assert _make_adapters(repo) == sorted(own_venv)


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_a_new_adapter_folder_joins_make_adapters_without_editing_the_makefile(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    shutil.copy(repo / "Makefile", tmp_path / "Makefile")
    for name, environment in (("zettel", "venv"), ("inproc", "project"), ("nodemem", "npm")):
        (tmp_path / "systems" / name).mkdir(parents=True)
        (tmp_path / "systems" / name / "adapter.toml").write_text(f'environment = "{environment}"\n')
    assert _make_adapters(tmp_path) == ["nodemem", "zettel"]
