"""A token-matched unit: the k of its sweep whose pooled mean retrieved tokens is closest to its reference's, and
the sweep's shown lines at that k answered and judged again through the gateway (the same calls, so a replay is
exact), with the sweep's write-side figures."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from bench.analysis.stats.tokens import TokenMatch, pooled_mean_tokens, token_matched_k
from bench.data.slices import Slice
from bench.errors import ConfigError, ResultError
from bench.models.cache import read_keys_file
from bench.results.schema import Result, Timing, file_name, read_result, slice_dir
from bench.results.trace import trace_name, trace_of
from bench.run.answer import KeyTap, answer_all, embedder_of, open_gateway, result_metrics
from bench.run.arms import Arm, TokenMatchPlan
from bench.run.ingest import Asked
from bench.run.output import replicate_name, run_lock, target_path
from bench.run.planner import PlanUnit, refuse_pooled
from bench.run.provenance import calls_of, identity, now, run_notes, write_all
from bench.run.request import RunRequest, RunServices
from bench.systems import RetrievedLines


def _pooled_mean_tokens(
    request: RunRequest, services: RunServices, stack: str, arm: str, k: int, slices: list[str]
) -> float:
    """The pooled mean retrieved tokens of `arm` at `k` over the scored answers of every slice in `slices`."""
    counts: list[int | None] = []
    for name in slices:
        path = target_path(request, services, stack, name, arm, k)
        if not path.is_file():
            raise ResultError(
                f"{path}: token matching needs this result first; expected it from "
                f"`engram-bench run {arm} --slice {name} --stack {stack}`, found no file"
            )
        counts += [a.retrieved_tokens for a in read_result(path).answers if a.scored]
    return pooled_mean_tokens(counts)


def choose_matched_k(
    plan: TokenMatchPlan, slice_name: str, stack: str, request: RunRequest, services: RunServices
) -> TokenMatch:
    """The k of the sweep whose pooled mean retrieved tokens is closest to the reference's (ties: smaller k)."""
    slices = plan.pooled_slices(slice_name)
    reference = _pooled_mean_tokens(request, services, stack, plan.reference_arm, plan.reference_k, slices)
    by_k = {k: _pooled_mean_tokens(request, services, stack, plan.sweep_arm, k, slices) for k in plan.ks}
    return token_matched_k(by_k, reference)


def check_token_matchable(arm: Arm, the_slice: Slice, request: RunRequest) -> None:
    assert arm.token_match is not None
    refuse_pooled(arm, the_slice)
    if request.out is not None and len(arm.token_match.pooled_slices(the_slice.name)) > 1:
        raise ConfigError(
            f"--out with {arm.name} on {the_slice.name}: token matching pools every held-out conversation, whose "
            f"results would share one folder; expected the default run folder or --update-committed"
        )


def run_token_matched(unit: PlanUnit, services: RunServices) -> Path:
    """Answer at the matched k from the sweep arm's stores: its lines at that k are re-answered and re-judged
    through the gateway (the same calls, so a replay is exact), and its write-side figures are the same store's."""
    arm, the_slice, stack, request = unit.arm, unit.the_slice, unit.stack, unit.request
    assert arm.token_match is not None
    started, wall_start = now(), time.perf_counter()
    match = choose_matched_k(arm.token_match, the_slice.name, stack.name, request, services)
    k = match.k
    sweep_path = target_path(request, services, stack.name, the_slice.name, arm.token_match.sweep_arm, k)
    sweep = read_result(sweep_path)
    if any(a.lines is None for a in sweep.answers):
        raise ResultError(f"{arm.token_match.sweep_arm} k={k}: expected the shown lines in every answer, found none")
    run_id = f"{stack.name}/{slice_dir(the_slice.name)}/{arm.name}"
    gateway = open_gateway(request, services, run_id, arm.name, the_slice.name)
    tap = KeyTap(gateway)
    questions = {q.id: q for q in the_slice.questions}
    # Result files keep the shown lines but not their source turns, so the lines are re-answered without sources
    # and evidence recall is taken from the sweep's record of the very same lines.
    asked = [
        Asked(
            questions[a.question_id],
            a.checkpoint or the_slice.checkpoints[-1],
            a.scored,
            {k: RetrievedLines(tuple(a.lines or ()), tuple(() for _ in a.lines or ()))},
        )
        for a in sweep.answers
    ]
    ran: dict[str, str] = {}
    with run_lock(services.runs_root, stack.name, the_slice.name, arm.name):
        try:
            embedder = embedder_of(services)
            answers = answer_all(asked, k, the_slice, stack, tap, embedder, request.concurrency, services.progress, ran)
        finally:
            gateway.close()
    # The sweep's record of the very same lines also gives their sources and trace (copied: the two results may
    # live in different output folders).
    answers = [
        replace(mine, evidence_recall=theirs.evidence_recall, sources=theirs.sources, evidence=theirs.evidence)
        for mine, theirs in zip(answers, sweep.answers)
    ]
    sweep_trace = trace_of(sweep_path, sweep)
    if sweep_trace is not None:
        sweep_trace = replace(sweep_trace, result=replicate_name(file_name(arm.name, k), request))
    sweep_keys = sweep_path.with_suffix(".calls.txt")
    path = target_path(request, services, stack.name, the_slice.name, arm.name, k)
    keys = set(read_keys_file(sweep_keys)) if sweep_keys.is_file() else set()
    keys_path = path.with_suffix(".calls.txt")
    extras = {
        **sweep.extras,
        "token_match": {
            "k": k,
            "tokens_by_k": {str(key): value for key, value in sorted(match.tokens_by_k.items())},
            "reference_tokens": match.reference_tokens,
            "reference_arm": arm.token_match.reference_arm,
            "reference_k": arm.token_match.reference_k,
            "sweep_arm": arm.token_match.sweep_arm,
            "pooled_slices": arm.token_match.pooled_slices(the_slice.name),
        },
        **run_notes(request),
    }
    result = Result.build(
        **identity(unit, services, k, {**stack.models, **sweep.models, **ran}),
        answers=answers,
        costs=sweep.costs,
        latency=sweep.latency,
        store=sweep.store,
        updates=sweep.updates,
        extras=extras,
        metrics=result_metrics(stack, k),
        calls=calls_of(keys_path, unit, services, tap),
        timing=Timing(wall_s=round(time.perf_counter() - wall_start, 3), started_at=started, finished_at=now()),
        trace=trace_name(path) if sweep_trace is not None else None,
    )
    return write_all([(path, result, keys | tap.keys, sweep_trace)])[0]
