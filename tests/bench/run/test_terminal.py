"""What a person sees in the terminal: spinners for slow steps, `--quiet`, listings that explain their names, and a
bad arm file that does not hide the good ones."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from bench.cli.program import app, main
from bench.data.slices import slice_names
from bench.run.arms import ARMS_DIR
from bench.run.terminal import QUIET_ENV, VERBOSE_ENV, step
from tests.conftest import REPO_ROOT


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "argv", ["engram-bench", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    captured = capsys.readouterr()
    return exited.value.code or 0, captured.out, captured.err


def test_a_slow_step_shows_a_spinner_with_its_name_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(QUIET_ENV, raising=False)
    screen = io.StringIO()
    with step("paper build: drawing", console=Console(file=screen, force_terminal=True, width=80)):
        pass
    assert "paper build: drawing" in screen.getvalue()


def test_quiet_shows_no_spinner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(QUIET_ENV, "1")
    screen = io.StringIO()
    with step("replaying mem0", console=Console(file=screen, force_terminal=True, width=80)):
        pass
    assert screen.getvalue() == ""


@pytest.mark.slow
def test_third_party_warnings_and_logging_are_off_unless_verbose(tmp_path: Path) -> None:
    # In a fresh process: --quiet changes the process's environment and warning filters.
    script = (
        "import sys, warnings\n"
        "sys.argv = ['engram-bench', '--quiet', 'schema', '--out', sys.argv[1]]\n"
        "from bench.cli.program import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "warnings.warn_explicit('Payload indexes have no effect in the local Qdrant.', UserWarning, "
        "'qdrant.py', 1, module='mem0.vector_stores.qdrant')\n"  # qdrant warns at stacklevel=5: mem0's module
        "import logging, os\n"
        "print(os.environ.get('TRANSFORMERS_VERBOSITY'), os.environ.get('HF_HUB_DISABLE_PROGRESS_BARS'), "
        "logging.getLogger('transformers').level)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != QUIET_ENV}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "schema.json")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        check=True,
    )
    assert "Payload indexes" not in done.stderr
    assert done.stdout.split()[-3:] == ["error", "1", str(40)]
    third_party = ("TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE", VERBOSE_ENV)
    plain_env = {k: v for k, v in env.items() if k not in third_party}

    def without_quiet(*options: str) -> subprocess.CompletedProcess[str]:
        command = script.replace("'--quiet', ", "".join(f"'{o}', " for o in options))
        return subprocess.run(
            [sys.executable, "-W", "always", "-c", command, str(tmp_path / "loud.json")],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            env=plain_env,
            check=True,
        )

    # A plain command keeps the third parties' noise off the first screen too; --verbose asks for it.
    plain = without_quiet()
    assert "Payload indexes" not in plain.stderr and plain.stdout.split()[-3:] == ["error", "1", str(40)]
    assert "Payload indexes" in without_quiet("--verbose").stderr


def test_slices_explain_checkpoints_and_describe_every_slice(capsys, monkeypatch) -> None:
    code, out, _ = run_cli(["slices"], capsys, monkeypatch)
    assert code == 0
    assert "checkpoints: the sessions after which the questions are asked" in out
    lines = out.splitlines()
    for name in slice_names():
        row = next(i for i, line in enumerate(lines) if line.startswith(f"{name} "))
        assert lines[row + 1].startswith("  ") and len(lines[row + 1].strip()) > 10, name


def test_arms_say_what_each_preset_they_use_means(capsys, monkeypatch) -> None:
    code, out, _ = run_cli(["arms"], capsys, monkeypatch)
    assert code == 0
    presets = out.split("engram presets (settings.preset):")[1]
    assert "E4_FROZEN" in presets and "frozen held-out system" in presets
    assert "E2" in presets and "no belief" in presets


def test_one_bad_arm_file_does_not_hide_the_others(tmp_path: Path, capsys, monkeypatch) -> None:
    for name in ("mem0", "engram"):
        (tmp_path / f"{name}.toml").write_text((ARMS_DIR / f"{name}.toml").read_text(), encoding="utf-8")
    (tmp_path / "broken.toml").write_text('system = "mem0"\nk = "three"\n', encoding="utf-8")
    code, out, err = run_cli(["arms", "--arms-dir", str(tmp_path)], capsys, monkeypatch)
    assert code == 2
    listed = [
        line.split()[0] for line in out.splitlines()[1:] if line and not line.startswith((" ", "engram presets", "k:"))
    ]
    assert listed == ["engram", "mem0"]
    assert "broken.toml" in err and "1 of 3 arm files could not be read" in err


def test_paper_appendix_list_names_every_entry(capsys, monkeypatch) -> None:
    import json

    code, out, _ = run_cli(["paper", "appendix", "list"], capsys, monkeypatch)
    assert code == 0
    entries = json.loads((REPO_ROOT / "appendix_e" / "entries.json").read_text())["entries"]
    for entry in entries:
        assert any(line.startswith(entry["entry"] + " ") for line in out.splitlines()), entry["entry"]
    assert f"{len(entries)} entries" in out


@pytest.mark.parametrize("command", [["compare"], ["import-results"], ["grid"], ["rescore"], ["run"]])
def test_help_shows_no_type_for_a_flag_and_an_elements_type_for_a_list(command: list[str], capsys) -> None:
    # typer printed `--all <bool>` (a flag takes no value) and `files... <list[Path]>`.
    with pytest.raises(SystemExit):
        app([*command, "--help"], prog_name="engram-bench")
    shown = capsys.readouterr().out
    assert "<bool>" not in shown and "<list[" not in shown and "Usage" in shown
