"""Where the paper build reads and writes (a light module, so the CLI can name defaults without loading the build)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS_ROOT = REPO_ROOT / "results"
PAPER_DIR = REPO_ROOT / "paper"
APPENDIX_DIR = REPO_ROOT / "appendix_e"
DEFAULT_STACK_DIR = "v1"
