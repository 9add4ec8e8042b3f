"""What git says about the checkout a run comes from: the HEAD commit, whether code differs from it, what a tag names.

Provenance stamps the commit and a dirty flag into every result; the held-out guard refuses unless HEAD is the frozen
tag and the tree is clean. Both ask the same questions here. The folders runs write into (`RUN_OUTPUT_DIRS`) never
count as a change: writing results must not make the next run look as if it ran on modified code (a
changed shipped cache subset does count: it decides what a replay answers).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.errors import GitError, HeldoutRefused
from bench.vocab import RUN_OUTPUT_DIRS

GIT_TIMEOUT_S = 30


def git(repo: Path, *args: str) -> str:
    """Run `git ARGS` in `repo` and return its stripped output; GitError (one line) if git fails or is missing."""
    try:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {' '.join(args)} in {repo}: {exc}") from None
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {repo}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def head_commit(repo: Path) -> str | None:
    """The commit HEAD is at; None when `repo` is not a git checkout (e.g. an unpacked release)."""
    try:
        return git(repo, "rev-parse", "HEAD") or None
    except GitError:
        return None


def changed_files(repo: Path, *, untracked: bool) -> list[str]:
    """`git status --porcelain` lines outside the run-output folders; with `untracked`, untracked files count too."""
    excludes = [f":(exclude){folder}" for folder in RUN_OUTPUT_DIRS]
    mode = "--untracked-files=all" if untracked else "--untracked-files=no"
    return git(repo, "status", "--porcelain", mode, "--", ".", *excludes).splitlines()


def git_state(repo: Path) -> tuple[str | None, bool | None]:
    """(HEAD commit, whether tracked code differs from it); (None, None) outside a git checkout."""
    try:
        commit = git(repo, "rev-parse", "HEAD")
        return commit, bool(changed_files(repo, untracked=False))
    except GitError:
        return None, None


def tag_commit(repo: Path, tag: str) -> str | None:
    """The commit `tag` names; None when no such tag exists."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}") or None
    except GitError:
        return None


def frozen_commit(repo: Path, tag: str) -> str:
    """The commit TAG names, provided HEAD is exactly there and the tree is clean; HeldoutRefused otherwise.

    Clean means no tracked file differs from HEAD (staged or not) and no untracked file lies outside the folders
    runs write into (results/, runs/): an untracked module could change behaviour without being in TAG. Changes
    under cache/ count: a shipped cache subset decides what a replay answers (the local cache, cache/local/, is
    ignored by git and so never counts).
    """
    tagged = tag_commit(repo, tag)
    if tagged is None:
        raise HeldoutRefused(f"--tag {tag}: expected an existing git tag in {repo}, found none")
    head = git(repo, "rev-parse", "HEAD")
    if head != tagged:
        raise HeldoutRefused(
            f"--tag {tag}: expected HEAD at the tagged commit {tagged[:12]}, found HEAD at {head[:12]}; "
            f"check out the tag (e.g. `git worktree add ../heldout {tag}`) and run there"
        )
    changes = changed_files(repo, untracked=True)
    if changes:
        raise HeldoutRefused(
            f"--tag {tag}: expected a clean tree at {tagged[:12]}, found {len(changes)} changed or untracked "
            f"file(s), first: {changes[0].strip()!r}"
        )
    return tagged
