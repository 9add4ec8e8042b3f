"""`engram-bench compare A B [C ...]`: the paired comparison of result sets (the logic lives in bench.analysis.compare)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bench.analysis.categories import parse_categories
from bench.analysis.parity import budget_lines
from bench.analysis.rejudge import judge_entry
from bench.analysis.scoring.values import metric_choice
from bench.data.audit import OFFICIAL, load_errata
from bench.errors import ResultError
from bench.vocab import JUDGE

if TYPE_CHECKING:
    from bench.analysis.compare import ComparisonSide
    from bench.analysis.scoring.metric import Metric


def compare(
    sets: list[str] = typer.Argument(..., help="Result sets: a file, a directory or a quoted glob. A vs each other."),
    include_unscored: bool = typer.Option(False, "--all", help="Also count unscored questions (adversarial)."),
    draws: int = typer.Option(10_000, help="Bootstrap draws."),
    seed: int | None = typer.Option(None, help="Bootstrap seed (default: derived from the two labels)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
    list_discordant: bool = typer.Option(
        False, "--list-discordant", help="Also list the question ids only one side got right (A right/B wrong, then B)."
    ),
    metric: str = typer.Option(
        "j",
        "--metric",
        help="j (the judge's labels) or another registered metric, e.g. f1 (LoCoMo's); an unknown name lists them "
        "all (docs/metrics.md).",
    ),
    gold: str = typer.Option(
        "official",
        "--gold",
        help="official | audited-exclude | audited (the LoCoMo audit's errata); several, comma-separated, add a "
        "side-by-side table (the first gold is the report's).",
    ),
    categories: str | None = typer.Option(
        None, "--categories", help="Keep these categories: LoCoMo codes (1,2,3,4) or names (temporal,single-hop)."
    ),
    errata_file: Path | None = typer.Option(
        None, "--errata", help="An errata file in the audit's format (default: data/locomo-audit/errors.json)."
    ),
    match_tokens: bool = typer.Option(
        False,
        "--match-tokens",
        help="Each set after A is a k-sweep of one arm: compare A with its k whose retrieved tokens are closest.",
    ),
) -> None:
    """Paired comparison: Δ in points, per-question CI, conversation-cluster bootstrap, McNemar, per-group rows."""
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.compare import (
        comparison_report,
        discordant_questions,
        render_discordant,
        render_report,
        report_json,
    )

    if len(sets) < 2:
        raise ResultError(f"compare: expected at least two result sets (A B [C ...]), found {len(sets)}")
    if draws < 1:
        raise ResultError(f"compare --draws: expected a positive number of draws, found {draws}")
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.sides import gold_table, load_sides, parse_golds

    choice = metric_choice(metric)

    golds, kept = parse_golds(gold), parse_categories(categories)
    # the errata are read (and checked) before any result, and only when a gold needs them
    errata = load_errata(errata_file) if errata_file is not None or golds != [OFFICIAL] else None
    loaded, matched = load_sides(sets, golds[0], kept, match_tokens, errata)
    for line in matched:  # which k of each sweep was picked, before any report
        typer.echo(line, err=as_json)
    others = {g: load_sides(sets, g, kept, match_tokens, errata)[0] for g in golds[1:]}
    side_by_side = gold_table({golds[0]: loaded, **others}, include_unscored) if others else ""
    if choice.name != JUDGE:  # a graded metric: bench.analysis.metric_compare (no discordant pairs to list)
        _compare_graded(loaded, choice, include_unscored, draws, seed, as_json, list_discordant)
        return
    reports = [comparison_report(loaded[0], other, include_unscored, draws, seed) for other in loaded[1:]]

    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.metric_compare import judge_agreement, render_agreement

    # two judgings of the same answers (a file and its `rejudge`): how far the judges agree
    agreements = [judge_agreement(loaded[0], other, include_unscored) for other in loaded[1:]]
    if as_json:
        _warn_once(reports)
        documents = [report_json(r) for r in reports]
        for document, agreement in zip(documents, agreements, strict=True):
            if agreement is not None:
                document["judge_agreement"] = asdict(agreement)
        if list_discordant:
            for document, report in zip(documents, reports):
                document["discordant"] = discordant_questions(report).to_dict(orient="records")
        if side_by_side:
            print(side_by_side, file=sys.stderr)
        typer.echo(json.dumps(documents, indent=2, default=str))
        return
    texts = [
        render_report(r)
        + ("\n\n" + render_agreement(agreement) if agreement is not None else "")
        + ("\n\n" + render_discordant(r) if list_discordant else "")
        for r, agreement in zip(reports, agreements, strict=True)
    ]
    typer.echo("\n\n".join(texts))
    if side_by_side:
        typer.echo("\n" + side_by_side)
    typer.echo("\n" + _judge_rates(loaded))
    health = _health_lines(loaded)
    if health:
        typer.echo(health)


def _judge_rates(loaded: list[ComparisonSide]) -> str:
    """How lenient each side's judge measured on planted wrong answers (bench.analysis.judge_probe), one line per judge."""
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.judge_probe import rate_line

    metrics = dict.fromkeys(judge_entry(side.first) for side in loaded)
    return "\n".join(rate_line(metric) for metric in metrics)


