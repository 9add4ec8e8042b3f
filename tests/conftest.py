"""Test-session setup shared by every test: offline, quiet, deterministic."""

from __future__ import annotations

import os
from pathlib import Path

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
SHARED_DIR = REPO_ROOT.parent / "shared"
