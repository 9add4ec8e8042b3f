"""The field's table (`engram-bench field`): every LoCoMo run this repository can read, published by others or run
here, side by side under one scoring.

Runs come from three places, each row naming its source:
- the real published files of data/peer-files.toml (bench.data.peer_files): the shipped ones from data/, the ones
  that may not ship from the peer-files folder when a user put them there (the sha256 checked first);
- our committed results, results/v1 and results/v3 (whole LoCoMo conversations only: `heldout:<conv>` and
  `locomo:<conv>` slices, one run per arm, k and stack);
- result files named on the command line (e.g. `runs/imported/<name>/`, written by `import-results`).

Per run: producer, system, answer and judge model as stated, judgment runs, coverage of LoCoMo's 1,540 scored
questions (partial runs marked), accuracy under the official and the audited-exclude gold with Wilson 95% intervals,
accuracy per category in LoCoMo's codes, a flag where the official score exceeds the audited ceiling of the
questions the run covers (the share whose official gold is not score-corrupting: a higher score means matching
wrong gold), and the paired difference against a reference run on the questions both hold with the exact McNemar
p-value. Accuracy is the mean over the run's judgment runs (what producers state); the interval and the pairing use
the first judgment run (as `compare` does).
"""

from __future__ import annotations

import hashlib
import html
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.analysis.categories import code_of
from bench.analysis.coverage import coverage_phrase
from bench.analysis.stats import accuracy_interval, mcnemar_exact_p
from bench.data.audit import Errata, load_errata
from bench.data.peer_files import PeerFile, is_the_named_file, location, peer_files
from bench.errors import DataError
from bench.exchange.import_results import NOT_STATED, read_rows, results_of
from bench.exchange.peer_rows import coverage_of, locomo
from bench.results.schema import Result, iter_results, read_result, result_files_of
from bench.vocab import LOCOMO_PREFIX, ingested_data

OUR_RESULTS = ("results/v1", "results/v3")
SCORED_CODES = (1, 2, 3, 4)


@dataclass(frozen=True)
class FieldRun:
    """One run: where it comes from, what it states, and per judgment run the label of each scored question."""

    source: str
    producer: str
    system: str
    answer_model: str
    judge_model: str
    labels: list[dict[str, bool]]  # one {question id: correct} per judgment run, scored questions only
    codes: dict[str, int]  # question id -> LoCoMo's category code
    sha256: str | None = None  # the source file's, when the run was read from one file
    origin: str | None = None  # a published file's provenance beyond its source: full commit, sha256, licence


@dataclass(frozen=True)
class Score:
    """Accuracy as the mean over judgment runs, and the first run's Wilson 95% interval (fractions)."""

    n: int
    accuracy: float
    low: float
    high: float


@dataclass(frozen=True)
class FieldRow:
    run: FieldRun
    coverage: dict[str, Any]
    official: Score | None
    audited: Score | None
    by_code: dict[int, float | None]
    ceiling: float | None
    above_ceiling: bool
    paired: dict[str, Any] | None  # {n, delta, a_only, b_only, p} against the reference; None for the reference


# ------------------------------------------------------------------------------------------------------- reading


def run_of(results: Sequence[Result], source: str, producer: str, system: str) -> FieldRun:
    """A run from its result files: replicate files (extras.replicate) are its further judgment runs."""
    by_run: dict[int, dict[str, bool]] = defaultdict(dict)
    codes: dict[str, int] = {}
    for result in results:
        replicate = int(result.extras.get("replicate", 0))
        for answer in result.answers:
            code = code_of(answer.category)
            if answer.scored and code in SCORED_CODES:
                by_run[replicate][answer.question_id] = answer.correct
                codes[answer.question_id] = code
    first = results[0]
    return FieldRun(
        source=source,
        producer=producer,
        system=system,
        answer_model=first.models.get("answer", NOT_STATED),
        judge_model=first.models.get("judge", NOT_STATED),
        labels=[by_run[r] for r in sorted(by_run)],
        codes=codes,
    )


def _read_file(path: Path, fmt: str | None, source: str, producer: str, system: str) -> FieldRun:
    reading = read_rows(path, fmt)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    results = results_of(reading, system, path, reading.format, NOT_STATED, sha256)
    return replace(run_of(list(results.values()), source, producer, system), sha256=sha256)


