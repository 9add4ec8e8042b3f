"""`engram-bench judge-probe --judge J [--stack S] [--answers FILE]`: a judge's false-accept rate on planted wrong
answers (bench.analysis.judge_probe)."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.analysis.rejudge import judge_bills, judge_choice, slug
from bench.data.files import file_sha256
from bench.disk.writable import check_file
from bench.errors import ConfigError, ResultError

SOURCES = ("both", "audit", "generated")


def judge_probe(
    judge: str = typer.Option(..., "--judge", help="lexical (offline stand-in) | mem0-lenient | strict (a prompt)."),
    stack: str = typer.Option(
        None, "--stack", help="Whose judge model gets the prompt (e.g. local); lexical: offline."
    ),
    answers: Path = typer.Option(
        None,
        "--answers",
        help="Grade only these planted answers: eval-results JSON, or JSON lines {question_id, answer}.",
    ),
    source: str = typer.Option(
        "both", "--source", help="Without --answers: audit (the LoCoMo audit's probe set) | generated (ours) | both."
    ),
    slice_name: str = typer.Option("locomo", "--slice", help="The slice our generators plant answers for."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most N planted answers per source (a seeded sample)."),
    out: Path = typer.Option(None, "--out", help="The report file (default runs/judge-probe/<stack>/<judge>.json)."),
    mode: str = typer.Option(None, "--mode", help="Gateway mode: live | replay | record (default from keys)."),
    yes: bool = typer.Option(False, "--yes", help="Allow paid judge calls (a judge on a paid stack)."),
) -> None:
    """Grade planted wrong answers and print the share the judge accepted, overall and per kind and category."""
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.judge_probe import (
        AUDIT_PROBE_FILE,
        AUDIT_SOURCE,
        GENERATED_SOURCE,
        audit_items,
        default_path,
        generated_items,
        grade,
        own_items,
        render,
        sample,
        write_report,
    )

    choice = judge_choice(judge, stack, "judge-probe")
    if source not in SOURCES:
        raise ConfigError(f"judge-probe --source: expected one of {', '.join(SOURCES)}, found {source!r}")
    target = check_file(out or default_path(choice), "judge-probe --out")
    seed = f"judge-probe:{slug(choice)}"
    if answers is not None:
        items = sample(own_items(answers), limit, seed)
        sources = [{"name": answers.name, "path": str(answers)}]
    else:
        items, sources = [], []
        if source in ("both", AUDIT_SOURCE):
            items += sample(audit_items(), limit, seed)
            sources.append(
                {"name": AUDIT_SOURCE, "path": f"data/{AUDIT_PROBE_FILE}", "sha256": file_sha256(AUDIT_PROBE_FILE)}
            )
        if source in ("both", GENERATED_SOURCE):
            items += sample(generated_items(slice_name), limit, seed)
            # The generators' name as committed probe results record it (the module is now bench.analysis.planted).
            generators = "bench.planted"  # rewrite-imports: keep
            sources.append({"name": GENERATED_SOURCE, "slice": slice_name, "generators": generators})
    if judge_bills(choice) and mode != "replay" and not yes:
        raise ResultError(
            f"judge-probe --judge {judge} --stack {stack}: grading {len(items)} planted answers may send paid calls; "
            "pass --yes to allow it, or --mode replay to use only recorded judgings"
        )
    report = grade(items, choice, sources, mode)
    write_report(target, report)
    typer.echo(render(report, target))


def register(app: typer.Typer) -> None:
    app.command("judge-probe")(judge_probe)
