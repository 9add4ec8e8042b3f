"""Update sets ("trap items"): stale items left active, update-question accuracy, trap items stored and wrongly
closed, closes audited against the labelled pairs, and plan_fulfilled outcomes."""

from __future__ import annotations

from dataclasses import dataclass

from bench.report.catalog import TABLES, PaperContext
from bench.report.inputs import Loaded, ResultSet
from bench.report.numbers import Numbers
from bench.report.tables import Table, TableBuilder

SET1 = "dev_updates"


@dataclass(frozen=True)
class UpdateRow:
    name: str  # id segment
    label: str
    arm: str
    k: int | None


# The rows the article cites; any other arm on the update slice gets a row named after its file.
NAMED_ROWS = [
    UpdateRow("mem0", "mem0 (default retrieval)", "mem0", None),
    UpdateRow("mem0-nodates", "mem0, dates removed from context", "mem0-nodates", None),
    UpdateRow("mem0-k3", "mem0 (k=3)", "mem0", 3),
    UpdateRow("engram-k3", "engram, frozen (k=3)", "engram", 3),
    UpdateRow("engram-jev-v2", "engram, simple 0.85 close policy (k=3)", "engram-jev-v2", 3),
]
# The frozen arm's store outcomes are cited without a k (its one update run is at k=3).
FROZEN = UpdateRow("engram", "engram, frozen", "engram", 3)


def _rows(rs: ResultSet) -> list[tuple[UpdateRow, Loaded]]:
    out: list[tuple[UpdateRow, Loaded]] = []
    taken: set[tuple[str, int | None]] = set()
    for row in NAMED_ROWS:
        f = rs.get(SET1, row.arm, row.k)
        if f is not None:
            out.append((row, f))
            taken.add((row.arm, row.k))
    for (s, arm, k), f in sorted(rs.results.items(), key=lambda kv: str(kv[0])):
        if s == SET1 and (arm, k) not in taken and f.result.updates is not None:
            name = f"{arm}-k{k}" if k is not None else f"{arm}-default-k"
            if any(r.name == name for r, _ in out):
                raise ValueError(f"update rows: two rows named {name}")
            out.append((UpdateRow(name, name, arm, k), f))
    return out


def register(rs: ResultSet, numbers: Numbers) -> list[Table]:
    rows = _rows(rs)
    if not rows:
        return []
    for row, f in rows:
        _register_row(f"updates.{row.name}", f, numbers)
    frozen = rs.get(SET1, FROZEN.arm, FROZEN.k)
    if frozen is not None:
        _register_store(f"updates.{FROZEN.name}", frozen, numbers)
    t = TableBuilder(
        numbers,
        "updates",
        "Update set 1: stale items, update questions and trap items",
        rs.label,
        ["", "stale close items", "update questions", "traps stored", "traps closed", "closes", "unlabeled closes"],
    )
    for row, _ in rows:
        stem = f"updates.{row.name}"
        t.row(
            row.label,
            t.num_or_dash(f"{stem}.stale"),
            t.num(f"{stem}.update_accuracy"),
            t.num_or_dash(f"{stem}.traps_stored"),
            t.num_or_dash(f"{stem}.traps_closed"),
            t.num_or_dash(f"{stem}.closes"),
            t.num_or_dash(f"{stem}.closes_unlabeled"),
        )
    t.note(
        "Stale: close items whose old fact is still active, of those stored. Traps: no-close items the arm stored "
        "a fact for, and how many of those it wrongly closed. Closes are audited against the labelled pairs."
    )
    return [t.table]


def _register_row(stem: str, f: Loaded, numbers: Numbers) -> None:
    r, src = f.result, [f.source]
    items = [a for a in r.answers if a.category == "update"]
    numbers.add(f"{stem}.update_accuracy", (sum(a.correct for a in items), len(items)), "frac", src)
    u = r.updates or {}
    if u.get("stale"):
        stale, stored = u["stale"]
        numbers.add(f"{stem}.stale", (stale, stored), "frac", src)
    if u.get("traps"):
        numbers.add(f"{stem}.traps_stored", u["traps"]["stored"], "int", src)
        numbers.add(f"{stem}.traps_closed", (u["traps"]["closed"], u["traps"]["stored"]), "frac", src)
    if u.get("closes"):
        numbers.add(f"{stem}.closes", u["closes"]["total"], "int", src)
        numbers.add(f"{stem}.closes_unlabeled", u["closes"]["unlabeled"], "int", src)


def _register_store(stem: str, f: Loaded, numbers: Numbers) -> None:
    u, src = f.result.updates or {}, [f.source]
    if u.get("traps"):
        numbers.add(f"{stem}.traps_stored", u["traps"]["stored"], "int", src)
        numbers.add(f"{stem}.traps_closed", (u["traps"]["closed"], u["traps"]["stored"]), "frac", src)
    trap_items = [it for it in u.get("items") or [] if it.get("expected") == "no_close"]
    if trap_items:
        numbers.add(f"{stem}.trap_items", len(trap_items), "int", src, note="no-close trap items in set 1")
    if u.get("closes"):
        numbers.add(f"{stem}.closes", u["closes"]["total"], "int", src)
        numbers.add(f"{stem}.closes_unlabeled", u["closes"]["unlabeled"], "int", src)
    if u.get("plan_fulfilled"):
        for key in ("asks", "correct", "wrong"):
            numbers.add(f"{stem}.plan_fulfilled.{key}", u["plan_fulfilled"][key], "int", src)


@TABLES.register("updates")
def updates_tables(ctx: PaperContext) -> list[Table]:
    """The update-handling table."""
    return register(ctx.results, ctx.numbers)