def our_runs(repo: Path, folders: Iterable[str] = OUR_RESULTS) -> list[FieldRun]:
    """Our committed runs on whole LoCoMo conversations, one per (arm, k, stack) in each folder."""
    runs = []
    for folder in folders:
        groups: dict[tuple[str, int | None, str], list[Result]] = defaultdict(list)
        for _, result in iter_results(repo / folder):
            if ingested_data(result.slice).startswith(LOCOMO_PREFIX):
                groups[(result.arm, result.k, result.stack)].append(result)
        for (arm, k, stack), results in groups.items():
            name = f"{arm}__k{k}" if k is not None else arm
            system = f"{arm} k={k}" if k is not None else arm
            runs.append(run_of(results, f"{folder}/*/*/{name}.json", f"engram-bench ({stack} stack)", system))
    return runs


def peer_runs(peer_root: Path | None) -> tuple[list[FieldRun], list[str]]:
    """The manifest's published LoCoMo files (the refused ones left out): the shipped ones always, the others when present
    under peer_root (not looked for when it is None); and a note per file left out. The notes name no folder of this
    machine, so a table built anywhere reads the same."""
    runs, notes = [], []
    for entry in peer_files():
        if entry.refused or entry.benchmark != "locomo":  # the field's table is LoCoMo's
            continue
        path = location(entry, peer_root)
        if path is None or not path.is_file():
            notes.append(_absent_note(entry))
        elif not is_the_named_file(path, entry):
            notes.append(f"left out: {path} is not the file data/peer-files.toml names (sha256 differs)")
        else:
            run = _read_file(path, entry.format, entry.source, entry.repo, entry.system)
            runs.append(replace(run, origin=_origin(entry)))
    return runs, notes


def _origin(entry: PeerFile) -> str:
    where = f"shipped as data/{entry.shipped_as}" if entry.shipped_as else "not shipped"
    return f"commit {entry.commit}, sha256 {entry.sha256}; licence: {entry.licence}; {where}"


def _absent_note(entry: PeerFile) -> str:
    if entry.shippable:  # shipped, so only a damaged checkout lacks it
        return f"missing: data/{entry.shipped_as} (shipped with this repository; restore it from git)"
    return (
        f"not shipped: {entry.source} (licence: {entry.licence}); put it under the peer-files folder "
        "($ENGRAM_PEER_FILES or --peer-files, default ~/.cache/engram-bench/peer-files) as <repo>/<path> to add its row"
    )


