"""`engram-bench heldout ARM --tag TAG`: the held-out conversations, run once, under a frozen git tag.

The article froze its configuration under a git tag before touching the held-out conversations. This command
enforces that: it refuses unless HEAD is exactly the commit TAG names and no tracked file differs from it, stamps
TAG and the commit into every result, writes under results/<stack>/heldout/<conv>/, and refuses to overwrite a
held-out result that already exists (held-out data is looked at once; replacing a result is a deliberate act:
delete the file first).
"""

from __future__ import annotations

from pathlib import Path

import typer

from bench.arms import load_arm
from bench.errors import HeldoutRefused
from bench.gitinfo import changed_files, git, tag_commit
from bench.results import read_result, result_path
from bench.runner import RunOptions, parse_ks, run_arm
from bench.stacks import STACK_NAMES, build_stack, default_stack_name
from bench.vocab import HELDOUT_CONVERSATIONS, REPO_ROOT, RESULTS_DIR, heldout_slice


def frozen_commit(repo: Path, tag: str) -> str:
    """The commit TAG names, provided HEAD is exactly there and the tree is clean; HeldoutRefused otherwise.

    Clean means no tracked file differs from HEAD (staged or not) and no untracked file lies outside the folders
    runs write into (results/, runs/, cache/): an untracked module could change behaviour without being in TAG.
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


def refuse_overwrites(
    root: Path, stack: str, arm: str, ks: tuple[int | None, ...], conversations: tuple[str, ...]
) -> None:
    """Before anything runs: no held-out result of this arm may exist yet for any conversation and k."""
    for conv in conversations:
        for k in ks:
            path = result_path(root, stack, heldout_slice(conv), arm, k)
            if path.exists():
                tag = read_result(path).provenance.git_tag
                raise HeldoutRefused(
                    f"{path}: a held-out result already exists (tag {tag}); held-out runs never overwrite: "
                    f"delete it first if you mean to replace it"
                )


def heldout(
    arm: str = typer.Argument(..., help="An arm in arms/."),
    tag: str = typer.Option(..., "--tag", help="The git tag the configuration was frozen under (HEAD must be it)."),
    stack: str = typer.Option(None, "--stack", help=f"{' | '.join(STACK_NAMES)}; default offline without API keys."),
    conversation: list[str] = typer.Option(
        list(HELDOUT_CONVERSATIONS), "--conversation", help="Held-out conversations to run (default: all four)."
    ),
    k: str = typer.Option(None, "--k", help="Override the arm's held-out k, e.g. 3,20."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Run ARM on the held-out conversations under frozen TAG; writes results/<stack>/heldout/<conv>/."""
    stack_name = stack or default_stack_name()
    build_stack(stack_name)
    unknown = [c for c in conversation if c not in HELDOUT_CONVERSATIONS]
    if unknown:
        raise HeldoutRefused(
            f"--conversation: expected one of {', '.join(HELDOUT_CONVERSATIONS)}, found {unknown[0]!r}"
        )
    commit = frozen_commit(REPO_ROOT, tag)
    loaded = load_arm(arm)
    ks = parse_ks(k) or loaded.ks_for(heldout_slice(conversation[0])) or (None,)
    if loaded.token_match is None:
        refuse_overwrites(RESULTS_DIR, stack_name, arm, tuple(ks), tuple(conversation))
    options = RunOptions(stack=stack_name, ks=parse_ks(k), git_tag=tag, progress=not quiet)
    typer.echo(f"held-out run of {arm} at tag {tag} (commit {commit[:12]}), stack {stack_name}")
    for conv in conversation:
        if loaded.token_match is not None:
            # The matched k is known only once the sweep is pooled; refuse if any matched result already exists.
            existing = sorted(
                result_path(RESULTS_DIR, stack_name, heldout_slice(conv), arm, None).parent.glob(f"{arm}__k*.json")
            )
            if existing:
                raise HeldoutRefused(f"{existing[0]}: a held-out result already exists; held-out runs never overwrite")
        for path in run_arm(arm, heldout_slice(conv), options):
            typer.echo(f"  wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("heldout")(heldout)
