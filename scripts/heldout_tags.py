"""Recreate the git tags that committed held-out results were run under, from the stamps in those results.

A held-out result records the tag it ran under and the commit that tag named (provenance.git_tag, git_commit).
A clone normally copies tags, but not every copy does: a mirror or CI checkout made without tags, or a hand-off
that carries commits only. This script restores each missing tag as an annotated tag at the stamped commit, checks
that tags already present name the stamped commit, and changes nothing when any check fails.

Usage: python scripts/heldout_tags.py [--check]   (--check: report only, exit 1 if a tag is missing)
Exit codes: 0 all tags present (or restored), 1 missing under --check, 2 a stamp or tag disagrees.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def stamped_tags(results: Path) -> dict[str, str]:
    """tag -> commit over every held-out result that carries a tag stamp; exit 2 if one tag names two commits."""
    tags: dict[str, str] = {}
    for path in sorted(results.glob("*/heldout/*/*.json")):
        provenance = json.loads(path.read_text(encoding="utf-8")).get("provenance", {})
        tag, commit = provenance.get("git_tag"), provenance.get("git_commit")
        if tag is None:
            continue  # an imported result: it ran elsewhere, under no tag of this repository
        if not isinstance(commit, str) or len(commit) != 40:
            fail(f"{path.relative_to(REPO)}: provenance.git_commit: expected a 40-hex commit, found {commit!r}")
        if tags.setdefault(tag, commit) != commit:
            fail(f"{path.relative_to(REPO)}: provenance.git_commit: expected {tags[tag]} for tag {tag}, found {commit}")
    return tags


def identity() -> list[str]:
    """An annotated tag needs a tagger; a fresh CI machine may have none configured, so name this script then."""
    if git("config", "user.email").returncode == 0:
        return []
    return ["-c", "user.name=engram-bench heldout-tags", "-c", "user.email=heldout-tags@engram-bench.invalid"]


def fail(message: str) -> None:
    print(f"heldout-tags: {message}", file=sys.stderr)
    raise SystemExit(2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="report missing tags without creating them")
    check_only = parser.parse_args().check
    tags = stamped_tags(REPO / "results")
    missing: list[tuple[str, str]] = []
    for tag, commit in sorted(tags.items()):
        present = git("rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
        if present.returncode == 0:
            if present.stdout.strip() != commit:
                fail(f"tag {tag}: expected commit {commit[:12]} (the results' stamp), found {present.stdout[:12]}")
            print(f"{tag}: present at {commit[:12]}")
            continue
        if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            fail(f"tag {tag}: expected commit {commit[:12]} in this repository's history, found no such commit")
        missing.append((tag, commit))
    if check_only:
        for tag, commit in missing:
            print(f"{tag}: missing (stamped commit {commit[:12]}); run `make heldout-tags` to restore it")
        return 1 if missing else 0
    for tag, commit in missing:
        message = f"{tag}: the frozen configuration the committed held-out results were run under (restored from their stamps)"
        made = git(*identity(), "tag", "-a", tag, commit, "-m", message)
        if made.returncode != 0:
            fail(f"tag {tag}: git tag failed: {made.stderr.strip()}")
        print(f"{tag}: restored at {commit[:12]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
