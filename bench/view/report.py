"""Render a report (one result, or A against B) and a gallery of a results folder as self-contained HTML.

One file per report: the stylesheet, the script and the data are inline, nothing is fetched, so it opens from a
file:// URL and can be attached to a review. The table rows are rendered here; what a row expands to (the lines,
their source turns, engram's decisions) is drawn by the inline script from one JSON block, in which every line text
appears once however many questions showed it, gzipped, so a 1,540-question result stays a few megabytes.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from bench.analysis import longmemeval
from bench.analysis.scoring.metric import shown_metrics
from bench.data.audit import OFFICIAL
from bench.disk.atomic import write_text
from bench.errors import ResultError
from bench.models.provider import shown_model
from bench.results.schema import iter_results
from bench.view.model import (
    STANDIN_BANNER,
    Side,
    answer_metrics,
    discordant_keys,
    headline,
    lines_missing_reason,
    paired,
    require_same_questions,
    side_of,
    sources_missing_reason,
    trace_missing_reason,
)
from bench.view.trust import audit_mark, side_under, trust_lines

TEMPLATES = Path(__file__).parent / "templates"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.globals["raw_asset"] = lambda name: Markup((TEMPLATES / name).read_text(encoding="utf-8"))
    return env


def _num(value: float | int | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def packed_json(value: Any) -> Markup:
    """JSON, gzipped (zero timestamp: the same report, the same bytes) and in base64, which holds no character the
    HTML parser could read as markup; the page inflates it with the browser's DecompressionStream on first use.
    Line texts and engram's decisions compress about tenfold, which keeps a traced 1,540-question report small."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return Markup(base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii"))


def unpack_json(text: str) -> Any:
    """The inverse of ``packed_json`` (for tests and scripts that read a report's data)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


# ------------------------------------------------------------------------------------------------- the payload


class _Strings:
    """A string table: each distinct line text once, referred to by index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def table(self) -> list[str]:
        return list(self.index)


def _side_cell(side: Side, position: int, strings: _Strings) -> dict[str, Any]:
    answer = side.result.answers[position]
    details = side.trace.lines[position] if side.trace is not None else None
    cell: dict[str, Any] = {"why": lines_missing_reason(side, answer), "srcwhy": sources_missing_reason(side, answer)}
    if answer.lines is not None:
        cell["l"] = [
            [
                strings(text),
                answer.sources[i] if answer.sources is not None else None,
                details[i] if details is not None else None,
            ]
            for i, text in enumerate(answer.lines)
        ]
    return cell


def _side_meta(side: Side) -> dict[str, Any]:
    r = side.result
    return {
        "label": side.label,
        "arm": r.arm,
        "system": r.system,
        "stack": r.stack,
        "file": side.path.name,
        "traced": side.trace is not None,
        "trace_note": trace_missing_reason(side),
    }


SHOWN_DIGITS = 3  # the page prints probabilities with three decimals


class _OptionSets:
    """Each distinct option list once (edge_type alone has two dozen names), referred to by index."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, ...], int] = {}

    def __call__(self, options: tuple[str, ...]) -> int:
        return self.index.setdefault(options, len(self.index))

    def table(self) -> list[list[str]]:
        return [list(options) for options in self.index]


def _decision_row(decision: dict[str, Any], option_sets: _OptionSets) -> list[Any]:
    """``[question, target, chosen, option set, probabilities]`` (+ ``{fallback, error, text}`` when any is set):
    the page's form of a trace decision, probabilities at the printed precision; the confidence is the top one."""
    options = tuple(decision.get("probs", {}))
    row: list[Any] = [
        decision["question"],
        decision.get("target"),
        decision["chosen"],
        option_sets(options),
        [round(float(decision["probs"][o]), SHOWN_DIGITS) for o in options],
    ]
    extra = {name: decision[name] for name in ("fallback", "error", "text") if decision.get(name)}
    return [*row, extra] if extra else row


def _items_for_view(items: dict[str, dict[str, Any]], option_sets: _OptionSets) -> dict[str, dict[str, Any]]:
    """A trace's explanations as the page reads them: decisions as compact rows, their models once per fact."""
    shown = {}
    for item_id, item in items.items():
        decisions = item.get("decisions", [])
        shown[item_id] = {
            **item,
            "decisions": [_decision_row(d, option_sets) for d in decisions],
            "models": sorted({shown_model(d["model"]) for d in decisions if d.get("model")}),
        }
    return shown


def payload(sides: Sequence[Side]) -> dict[str, Any]:
    """The data the inline script draws expansions from, one row per answer of side A (B is looked up by key);
    turns and items are keyed by conversation, then id (ids repeat across conversations)."""
    strings = _Strings()
    option_sets = _OptionSets()
    first = sides[0]
    rows = []
    for position, key in enumerate(first.keys):
        positions = [position] + [other.keys.index(key) for other in sides[1:]]
        answers = [side.result.answers[p] for side, p in zip(sides, positions)]
        evidence = next((a.evidence for a in answers if a.evidence is not None), None)
        rows.append(
            {
                "k": key,
                "c": answers[0].conversation,
                "cp": answers[0].checkpoint,
                "ev": evidence,
                "s": [_side_cell(side, p, strings) for side, p in zip(sides, positions)],
            }
        )
    turns: dict[str, dict[str, Any]] = {}  # conversation -> message id -> turn, from whichever side traced it
    for side in sides:
        if side.trace is not None:
            for conversation, by_id in side.trace.turns.items():
                turns.setdefault(conversation, {}).update(by_id)
    return {
        "sides": [_side_meta(s) for s in sides],
        "strings": strings.table(),
        "rows": rows,
        "turns": turns,
        "items": [
            {conv: _items_for_view(by_id, option_sets) for conv, by_id in s.trace.items.items()}
            if s.trace is not None
            else {}
            for s in sides
        ],
        "optsets": option_sets.table(),
    }


