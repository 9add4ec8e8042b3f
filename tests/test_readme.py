"""The README stays a short entry point: at most 250 lines, and every page it sends the reader to exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_250_lines() -> None:
    assert len(README.splitlines()) <= 250


def test_every_page_and_file_the_readme_links_exists() -> None:
    linked = re.findall(r"\]\(([^)#\s]+)", README)
    named = re.findall(r"`(docs/[\w./-]+\.md)`", README)
    assert linked, "the README links its reference pages"
    missing = [target for target in linked + named if not (REPO / target).exists()]
    assert missing == []


def test_every_reference_page_under_docs_is_reachable_from_the_readme() -> None:
    pages = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    assert sorted(page for page in pages if page not in README) == []