def _health_lines(loaded: list[ComparisonSide]) -> str:
    """Each side's run health where its files recorded it (bench.run.health): the servers that answered and any
    role whose replies were mostly unusable, so a comparison never hides a broken model."""
    lines = []
    for side in loaded:
        for result in side.results:
            health = result.extras.get("health")
            servers = result.extras.get("servers") or {}
            if not isinstance(health, dict):
                continue
            shown = ", ".join(
                f"{role} {s.get('base_url')}" + (f" ({s['model_reported']})" if s.get("model_reported") else "")
                for role, s in sorted(servers.items())
            )
            problems = health.get("problems") or []
            state = "UNHEALTHY: " + "; ".join(problems) if problems else "healthy"
            lines.append(
                f"run health of {side.label} ({result.slice}): {state}" + (f"; servers: {shown}" if shown else "")
            )
    return "\n".join(dict.fromkeys(lines))


def _compare_graded(
    loaded: list[ComparisonSide],
    choice: Metric,
    include_unscored: bool,
    draws: int,
    seed: int | None,
    as_json: bool,
    listed: bool,
) -> None:
    # local import: the stats stack (pandas, scipy.stats, statsmodels: ~0.6 s) stays out of `engram-bench --help`
    from bench.analysis.metric_compare import metric_report, metric_report_json, render_metric_report

    if listed:
        raise ResultError(f"compare --list-discordant: expected --metric j (labels), found --metric {choice.choice}")

    reports = [metric_report(loaded[0], other, choice, include_unscored, draws, seed) for other in loaded[1:]]
    # every comparison states each side's budget, the graded ones too (over the questions both sides hold)
    budgets = [
        budget_lines(loaded[0], other, sorted(set(loaded[0].answers.index) & set(other.answers.index)))
        for other in loaded[1:]
    ]
    for report, (_, warnings) in zip(reports, budgets, strict=True):
        report["warnings"] = [*report["warnings"], *warnings]
    if as_json:
        _warn_once(reports)
        typer.echo(json.dumps([metric_report_json(r) for r in reports], indent=2, default=str))
    else:
        typer.echo(
            "\n\n".join(
                "\n".join(lines) + "\n" + render_metric_report(r)  # the report prints the warnings itself
                for r, (lines, _) in zip(reports, budgets, strict=True)
            )
        )


def _warn_once(reports: list[dict]) -> None:
    """JSON goes to stdout for a program; the warnings it carries go to stderr for the person, once each (the text
    report prints them itself, at its top)."""
    for warning in dict.fromkeys(w for report in reports for w in report["warnings"]):
        print(f"engram-bench compare: {warning}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