# ------------------------------------------------------------------------------------------------ the report


def _table_rows(sides: Sequence[Side]) -> list[dict[str, Any]]:
    rows = []
    for position, key in enumerate(sides[0].keys):
        a = sides[0].result.answers[position]
        cells = [side.answer(key) for side in sides]
        rows.append(
            {
                "i": position,
                "key": key,
                "conversation": a.conversation,
                "category": a.category,
                "scored": a.scored,
                "question": a.question,
                "gold": a.gold,
                "audit": audit_mark(a.question_id),
                "cells": [
                    {
                        "answer": c.answer,
                        "label": c.label,
                        "metrics": answer_metrics(c),
                        "tokens": c.retrieved_tokens,
                        "shown": c.lines_shown,
                    }
                    for c in cells
                ],
            }
        )
    return rows


def _side_header(side: Side) -> dict[str, Any]:
    r = side.result
    return {
        "label": side.label,
        "path": str(side.path),
        "result": r,
        "provenance": asdict(r.provenance),
        "headline": headline(r),
        "standins": list(r.standins),
        "models": {role: shown_model(model) for role, model in sorted(r.models.items())},
        "trace_note": trace_missing_reason(side),
        # LongMemEval's own report (task-averaged, abstention, session recall); its stand-in judge named in it
        "longmemeval": longmemeval.summary_lines(r) if longmemeval.is_longmemeval(r) else [],
    }


def render_report(sides: Sequence[Side], title: str | None = None) -> str:
    """The HTML of one report; two sides must answer the same questions (``QuestionSetMismatch`` otherwise)."""
    if len(sides) == 2:
        require_same_questions(sides[0], sides[1])
    pair = paired(sides[0], sides[1]) if len(sides) == 2 else None
    discordant = discordant_keys(sides[0], sides[1]) if len(sides) == 2 else {"a_only": [], "b_only": []}
    template = _environment().get_template("report.html.j2")
    return template.render(
        shown=[m.shown for m in shown_metrics()],
        title=title or " vs ".join(s.label for s in sides),
        sides=[_side_header(s) for s in sides],
        standin_banner=STANDIN_BANNER if any(s.result.standins for s in sides) else None,
        categories=sorted({a.category for a in sides[0].result.answers}),
        trust=trust_lines(sides),
        rows=_table_rows(sides),
        pair=pair,
        discordant={name: len(keys) for name, keys in discordant.items()},
        data=packed_json(payload(sides)),
        generated=_generated(),
    )


def _generated() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def write_report(
    results: Sequence[str | Path], out: str | Path, gold: str = OFFICIAL, categories: frozenset[str] | None = None
) -> Path:
    """Validate the result files (and traces), render, then write ``out`` atomically; nothing is written on bad
    input. `gold` and `categories`: what `view --gold --categories` show (bench.view.trust)."""
    sides = [side_under(p, gold, categories) for p in results]
    return write_text(out, render_report(sides))


# ------------------------------------------------------------------------------------------------ the gallery


def _report_name(relative: Path) -> Path:
    return relative.with_suffix(".html")


def render_gallery(folder: Path, gold: str = OFFICIAL, categories: frozenset[str] | None = None) -> dict[Path, str]:
    """Every report of a results folder plus its index, as {relative output path: HTML}, all rendered before any
    is written. ``ResultError`` when the folder holds no result file."""
    found = [(path, result) for path, result in iter_results(folder)]
    if not found:
        raise ResultError(f"{folder}: expected a folder with result files (*.json with schema_version), found none")
    pages: dict[Path, str] = {}
    entries = []
    for path, result in found:
        side = side_of(path, result) if (gold, categories) == (OFFICIAL, None) else side_under(path, gold, categories)
        relative = path.relative_to(folder)
        page = _report_name(relative)
        pages[page] = render_report([side])
        entries.append({"href": page.as_posix(), "file": relative.as_posix(), **_side_header(side)})
    template = _environment().get_template("gallery.html.j2")
    pages[Path("index.html")] = template.render(
        shown=[m.shown for m in shown_metrics()],
        folder=str(folder),
        entries=entries,
        standin_banner=STANDIN_BANNER if any(e["standins"] for e in entries) else None,
        generated=_generated(),
    )
    return pages


def write_gallery(
    folder: str | Path, out_dir: str | Path, gold: str = OFFICIAL, categories: frozenset[str] | None = None
) -> Path:
    pages = render_gallery(Path(folder), gold, categories)
    out = Path(out_dir)
    for relative, html in sorted(pages.items()):
        write_text(out / relative, html)
    return out / "index.html"
