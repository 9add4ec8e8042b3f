"""The ingest stage: every message of a conversation written to the system in order; after each checkpoint's last
message, the due questions retrieved once (at the widest k when the system is prefix-stable) and kept for answering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.data.slices import Slice, SliceQuestion
from bench.results.schema import Answer
from bench.run.planner import is_asked, is_scored
from bench.run.retrievals import Comparison, question_key
from bench.run.terminal import progress_bars
from bench.systems import RetrievedLines, System, WriteUsage


@dataclass
class Asked:
    """One question asked at one checkpoint, with what the system retrieved."""

    question: SliceQuestion
    checkpoint: int
    scored: bool
    retrievals: dict[int | None, RetrievedLines] = field(default_factory=dict)


@dataclass
class PartRun:
    """What one part of a slice produced on its own fresh store (a plain slice is its own single part)."""

    usages: list[WriteUsage]
    answers: dict[int | None, list[Answer]]
    store: dict[str, Any]
    audit: list[Any]
    description: dict[str, Any]
    decision_layer: bool
    part: Slice
    asked: list[Asked]
    explained: dict[int | None, dict[str, Any] | None]  # System.trace of the facts shown at each k
    models: dict[str, str]  # role -> the provider/model that served it in this part
    replay: Comparison | None = None  # its retrievals against the recorded run's (None: not checked)


def ingest_and_ask(
    system: System, the_slice: Slice, ks: tuple[int | None, ...], progress_shown: bool, adversarial: bool
) -> tuple[list[WriteUsage], list[Asked]]:
    """Write every message in order; after each checkpoint's last message, retrieve for its due questions."""
    checkpoint_after = {the_slice.last_message_of(cp).id: cp for cp in the_slice.checkpoints}
    final = the_slice.checkpoints[-1]
    usages: list[WriteUsage] = []
    asked: list[Asked] = []
    with progress_bars(progress_shown) as progress:
        task = progress.add_task(f"ingest {the_slice.name}", total=len(the_slice.messages))
        for message in the_slice.messages:
            usages.append(system.write(message))
            progress.advance(task)
            checkpoint = checkpoint_after.get(message.id)
            if checkpoint is None:
                continue
            if checkpoint == final:
                system.before_final_questions()
            due = [q for q in the_slice.questions_at(checkpoint) if is_asked(q, adversarial)]
            retrieve_task = progress.add_task(f"retrieve @ session {checkpoint}", total=len(due))
            for question in due:
                asked.append(
                    Asked(
                        question,
                        checkpoint,
                        is_scored(question, checkpoint, final, adversarial),
                        _retrieve(system, question, ks),
                    )
                )
                progress.advance(retrieve_task)
    return usages, asked


def _retrieve(system: System, question: SliceQuestion, ks: tuple[int | None, ...]) -> dict[int | None, RetrievedLines]:
    if system.PREFIX_STABLE:
        widest = None if None in ks else max(k for k in ks if k is not None)
        retrieval = system.retrieve(question, widest)
        return {k: retrieval.top(k) for k in ks}
    return {k: system.retrieve(question, k) for k in ks}


def retrieved_lines(asked: Sequence[Asked]) -> dict[str, tuple[str, ...]]:
    """Every retrieval of a part by question, checkpoint and k: what bench.run.retrievals compares and keeps."""
    return {
        question_key(item.question.id, item.checkpoint, k): lines.lines
        for item in asked
        for k, lines in item.retrievals.items()
    }


def traced_ids(asked: Sequence[Asked], k: int | None) -> list[str]:
    """The ids the line details at k name (engram's fact ids), first seen first."""
    ids = (d.get("fact_id") for item in asked for d in item.retrievals[k].details)
    return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def has_decision_layer(system: System, usages: Sequence[WriteUsage]) -> bool:
    """Whether decision cost/p50 apply: declared by the system, else inferred from recorded decision figures."""
    if system.DECISION_LAYER is not None:
        return system.DECISION_LAYER
    return any(u.decision_ms > 0 or u.decision_cost_usd > 0 for u in usages)
