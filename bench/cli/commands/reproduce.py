"""`engram-bench reproduce-dev` (`make reproduce-dev`): re-derive the dev-slice decision-layer table with zero keys.

It re-runs the article's three dev arms (mem0, engram-llm-decider, engram-jev) end to end, in STRICT replay from the
shipped subset `cache/dev/` only (the local cache is not read, so a missing call fails loudly instead of being
quietly served or computed), into a temporary folder, then compares every cell with the committed result files
under `results/offline/dev/`. Exit 0 only if every cell matches; exit 1 naming each differing cell or missing call.

The shipped subset holds the OFFLINE stack's calls (local stand-ins: rules extractor and decider, extractive
answerer, lexical judge, local token counter): no API key can be shipped, and the article's Claude and Jev calls
are not redistributable. So the replayed numbers are offline-stack numbers. The article's own Table-1 cells are
printed next to them, read from the imported v1 results (`results/v1/dev/`), in a column labelled
"paper v1, Claude + Jev"; they are context, not something an offline replay can match.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from bench.errors import CacheMiss, ReproduceError
from bench.models.embeddings import VECTORS_FILE, RecordedEmbedder, shared_minilm
from bench.models.stacks import OFFLINE_STACK, stack_label
from bench.results.schema import Result, file_name, read_result
from bench.run.request import RunRequest, RunServices
from bench.run.runner import run_arm
from bench.run.terminal import step
from bench.vocab import DEV_CACHE_SUBSET, REPO_ROOT, RESULTS_DIR, V1_RESULTS_DIR, evidence_recall_metric

ARMS = ("mem0", "engram-llm-decider", "engram-jev")
V1_DIR = V1_RESULTS_DIR / "dev"
PAPER_COLUMN = "paper v1, Claude + Jev"
DASH = "–"
EVIDENCE_CELL = "evidence recall (LLM-free)"
# Printed under the table: which cells no model answers or judges, and whose numbers they are.
LLM_FREE_NOTE = (
    f"LLM-free cells: '{EVIDENCE_CELL}' (the share of each question's evidence turns among the lines shown, "
    "retrieved by the real MiniLM embedder at the arm's k, @all: every line the store had; averaged over the scored "
    "questions with evidence) and 'facts stored' (what the write path kept). They are the OFFLINE stack's numbers "
    "(rules extractor and decider), like every replayed cell, not the paper's."
)


# ------------------------------------------------------------------------------------------------------ the cells


def _money(value: float | None, digits: int) -> str:
    return DASH if value is None else f"${value:,.{digits}f}"


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f} ms"


def _evidence_recall(result: Result) -> str:
    """Mean evidence recall over the scored questions that have evidence turns: the share of each question's evidence
    turns among the lines the retrieval showed (engram and mem0 retrieve with the real MiniLM embedder here), named
    with its k. No model answers or judges it, so it means the same offline as with keys."""
    recalls = [a.evidence_recall for a in result.scored_answers() if a.evidence_recall is not None]
    if not recalls:
        return DASH
    at = evidence_recall_metric(result.k).split("@")[1]
    return f"{math.fsum(recalls) / len(recalls):.3f} @{at}, {len(recalls)} q"


@dataclass(frozen=True)
class Cell:
    name: str
    show: Callable[[Result], str]


CELLS = (
    Cell("accuracy", lambda r: f"{r.accuracy.correct}/{r.accuracy.n}"),
    Cell("decision $/1k msgs", lambda r: _money(r.costs.decision_cost_per_1k, 3)),
    Cell("decision p50", lambda r: _ms(r.latency.decision_p50_ms)),
    Cell("end-to-end $/1k msgs", lambda r: _money(r.costs.cost_per_1k, 2)),
    Cell("write p50", lambda r: _ms(r.latency.write_p50_ms)),
    Cell("facts stored", lambda r: str(r.store.get("stored", DASH))),
    # LLM-free: the offline stack's retrieval and store, numbers that mean something without any key
    Cell(EVIDENCE_CELL, _evidence_recall),
)


@dataclass(frozen=True)
class ReproducedCell:
    arm: str
    cell: str
    replayed: str
    committed: str
    paper: str

    @property
    def matches(self) -> bool:
        return self.replayed == self.committed


def compare(arm: str, replayed: Result | None, committed: Result, paper: Result | None) -> list[ReproducedCell]:
    return [
        ReproducedCell(
            arm,
            cell.name,
            cell.show(replayed) if replayed else "(miss)",
            cell.show(committed),
            cell.show(paper) if paper else DASH,
        )
        for cell in CELLS
    ]


# --------------------------------------------------------------------------------------------------------- the run


def _committed_path(arm: str, replayed: Path | None, committed_root: Path) -> Path:
    if replayed is not None:
        return committed_root / replayed.name
    matches = sorted(committed_root.glob(f"{arm}.json")) + sorted(committed_root.glob(f"{arm}__k*.json"))
    if not matches:
        raise ReproduceError(f"{committed_root}/{arm}[__k<k>].json: expected a committed dev result, found none")
    return matches[0]


def reproduce(
    subset: Path = DEV_CACHE_SUBSET,
    committed_root: Path = RESULTS_DIR / OFFLINE_STACK / "dev",
    v1_root: Path = V1_DIR,
    console: Console | None = None,
    arms: tuple[str, ...] = ARMS,
    base_request: RunRequest | None = None,
    base_services: RunServices | None = None,
    keep: Path | None = None,
) -> bool:
    """Replay, compare, print; True when every cell matches. (`arms`, `base_request` and `base_services` let tests use small arms;
    `keep` keeps the replayed result files in that folder instead of a temporary one.)

    The MiniLM vectors come from the subset's recorded `embeddings.npz` when it has one (bit-identical to
    recomputing them, and no torch import); a text it lacks is embedded by the real model."""
    console = console or Console(width=120)  # the six columns wrap unreadably at a pipe's default 80
    if not (subset / "manifest.json").is_file():
        raise ReproduceError(f"{subset}/manifest.json: expected the shipped dev call subset, found no file")
    console.print(
        f"reproduce-dev: strict replay of {', '.join(arms)} on the dev slice from {_shown(subset)}/ "
        f"only, with no API keys.\nThe shipped cache holds the OFFLINE stack's calls ({stack_label(OFFLINE_STACK)}); the "
        f"'{PAPER_COLUMN}' column is the article's own Table 1, shown for reference, not replayed."
    )
    started = time.perf_counter()
    rows: list[ReproducedCell] = []
    misses: list[str] = []
    given = base_services or RunServices()
    vectors = subset / VECTORS_FILE
    if given.embedder is None and vectors.is_file():
        given = replace(given, embedder=RecordedEmbedder.from_file(vectors, shared_minilm))
    with tempfile.TemporaryDirectory(prefix="reproduce-dev-") as scratch:
        request = replace(
            base_request or RunRequest(),
            stack=OFFLINE_STACK,
            out=keep or Path(scratch) / "results",  # never the committed files it compares with
            update_committed=False,
            limit=None,
            strict=True,
            ks=None,
        )
        services = replace(
            given, runs_root=Path(scratch) / "runs", use_local_cache=False, subsets=(subset,), progress=False
        )
        for arm in arms:
            arm_started = time.perf_counter()
            try:
                with step(f"reproduce-dev: replaying {arm} on the dev slice"):
                    replayed_path: Path | None = run_arm(arm, "dev", request, services)[0]
            except CacheMiss as miss:
                misses.append(f"{arm}: {miss}")
                replayed_path = None
            outcome = "replayed" if replayed_path else "stopped at a cache miss"
            console.print(f"  {arm}: {outcome} in {time.perf_counter() - arm_started:.1f} s")
            committed = read_result(_committed_path(arm, replayed_path, committed_root))
            paper_path = v1_root / file_name(arm, None)
            paper = read_result(paper_path) if paper_path.is_file() else None
            replayed = read_result(replayed_path) if replayed_path else None
            rows += compare(arm, replayed, committed, paper)
    _print_table(console, rows)
    console.print(LLM_FREE_NOTE)
    for line in misses:
        console.print(f"[red]MISS[/red] {line}")
    differing = [row for row in rows if not row.matches]
    for row in differing:
        console.print(f"[red]DIFF[/red] {row.arm} / {row.cell}: replayed {row.replayed}, committed {row.committed}")
    verdict = "every cell matches" if not differing and not misses else f"{len(differing)} cell(s) differ"
    console.print(f"reproduce-dev: {verdict} ({time.perf_counter() - started:.1f} s)")
    return not differing and not misses


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _print_table(console: Console, rows: list[ReproducedCell]) -> None:
    table = Table(title="dev slice (conv-26 sessions 1-4, 76 messages, 35 questions)")
    for header in ("arm", "cell", "replayed (offline)", "committed (offline)", "match", PAPER_COLUMN):
        table.add_column(header)
    for row in rows:
        table.add_row(row.arm, row.cell, row.replayed, row.committed, "✓" if row.matches else "✗", row.paper)
    console.print(table)


def reproduce_dev() -> None:
    """Re-run the dev-slice arms from the shipped cache with zero keys and compare every cell (exit 1 on a diff)."""
    if not reproduce():
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.command("reproduce-dev")(reproduce_dev)
