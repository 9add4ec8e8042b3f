"""The dev-slice decision-layer table: same extraction, three ways of deciding what to do with each fact."""

from __future__ import annotations

from dataclasses import dataclass

from bench.report.catalog import TABLES, PaperContext
from bench.report.inputs import Loaded, ResultSet
from bench.report.numbers import Numbers
from bench.report.tables import Table, TableBuilder

DEV_SLICE = "dev"


@dataclass(frozen=True)
class DevArm:
    arm: str
    label: str


DEV_ARMS = [
    DevArm("mem0", "mem0 2.1.0"),
    DevArm("engram-llm-decider", "engram, LLM decision layer"),
    DevArm("engram-jev", "engram, Jev decision layer"),
]
LLM_ARM, JEV_ARM = "engram-llm-decider", "engram-jev"


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    """A ratio, or None when it is undefined (stand-in runs cost $0 and may record no latency)."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def _dev_file(rs: ResultSet, arm: str) -> Loaded | None:
    """The dev run of an arm: the one file of that arm on the dev slice, whatever k it used."""
    found = [
        item for (s, a, _), item in sorted(rs.results.items(), key=lambda kv: str(kv[0])) if s == DEV_SLICE and a == arm
    ]
    return found[0] if len(found) == 1 else None


def _row_label(d: DevArm, f: Loaded, stack: str) -> str:
    """Off the paper stack, say which stand-in made the decisions (or extracted, for mem0)."""
    if stack == "paper":
        return d.label
    models = f.result.models
    role = "decide" if "decide" in models and f.result.system != "mem0" else "extract"
    return f"{d.label} ({role}: {models.get(role, 'unknown')})"


def register(rs: ResultSet, numbers: Numbers) -> list[Table]:
    loaded = {d.arm: f for d in DEV_ARMS if (f := _dev_file(rs, d.arm)) is not None}
    if not loaded:
        return []
    first = next(iter(loaded.values()))
    numbers.add("dev.q", first.result.accuracy.n, "int", [first.source], note="scored dev questions")
    for arm, f in loaded.items():
        r, src = f.result, [f.source]
        stem = f"dev.{arm}"
        numbers.add(f"{stem}.accuracy", (r.accuracy.correct, r.accuracy.n), "frac", src)
        numbers.add(f"{stem}.cost_per_1k", r.costs.cost_per_1k, "usd2", src)
        numbers.add(f"{stem}.write_p50", r.latency.write_p50_ms, "ms", src)
        numbers.add(f"{stem}.stored", r.store.get("stored"), "int", src)
        if r.costs.decision_cost_per_1k is not None:
            numbers.add(f"{stem}.decision_cost_per_1k", r.costs.decision_cost_per_1k, "usd3", src)
            numbers.add(f"{stem}.extract_cost_per_1k", r.costs.extract_cost_per_1k, "usd3", src)
            numbers.add(f"{stem}.decision_p50", r.latency.decision_p50_ms, "ms", src)
            numbers.add(
                f"{stem}.decision_share",
                _ratio(r.costs.decision_cost_per_1k, r.costs.cost_per_1k),
                "pct",
                src,
                note="decision cost / total write cost",
            )
    if LLM_ARM in loaded and JEV_ARM in loaded:
        llm, jev = loaded[LLM_ARM], loaded[JEV_ARM]
        src = [llm.source, jev.source]
        numbers.add(
            "dev.decision_cost_ratio",
            _ratio(llm.result.costs.decision_cost_per_1k, jev.result.costs.decision_cost_per_1k),
            "x",
            src,
            note="LLM decision cost / Jev decision cost",
        )
        numbers.add(
            "dev.decision_latency_ratio",
            _ratio(llm.result.latency.decision_p50_ms, jev.result.latency.decision_p50_ms),
            "x",
            src,
            note="LLM decision p50 / Jev decision p50",
        )
    t = TableBuilder(
        numbers,
        "dev",
        "Dev slice: the decision layer swapped, extraction fixed",
        rs.label,
        ["", "accuracy", "decision cost / 1k msgs", "decision p50", "total cost / 1k msgs", "facts stored"],
    )
    for d in DEV_ARMS:
        if d.arm in loaded:
            stem = f"dev.{d.arm}"
            t.row(
                t.run_label(_row_label(d, loaded[d.arm], rs.stack), [loaded[d.arm].result]),
                t.num(f"{stem}.accuracy"),
                t.num_or_dash(f"{stem}.decision_cost_per_1k"),
                t.num_or_dash(f"{stem}.decision_p50"),
                t.num(f"{stem}.cost_per_1k"),
                t.num(f"{stem}.stored"),
            )
    t.note("Costs are nominal USD per 1,000 messages; latencies are medians of recorded call latencies.")
    return [t.table]


@TABLES.register("dev")
def dev_tables(ctx: PaperContext) -> list[Table]:
    """The development-conversation table (conv-26)."""
    return register(ctx.results, ctx.numbers)
