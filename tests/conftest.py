"""Test-session setup shared by every test: offline, quiet, deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# These must be set before transformers / mem0 / huggingface_hub are imported anywhere.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests never see a real key, so every paid provider defaults to replay.
for _key in ("ANTHROPIC_API_KEY", "TYPESAFE_API_KEY"):
    os.environ.pop(_key, None)

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _run_folders_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Runs a test starts keep their stores and results, and the calls it caches (with the ledger beside them and
    mem0's home), in a temporary folder of its own test process, never in the checkout's runs/ and cache/local/: the
    suite's processes (pytest-xdist) would otherwise share one call cache and one mem0 history database."""
    os.environ.setdefault("ENGRAM_RUNS_DIR", str(tmp_path_factory.mktemp("runs")))
    os.environ.setdefault("ENGRAM_CACHE_DIR", str(tmp_path_factory.mktemp("calls")))
