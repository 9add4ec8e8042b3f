"""The LongMemEval table: one row per LongMemEval result of the paper's stack directory (arm, k, slice), with the
numbers LongMemEval reports (task-averaged, overall and abstention accuracy, `bench.analysis.longmemeval`), the
LLM-free session and turn recall, and each question type's accuracy. A stack without LongMemEval results gets no
table rather than an empty one. The judge that labelled the answers is named in the table's note (the offline
stack's lexical judge is a stand-in, not LongMemEval's judge)."""

from __future__ import annotations

from bench.analysis import longmemeval
from bench.data.longmemeval import QUESTION_TYPES
from bench.report.catalog import TABLES, PaperContext
from bench.report.tables import Table, TableBuilder

NAME = "longmemeval"
SHORT_TYPE = {
    "single-session-user": "SS-user",
    "single-session-assistant": "SS-asst",
    "single-session-preference": "SS-pref",
    "multi-session": "multi",
    "temporal-reasoning": "temporal",
    "knowledge-update": "update",
}


@TABLES.register(NAME)
def longmemeval_table(ctx: PaperContext) -> list[Table]:
    loaded = sorted(
        ((key, item) for key, item in ctx.results.results.items() if item.result.slice.startswith("longmemeval:")),
        key=lambda pair: (pair[0][0], pair[0][1], pair[0][2] if pair[0][2] is not None else -1),
    )
    if not loaded:
        return []
    columns = ["slice", "arm", "k", "n", "task-avg", "overall", "abstention", "session recall", "turn recall"]
    table = TableBuilder(
        ctx.numbers,
        NAME,
        "LongMemEval: accuracy as LongMemEval reports it, and retrieval recall",
        ctx.results.label,
        columns + [SHORT_TYPE[t] for t in QUESTION_TYPES],
    )
    notes = set()
    for (slice_name, arm, k), item in loaded:
        rep = longmemeval.report(item.result.answers)
        stem = (
            f"{NAME}.{slice_name.removeprefix('longmemeval:').replace('/', '-')}.{arm}.k{k if k is not None else 'all'}"
        )
        sources = [item.source]
        add = ctx.numbers.add
        add(f"{stem}.n", rep.overall.n, "int", sources)
        add(f"{stem}.task_averaged", rep.task_averaged, "pct", sources, note="mean of the per-type accuracies")
        add(f"{stem}.overall", rep.overall.accuracy, "pct", sources)
        add(f"{stem}.abstention", rep.abstention.accuracy, "pct", sources, note=f"{rep.abstention.n} questions")
        add(f"{stem}.session_recall", rep.overall.session_recall, "f3", sources)
        add(f"{stem}.turn_recall", rep.overall.turn_recall, "f3", sources)
        by_type = {row.name: row for row in rep.by_type}
        for qtype in by_type:
            add(f"{stem}.{qtype}", by_type[qtype].accuracy, "pct", sources, note=f"{by_type[qtype].n} questions")
        table.row(
            slice_name,
            table.run_label(arm, [item.result]),
            "all" if k is None else str(k),
            *table.nums(stem, "n", "task_averaged", "overall", "abstention", "session_recall", "turn_recall"),
            *[table.num_or_dash(f"{stem}.{qtype}") for qtype in QUESTION_TYPES],
        )
        notes.add(longmemeval.judge_note(item.result))
    table.note(
        "Accuracy " + "; ".join(sorted(notes)) + ". Task-avg is the mean of the per-type accuracies; abstention "
        "questions (`_abs`) count in their type too. Recall@k: the share of evidence sessions (answer_session_ids) "
        "and of has_answer turns that the shown lines came from."
    )
    return [table.table]
