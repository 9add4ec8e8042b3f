"""`engram-bench run ARM --slice SLICE`: ingest, ask at checkpoints, judge, write the result file(s)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.results import read_result
from bench.runner import RunOptions, parse_ks, run_arm
from bench.stacks import OFFLINE_LABEL, STACK_NAMES, build_stack, default_stack_name


def run(
    arm: str = typer.Argument(..., help="An arm in arms/ (see `engram-bench arms`)."),
    slice_name: str = typer.Option(
        "dev",
        "--slice",
        help="dev | stress | dev_updates | dev_updates2 | heldout:<conv> | locomo:<conv> | locomo (see `slices`)",
    ),
    stack: str = typer.Option(None, "--stack", help=f"{' | '.join(STACK_NAMES)}; default offline without API keys."),
    k: str = typer.Option(None, "--k", help="Override the arm's k, e.g. 3 or 3,20 (one ingestion for all)."),
    mode: str = typer.Option(None, "--mode", help="Gateway mode: live | replay | record (default from keys)."),
    concurrency: int = typer.Option(6, "--concurrency", min=1, help="Questions answered at once."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
) -> None:
    """Run ARM on a slice and write results/<stack>/<slice>/<arm>[__k<k>].json."""
    stack_name = stack or default_stack_name()
    build_stack(stack_name)  # refuse a bad --stack before loading anything heavy
    options = RunOptions(stack=stack_name, ks=parse_ks(k), mode=mode, concurrency=concurrency, progress=not quiet)
    for path in run_arm(arm, slice_name, options):
        typer.echo(summary_line(path))


def summary_line(path: Path) -> str:
    """One line per written file: accuracy, write cost, and which stack produced it."""
    result = read_result(path)
    acc = result.accuracy
    parts = [f"{path}: {acc.correct}/{acc.n} correct" + (f" ({acc.value:.1%})" if acc.value is not None else "")]
    if result.costs.cost_per_1k is not None:
        parts.append(f"${result.costs.cost_per_1k:.3f} per 1k messages")
    parts.append(f"[{result.stack}: {OFFLINE_LABEL if result.standins else 'paper stack'}]")
    return ", ".join(parts[:-1]) + "  " + parts[-1]


def register(app: typer.Typer) -> None:
    app.command("run")(run)