def spec_runs(specs: Sequence[str]) -> list[FieldRun]:
    """Result files named on the command line, one run per arm."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for path in result_files_of(specs):
        result = read_result(path)
        groups[result.arm].append(result)
    runs = []
    for arm, results in groups.items():
        imported = results[0].extras.get("imported") or {}
        source = str(imported.get("source") or f"{arm} ({len(results)} result files)")
        producer = f"imported ({imported['format']})" if "format" in imported else f"{results[0].stack} stack"
        runs.append(run_of(results, source, producer, arm))
    return runs


def gather(repo: Path, specs: Sequence[str] = (), peer_root: Path | None = None) -> tuple[list[FieldRun], list[str]]:
    """Every run the table shows, and notes on what was left out: the published files first, then ours, then the
    ones named. peer_root None: the shipped published files only (what a fresh clone holds)."""
    peers, notes = peer_runs(peer_root)
    return [*peers, *our_runs(repo), *spec_runs(specs)], notes


# ----------------------------------------------------------------------------------------------------- scoring


def _score(run: FieldRun, keep: frozenset[str] | None) -> Score | None:
    runs = [{q: v for q, v in labels.items() if keep is None or q in keep} for labels in run.labels]
    if not runs or not runs[0]:
        return None
    accuracy = sum(sum(r.values()) / len(r) for r in runs) / len(runs)
    interval = accuracy_interval(sum(runs[0].values()), len(runs[0]))
    return Score(len(runs[0]), accuracy, interval.low, interval.high)


def _by_code(run: FieldRun) -> dict[int, float | None]:
    out: dict[int, float | None] = {}
    for code in SCORED_CODES:
        mine = [{q: v for q, v in labels.items() if run.codes[q] == code} for labels in run.labels]
        out[code] = sum(sum(r.values()) / len(r) for r in mine) / len(mine) if mine and mine[0] else None
    return out


def _paired(run: FieldRun, reference: FieldRun) -> dict[str, Any]:
    a, b = run.labels[0], reference.labels[0]
    shared = sorted(set(a) & set(b))
    a_only = sum(1 for q in shared if a[q] and not b[q])
    b_only = sum(1 for q in shared if b[q] and not a[q])
    delta = (a_only - b_only) / len(shared) if shared else None
    p = mcnemar_exact_p(a_only, b_only) if shared else None
    return {"n": len(shared), "delta": delta, "a_only": a_only, "b_only": b_only, "p": p}


def score_runs(runs: Sequence[FieldRun], reference: int, errata: Errata | None = None) -> list[FieldRow]:
    """Each run scored; `reference` is the index of the run the others are paired with."""
    errata = errata or load_errata()
    known = locomo()
    kept = frozenset(q for run in runs for q in run.codes if q not in errata.corrupting)
    rows = []
    for i, run in enumerate(runs):
        covered = set(run.codes)
        official = _score(run, None)
        ceiling = 1 - len(covered & errata.corrupting) / len(covered) if covered else None
        rows.append(
            FieldRow(
                run=run,
                coverage=coverage_of(covered, known),
                official=official,
                audited=_score(run, kept),
                by_code=_by_code(run),
                ceiling=ceiling,
                above_ceiling=official is not None and ceiling is not None and official.accuracy > ceiling,
                paired=None if i == reference else _paired(run, runs[reference]),
            )
        )
    return rows


def choose_reference(runs: Sequence[FieldRun], wanted: str | None) -> int:
    """The run whose system or source contains `wanted`; by default the first run."""
    if not runs:
        raise DataError("field: expected at least one run to show, found none")
    if wanted is None:
        return 0
    for i, run in enumerate(runs):
        if wanted in run.system or wanted in run.source:
            return i
    raise DataError(f"--reference: expected text in one run's system or source, found {wanted!r} in none")


# --------------------------------------------------------------------------------------------------- rendering

HEADERS = (
    "source",
    "producer",
    "system",
    "answer model",
    "judge model",
    "judgments",
    "questions",
    "official % [95%]",
    "audited-exclude % [95%]",
    "1 multi-hop",
    "2 temporal",
    "3 open-domain",
    "4 single-hop",
    "flag",
    "Δ vs reference (shared n, exact McNemar p)",
)


def _pct(score: Score | None, partial: bool) -> str:
    if score is None:
        return "-"
    mark = " PARTIAL" if partial else ""
    return f"{100 * score.accuracy:.1f} [{100 * score.low:.1f}, {100 * score.high:.1f}]{mark}"


def _delta(paired: dict[str, Any] | None) -> str:
    if paired is None:
        return "reference"
    if paired["delta"] is None:
        return "no shared questions"
    return f"{100 * paired['delta']:+.1f} pts (n {paired['n']:,}, p {paired['p']:.2g})"


def cells(row: FieldRow) -> list[str]:
    partial = bool(row.coverage["partial"])
    flag = f"ABOVE AUDITED CEILING {100 * row.ceiling:.1f}" if row.above_ceiling and row.ceiling is not None else ""
    return [
        row.run.source,
        row.run.producer,
        row.run.system,
        row.run.answer_model,
        row.run.judge_model,
        str(len(row.run.labels)),
        coverage_phrase(row.coverage) + (" (PARTIAL)" if partial else ""),
        _pct(row.official, partial),
        _pct(row.audited, partial),
        *("-" if row.by_code[c] is None else f"{100 * row.by_code[c]:.1f}" for c in SCORED_CODES),  # type: ignore[operator]
        flag,
        _delta(row.paired),
    ]


NOTE = (
    "Accuracy: mean over a run's judgment runs, over the LoCoMo questions (categories 1-4, LoCoMo's codes) it covers; "
    "interval: Wilson 95% on the first judgment run; audited-exclude drops the audit's score-corrupting questions; "
    "the flag marks an official score above the share of the covered questions whose official gold is not "
    "score-corrupting; Δ and McNemar pair the first judgment runs on the questions both runs hold."
)


def origins(rows: Sequence[FieldRow]) -> list[str]:
    """'<source>: <full commit, sha256, licence>' for each row read from a published file."""
    return [f"{row.run.source}: {row.run.origin}" for row in rows if row.run.origin]


def render_markdown(rows: Sequence[FieldRow], notes: Sequence[str]) -> str:
    lines = ["# The field on LoCoMo, under one scoring", "", NOTE, ""]
    lines.append("| " + " | ".join(HEADERS) + " |")
    lines.append("|" + "---|" * len(HEADERS))
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(row)) + " |")
    lines.extend(["", *(f"- {n}" for n in notes)])
    if origins(rows):
        lines.extend(["", "## The published files", "", *(f"- {o}" for o in origins(rows))])
    return "\n".join(lines).rstrip() + "\n"


def render_html(rows: Sequence[FieldRow], notes: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = "\n".join(
        f'<tr class="{"partial" if row.coverage["partial"] else "full"}">'
        + "".join(f"<td>{html.escape(c)}</td>" for c in cells(row))
        + "</tr>"
        for row in rows
    )
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    published = "".join(f"<li>{html.escape(o)}</li>" for o in origins(rows))
    sources = f"<h2>The published files</h2>\n<ul>{published}</ul>\n" if published else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>The field on LoCoMo</title>'
        "<style>table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font-size:13px}"
        "tr.partial td{background:#fff4e0}</style></head><body>\n<h1>The field on LoCoMo, under one scoring</h1>\n"
        f"<p>{html.escape(NOTE)}</p>\n<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>\n"
        f"<ul>{items}</ul>\n{sources}</body></html>\n"
    )


def render_terminal(rows: Sequence[FieldRow], notes: Sequence[str]) -> str:
    lines = [NOTE, ""]
    for i, row in enumerate(rows, 1):
        c = dict(zip(HEADERS, cells(row), strict=True))
        lines.append(f"[{i}] {c['system']} ({c['producer']})")
        lines.append(f"    source: {c['source']}")
        lines.append(
            f"    answer {c['answer model']}; judge {c['judge model']}; {c['judgments']} judgment run(s); "
            f"questions: {c['questions']}"
        )
        lines.append(f"    official {c['official % [95%]']}; audited-exclude {c['audited-exclude % [95%]']}")
        lines.append("    by category: " + "; ".join(f"{h} {c[h]}" for h in HEADERS[9:13]))
        flag = f"; {c['flag']}" if c["flag"] else ""
        lines.append(f"    vs reference: {c['Δ vs reference (shared n, exact McNemar p)']}{flag}")
    lines.extend(["", *notes])
    if origins(rows):
        lines.extend(["", "The published files:", *(f"  {o}" for o in origins(rows))])
    return "\n".join(lines).rstrip() + "\n"


RENDERERS = {"terminal": render_terminal, "markdown": render_markdown, "html": render_html}


# ------------------------------------------------------------------------------------------------ the built table

# The table as shipped: built from what every clone holds (the shipped published files and results/v1, results/v3),
# never from a machine's peer-files folder, so building it anywhere gives the same bytes.
BUILT = {"docs/field.md": "markdown", "docs/field.html": "html"}
BUILT_NOTE = (
    "Built by `engram-bench field --build` from the published files shipped in this repository and our results/v1 and "
    "results/v3; `engram-bench field --check` says whether it is current."
)


def built_tables(repo: Path) -> dict[str, str]:
    """Each shipped table file (path relative to the repository) and the text it should hold."""
    runs, notes = gather(repo, (), None)
    rows = score_runs(runs, choose_reference(runs, None))
    return {path: RENDERERS[kind](rows, [BUILT_NOTE, *notes]) for path, kind in BUILT.items()}


def stale_tables(repo: Path) -> list[str]:
    """One line per shipped table file whose bytes differ from a fresh build (or that is missing)."""
    problems = []
    for relative, text in built_tables(repo).items():
        path = repo / relative
        if not path.is_file():
            problems.append(f"{relative}: missing; expected the table `engram-bench field --build` writes")
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append(f"{relative}: differs from a fresh build; run `engram-bench field --build`")
    return problems
