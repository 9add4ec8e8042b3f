"""`engram-bench grid`: arms x slices x replicates as independent units, on a process pool or Ray, in one command."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.disk.writable import check_folder
from bench.models.gateway import check_mode
from bench.models.stacks import STACK_NAMES
from bench.run.preflight import ASSUME_YES_ENV


def grid(
    grid_file: Path = typer.Argument(
        None, help="A GRID.toml (arms, slices, replicates, stack, executor, address, out, workers, budget_usd, tag)."
    ),
    arm: list[str] = typer.Option([], "--arm", help="An arm (repeat for more); replaces the grid file's arms."),
    slice_name: list[str] = typer.Option(
        [], "--slice", help="A slice (repeat for more); `heldout` = its four conversations, one unit each."
    ),
    replicates: int = typer.Option(None, "--replicates", help="Replicates per unit (default 1)."),
    stack: str = typer.Option(None, "--stack", help=f"{' | '.join(STACK_NAMES)} (default offline)."),
    executor: str = typer.Option(None, "--executor", help="local (a process pool, default) | ray."),
    address: str = typer.Option(None, "--address", help="Ray: a cluster to join (host:port, ray://host:port, auto)."),
    out: Path = typer.Option(
        None, "--out", help="The results tree to write (default runs/grid/; with --tag, results/)."
    ),
    tag: str = typer.Option(
        None, "--tag", help="A frozen git tag (held-out runs): HEAD must be it, clean; every result is stamped."
    ),
    workers: int = typer.Option(None, "--workers", help="Units at once (default: the machine's cores)."),
    concurrency: int = typer.Option(
        None, "--concurrency", help="Model calls in flight per unit (default: the stack file's provider concurrency)."
    ),
    budget: float = typer.Option(None, "--budget", help="USD for every paid call of the grid together."),
    mode: str = typer.Option(None, "--mode", help="Gateway mode: live | replay | record (default from keys)."),
    yes: bool = typer.Option(False, "--yes", help=f"Allow paid live calls without asking (or {ASSUME_YES_ENV}=1)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar (the per-unit lines and summary stay)."),
) -> None:
    """Run a grid: skip units already written for this arm hash and commit, run the rest, then the units that read
    them (token matching), and print one summary table (also written to <out>/grid-summary.md)."""
    # local import: multiprocessing and the grid executors (~30 ms) stay out of `engram-bench --help`
    from bench.run.grid import run_grid, spec_from

    check_mode(mode)
    if out is not None:
        check_folder(out, "grid --out")
    spec = spec_from(
        grid_file,
        {
            "arms": tuple(arm),
            "slices": tuple(slice_name),
            "replicates": replicates,
            "stack": stack,
            "executor": executor,
            "address": address,
            "out": out,
            "workers": workers,
            "budget_usd": budget,
            "tag": tag,
            "concurrency": concurrency,
        },
    )
    report = run_grid(spec, mode=mode, assume_yes=yes, progress=not quiet)
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("grid")(grid)
