"""`engram-bench run ARM --slice SLICE`: ingest, ask at checkpoints, judge, write the result file(s)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.analysis import longmemeval
from bench.cli.options import parse_ks
from bench.disk.writable import check_folder
from bench.models.cache import LocalStore
from bench.models.gateway import default_cache_dir
from bench.models.stacks import DEFAULT_STACK, STACK_NAMES, stack_label
from bench.results.schema import read_result
from bench.run.preflight import ASSUME_YES_ENV
from bench.run.request import RunRequest, RunServices, default_runs_root
from bench.run.runner import run_arm


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
    out: Path = typer.Option(
        None,
        "--out",
        help="Write the result files into this folder (the run's store and lock: DIR/runs/, beside them).",
    ),
    update_committed: bool = typer.Option(
        False, "--update-committed", help="Write results/<stack>/<slice>/ (the committed files); never a tagged one."
    ),
    limit: int = typer.Option(None, "--limit", help="Only the first N questions (a quick try; marked in the result)."),
    messages: int = typer.Option(
        None,
        "--messages",
        help="Only the slice's first N messages, every question asked after them (a quick try with a slow model; "
        "marked in the result).",
    ),
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
    """Run ARM on a slice; results go to runs/<stack>/<slice>/<arm>/<run-id>/ (or --out DIR, --update-committed).

    With --out DIR everything the run writes stays in DIR: its results, and its store and lock under DIR/runs/."""
    check_run_paths(out)
    request = RunRequest(
        stack=stack,
        ks=parse_ks(k),
        mode=mode,
        concurrency=concurrency,
        out=out,
        update_committed=update_committed,
        limit=limit,
        messages=messages,
        assume_yes=yes,
        replicates=replicates,
        arms_dir=arms_dir,
        health_strict=strict,
    )
    runs_root = out / "runs" if out is not None else default_runs_root()
    services = RunServices(progress=not quiet, runs_root=runs_root)
    for path in run_arm(arm, slice_name, request, services):
        typer.echo(summary_line(path))


def check_run_paths(out: Path | None) -> None:
    """Where the run will write, checked before it reads a question: --out (or the runs folder) and the local call
    cache, so a path problem is one line now rather than a traceback after the whole run."""
    if out is not None:
        check_folder(out, "--out")
    else:
        check_folder(default_runs_root(), "runs folder ($ENGRAM_RUNS_DIR or runs/)")
    # Every mode may record into the local cache (replay records the stand-ins' calls too).
    cache_dir = check_folder(default_cache_dir(), "local call cache ($ENGRAM_CACHE_DIR or cache/local/)")
    if (cache_dir / "cache.db").is_file():  # a damaged cache is named now, before the run's lock or store exist
        LocalStore(cache_dir).close()


def summary_line(path: Path) -> str:
    """One line per written file: accuracy, write cost, and which stack produced it."""
    result = read_result(path)
    acc = result.accuracy
    parts = [f"{path}: {acc.correct}/{acc.n} correct" + (f" ({acc.value:.1%})" if acc.value is not None else "")]
    limit = result.extras.get("limit") or {}
    if limit.get("of"):  # a --limit run answers the first N of the slice's questions: say of how many
        parts[0] += f" on the first {limit['questions']} of {limit['of']} questions (--limit)"
    if result.extras.get("first_messages"):  # a --messages run ingested only the slice's first N messages
        parts[0] += f" after the first {result.extras['first_messages']} messages (--messages)"
    if result.costs.cost_per_1k is not None:
        parts.append(f"${result.costs.cost_per_1k:.3f} per 1k messages")
    label = stack_label(result.stack)
    if result.standins and result.stack != DEFAULT_STACK:  # a mixed stack names the roles stand-ins served
        label += f"; stand-ins for {', '.join(result.standins)}"
    parts.append(f"[{result.stack}: {label}]")
    line = ", ".join(parts[:-1]) + "  " + parts[-1]
    if longmemeval.is_longmemeval(result):  # its own report: per type, task-averaged, abstention, recall
        return "\n".join([line, *longmemeval.summary_lines(result)])
    return line


def register(app: typer.Typer) -> None:
    app.command("run")(run)
