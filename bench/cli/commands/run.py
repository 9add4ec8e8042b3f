"""`engram-bench run ARM --slice SLICE`: ingest, ask at checkpoints, judge, write the result file(s)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.models.stacks import DEFAULT_STACK, STACK_NAMES, stack_label
from bench.results.schema import read_result
from bench.run.preflight import ASSUME_YES_ENV
from bench.run.request import RunRequest, RunServices
from bench.run.runner import RunOptions, parse_ks, run_arm


def run(
    arm: str = typer.Argument(..., help="An arm in arms/ (see `engram-bench arms`)."),
    slice_name: str = typer.Option(
        "dev",
        "--slice",
        help="dev | stress | dev_updates | dev_updates2 | heldout:<conv> | locomo:<conv> | locomo (`slices`)",
    ),
    stack: str = typer.Option(
        DEFAULT_STACK,
        "--stack",
        help=f"{' | '.join(STACK_NAMES)}; {DEFAULT_STACK} unless named, whatever keys are set.",
    ),
    k: str = typer.Option(None, "--k", help="Override the arm's k, e.g. 3 or 3,20 (one ingestion for all)."),
    mode: str = typer.Option(None, "--mode", help="Gateway mode: live | replay | record (default from keys)."),
    concurrency: int = typer.Option(
        None,
        "--concurrency",
        help="Model calls in flight: questions answered at once, conversations of a pooled slice run at once "
        "(default: the stack file's provider concurrency, else 6).",
    ),
    out: Path = typer.Option(None, "--out", help="Write the result files into this folder instead of the run's own."),
    update_committed: bool = typer.Option(
        False, "--update-committed", help="Write results/<stack>/<slice>/ (the committed files); never a tagged one."
    ),
    limit: int = typer.Option(None, "--limit", help="Only the first N questions (a quick try; marked in the result)."),
    yes: bool = typer.Option(False, "--yes", help=f"Allow paid live calls without asking (or {ASSUME_YES_ENV}=1)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
    arms_dir: Path = typer.Option(
        None,
        "--arms-dir",
        help="Read ARM (and the arms it extends) from this folder instead of arms/, e.g. an arm naming a plug-in's system.",
    ),
    replicates: int = typer.Option(
        1, "--replicates", help="N independent samples of every call; results side by side as <name>__r<i>.json."
    ),
    strict: bool = typer.Option(
        False,
        "--strict/--no-strict",
        help="Stop when a role's model replies were mostly unreadable or empty, or nothing was stored (else warn).",
    ),
) -> None:
    """Run ARM on a slice; results go to runs/<stack>/<slice>/<arm>/<run-id>/ (or --out DIR, --update-committed)."""
    request = RunRequest(
        stack=stack,
        ks=parse_ks(k),
        mode=mode,
        concurrency=concurrency,
        out=out,
        update_committed=update_committed,
        limit=limit,
        assume_yes=yes,
        replicates=replicates,
        arms_dir=arms_dir,
        health_strict=strict,
    )
    options = RunOptions.of(request, RunServices(progress=not quiet))
    for path in run_arm(arm, slice_name, options):
        typer.echo(summary_line(path))


def summary_line(path: Path) -> str:
    """One line per written file: accuracy, write cost, and which stack produced it."""
    result = read_result(path)
    acc = result.accuracy
    parts = [f"{path}: {acc.correct}/{acc.n} correct" + (f" ({acc.value:.1%})" if acc.value is not None else "")]
    if result.costs.cost_per_1k is not None:
        parts.append(f"${result.costs.cost_per_1k:.3f} per 1k messages")
    label = stack_label(result.stack)
    if result.standins and result.stack != DEFAULT_STACK:  # a mixed stack names the roles stand-ins served
        label += f"; stand-ins for {', '.join(result.standins)}"
    parts.append(f"[{result.stack}: {label}]")
    return ", ".join(parts[:-1]) + "  " + parts[-1]


def register(app: typer.Typer) -> None:
    app.command("run")(run)
