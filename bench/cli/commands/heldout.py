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

from bench.cli.options import parse_ks
from bench.data.slices import heldout_conversations, load_slice
from bench.errors import HeldoutRefused
from bench.models.stacks import DEFAULT_STACK, STACK_NAMES, build_stack
from bench.results.gitinfo import frozen_commit
from bench.results.schema import read_result, result_path
from bench.run.arms import load_arm
from bench.run.preflight import ASSUME_YES_ENV
from bench.run.request import RunRequest, RunServices
from bench.run.runner import run_arm
from bench.vocab import HELDOUT_CONVERSATIONS, REPO_ROOT, RESULTS_DIR, heldout_slice


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
    stack: str = typer.Option(
        DEFAULT_STACK,
        "--stack",
        help=f"{' | '.join(STACK_NAMES)}; {DEFAULT_STACK} unless named, whatever keys are set.",
    ),
    conversation: list[str] = typer.Option(
        list(HELDOUT_CONVERSATIONS),
        "--conversation",
        help="Held-out conversations to run (default: the article's four; any but conv-26).",
    ),
    k: str = typer.Option(None, "--k", help="Override the arm's held-out k, e.g. 3,20."),
    yes: bool = typer.Option(False, "--yes", help=f"Allow paid live calls without asking (or {ASSUME_YES_ENV}=1)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Run ARM on the held-out conversations under frozen TAG; writes results/<stack>/heldout/<conv>/."""
    build_stack(stack)
    eligible = heldout_conversations()  # every conversation the frozen configuration was not tuned on
    unknown = [c for c in conversation if c not in eligible]
    if unknown:
        raise HeldoutRefused(f"--conversation: expected one of {', '.join(eligible)}, found {unknown[0]!r}")
    conversations = tuple(dict.fromkeys(conversation))  # each once, in the order given
    override = parse_ks(k)
    loaded = load_arm(arm)
    commit = frozen_commit(REPO_ROOT, tag)
    # Every conversation is checked before any is run: a refusal for the last leaves the first unwritten.
    for conv in conversations:
        load_slice(heldout_slice(conv))
        if loaded.token_match is None:
            ks = override or loaded.ks_for(heldout_slice(conv)) or (None,)
            refuse_overwrites(RESULTS_DIR, stack, arm, tuple(ks), (conv,))
        else:
            # The matched k is known only once the sweep is pooled; refuse if any matched result already exists.
            folder = result_path(RESULTS_DIR, stack, heldout_slice(conv), arm, None).parent
            existing = sorted(folder.glob(f"{arm}__k*.json"))
            if existing:
                raise HeldoutRefused(f"{existing[0]}: a held-out result already exists; held-out runs never overwrite")
    request = RunRequest(
        stack=stack,
        ks=override,
        git_tag=tag,
        update_committed=True,
        assume_yes=yes,
        health_strict=True,  # a held-out result with a broken model role must never be written
    )
    services = RunServices(progress=not quiet, results_root=RESULTS_DIR)
    typer.echo(f"held-out run of {arm} at tag {tag} (commit {commit[:12]}), stack {stack}")
    for conv in conversations:
        for path in run_arm(arm, heldout_slice(conv), request, services):
            typer.echo(f"  wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("heldout")(heldout)
