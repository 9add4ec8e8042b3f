"""Shared fixtures for the paper tests: the v1 paper is computed once per session (about three seconds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.report.build import compute
from bench.report.paper import Paper
from bench.vocab import RESULTS_DIR


@pytest.fixture(scope="session")
def paper_v1() -> Paper:
    return compute(RESULTS_DIR, "v1")


@pytest.fixture()
def results_copy(tmp_path: Path) -> Path:
    """A private copy of results/v1 that a test may tamper with; returns the results root."""
    root = tmp_path / "results"
    shutil.copytree(RESULTS_DIR / "v1", root / "v1")
    return root
