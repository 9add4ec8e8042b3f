"""`engram-bench heldout ARM --tag TAG`: the held-out conversations, run once, under a frozen git tag.

The article froze its configuration under a git tag before touching the held-out conversations. This command
enforces that: it refuses unless HEAD is exactly the commit TAG names and no tracked file differs from it, stamps
TAG and the commit into every result, writes under results/<stack>/heldout/<conv>/, and refuses to overwrite a
held-out result that already exists (held-out data is looked at once; replacing a result is a deliberate act:
delete the file first).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import typer

from bench.arms import load_arm
from bench.errors import BenchError
from bench.results import read_result, result_path
from bench.runner import REPO_ROOT, RESULTS_ROOT, RunOptions, parse_ks, run_arm
from bench.slices import HELDOUT_CONVERSATIONS, heldout_conversations
from bench.stacks import STACK_NAMES, build_stack, default_stack_name


class HeldoutRefused(BenchError):
    """The held-out guard said no: wrong commit, modified tree, or a result that would be overwritten."""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        raise HeldoutRefused(f"git {' '.join(args)} in {repo}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def frozen_commit(repo: Path, tag: str) -> str:
    """The commit TAG names, provided HEAD is exactly there and the tree is clean; HeldoutRefused otherwise.

    Clean means no tracked file differs from HEAD (staged or not) and no untracked file lies outside the folders
    runs write into (results/, runs/, cache/): an untracked module could change behaviour without being in TAG.
    """
    try:
        tagged = _git(repo, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    except HeldoutRefused:
        raise HeldoutRefused(f"--tag {tag}: expected an existing git tag in {repo}, found none") from None
    head = _git(repo, "rev-parse", "HEAD")
    if head != tagged:
        raise HeldoutRefused(
            f"--tag {tag}: expected HEAD at the tagged commit {tagged[:12]}, found HEAD at {head[:12]}; "
            f"check out the tag (e.g. `git worktree add ../heldout {tag}`) and run there"
        )
    changes = _git(
        repo,
        "status",
        "--porcelain",
        "--untracked-files=all",
        "--",
        ".",
        ":(exclude)results",
        ":(exclude)runs",
        ":(exclude)cache",
    )
    if changes:
        first = changes.splitlines()[0].strip()
        count = len(changes.splitlines())
        raise HeldoutRefused(
            f"--tag {tag}: expected a clean tree at {tagged[:12]}, found {count} changed or untracked "
            f"file(s), first: {first!r}"
        )
    return tagged


def refuse_overwrites(
    root: Path, stack: str, arm: str, ks: tuple[int | None, ...], conversations: tuple[str, ...]
) -> None:
    """Before anything runs: no held-out result of this arm may exist yet for any conversation and k."""
    for conv in conversations:
        for k in ks:
            path = result_path(root, stack, f"heldout:{conv}", arm, k)
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
        list(HELDOUT_CONVERSATIONS),
        "--conversation",
        help="Held-out conversations to run (default: the article's four; any but conv-26).",
    ),
    k: str = typer.Option(None, "--k", help="Override the arm's held-out k, e.g. 3,20."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Run ARM on the held-out conversations under frozen TAG; writes results/<stack>/heldout/<conv>/."""
    stack_name = stack or default_stack_name()
    build_stack(stack_name)
    eligible = heldout_conversations()  # every conversation the frozen configuration was not tuned on
    unknown = [c for c in conversation if c not in eligible]
    if unknown:
        raise HeldoutRefused(f"--conversation: expected one of {', '.join(eligible)}, found {unknown[0]!r}")
    commit = frozen_commit(REPO_ROOT, tag)
    loaded = load_arm(arm)
    ks = parse_ks(k) or loaded.ks_for(f"heldout:{conversation[0]}") or (None,)
    if loaded.token_match is None:
        refuse_overwrites(RESULTS_ROOT, stack_name, arm, tuple(ks), tuple(conversation))
    options = RunOptions(stack=stack_name, ks=parse_ks(k), git_tag=tag, progress=not quiet)
    typer.echo(f"held-out run of {arm} at tag {tag} (commit {commit[:12]}), stack {stack_name}")
    for conv in conversation:
        if loaded.token_match is not None:
            # The matched k is known only once the sweep is pooled; refuse if any matched result already exists.
            existing = sorted(
                result_path(RESULTS_ROOT, stack_name, f"heldout:{conv}", arm, None).parent.glob(f"{arm}__k*.json")
            )
            if existing:
                raise HeldoutRefused(f"{existing[0]}: a held-out result already exists; held-out runs never overwrite")
        for path in run_arm(arm, f"heldout:{conv}", options):
            typer.echo(f"  wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("heldout")(heldout)
