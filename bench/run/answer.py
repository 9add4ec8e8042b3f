"""The answer stage: the gateway tap that records which calls a result needs, and every asked question answered,
judged and scored at one k on the run's bounded pool (collected in slice order)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, cast

from bench.analysis import scoring
from bench.analysis.longmemeval import retrieval_scores
from bench.data.slices import Slice, SliceQuestion
from bench.models import judge, longmemeval_judge, tokens
from bench.models.budget import RunLabels
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway, check_mode
from bench.models.provider import judge_metric_for
from bench.models.providers import Models
from bench.models.stacks import Stack
from bench.results.schema import Answer
from bench.run.inflight import InFlight
from bench.run.ingest import Asked
from bench.run.planner import calls_in_flight, with_concurrency
from bench.run.request import RunRequest, RunServices
from bench.run.terminal import progress_bars


def _stamped(gateway: Any, requests: Sequence[Any]) -> Sequence[Any]:
    stamp = getattr(gateway, "stamped", None)  # a grid worker's gateway may wrap ours
    return stamp(requests) if stamp is not None else requests


class KeyTap:
    """A gateway wrapper that remembers the keys requested through it and how the cache served them, so each result
    file lists exactly the calls it needs (its ingestion and retrieval plus its own k's answers)."""

    def __init__(
        self, inner: Gateway, watch: Callable[[Any, Any], None] | None = None, in_flight: InFlight | None = None
    ) -> None:
        self.inner = inner
        self.watch = watch  # sees every served call (bench.run.health.RunHealth.watch)
        self.in_flight = in_flight  # the run's bound on live calls per provider (None: each client's own only)
        self.keys: set[str] = set()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _note(self, requests: Sequence[Any], results: Sequence[Any]) -> None:
        with self._lock:
            # the keys as the gateway sends them (with its replicate index): a key list names what was cached, so
            # `cache export --run` of a replicate exports that replicate's calls
            self.keys.update(r.key() for r in _stamped(self.inner, requests))
            self.hits += sum(1 for r in results if r.cached)
            self.misses += sum(1 for r in results if not r.cached)
        if self.watch is not None:
            for request, result in zip(requests, results, strict=True):
                self.watch(request, result)

    def note_external(self, keys: Sequence[str], hits: int, misses: int) -> None:
        """Calls a system made through a gateway of its own in another process (a project-environment adapter,
        bench.systems.handoff): counted here as if they had passed through this tap."""
        with self._lock:
            self.keys.update(keys)
            self.hits += hits
            self.misses += misses

    def call(self, request: Any, live: Any) -> Any:
        if self.in_flight is not None:
            live = self.in_flight.bounded(request.provider, live)
        result = self.inner.call(request, live)
        self._note([request], [result])
        return result

    async def acall(self, request: Any, live: Any) -> Any:
        if self.in_flight is not None:
            live = self.in_flight.abounded(request.provider, live)
        result = await self.inner.acall(request, live)
        self._note([request], [result])
        return result

    def call_batch(self, requests: Sequence[Any], live: Any) -> Any:
        if self.in_flight is not None and requests:  # a batch's misses go out in one round trip: one slot
            live = self.in_flight.bounded(requests[0].provider, live)
        results = self.inner.call_batch(requests, live)
        self._note(requests, results)
        return results

    async def acall_batch(self, requests: Sequence[Any], live: Any) -> Any:
        if self.in_flight is not None and requests:
            live = self.in_flight.abounded(requests[0].provider, live)
        results = await self.inner.acall_batch(requests, live)
        self._note(requests, results)
        return results

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def as_gateway(self) -> Gateway:
        """This tap where a `Gateway` is expected: it serves the same four call methods and forwards everything
        else to the gateway it wraps, so it stands in for one (the one place that duck typing is declared)."""
        return cast(Gateway, self)


def open_gateway(request: RunRequest, services: RunServices, run_id: str, arm: str, slice_name: str) -> Gateway:
    if services.gateway_factory is not None:
        return services.gateway_factory(request, services, run_id, arm, slice_name)
    if not services.use_local_cache:
        return Gateway(
            local=None,
            subsets=list(services.subsets or ()),
            mode=check_mode(request.mode),
            strict=request.strict,
            labels=RunLabels(run_id=run_id, arm=arm, slice_name=slice_name),
            replicate=request.replicate,
        )
    return Gateway.from_env(
        mode=check_mode(request.mode),
        strict=request.strict,
        run_id=run_id,
        arm=arm,
        slice_name=slice_name,
        subsets=services.subsets,
        cache_dir=services.cache_dir,
        replicate=request.replicate,
    )


def embedder_of(services: RunServices) -> Any:
    return services.embedder if services.embedder is not None else shared_minilm()


def answer_all(
    asked: list[Asked],
    k: int | None,
    the_slice: Slice,
    stack: Stack,
    gateway: KeyTap,
    embedder: Any,
    concurrency: int | None,
    progress_shown: bool,
    ran: dict[str, str],
    pool: Executor | None = None,
) -> list[Answer]:
    """Answer, judge and count tokens for every asked question at k on `pool` (the run's, shared by the parts of a
    pooled slice; None: one of this call's own), `concurrency` (--concurrency) at a time; `ran` receives the
    models that served."""
    in_flight = calls_in_flight(stack, concurrency)
    models = Models(stack.refs, with_concurrency(stack, concurrency), gateway.as_gateway(), lambda: embedder)
    answerer, judge_model, counter = models.answerer(), models.judge(), models.token_counter()
    ran.update(models.ran)
    speaker_of = {m.id: m.speaker for m in the_slice.messages}
    message_ids = set(speaker_of)

    def one(item: Asked) -> Answer:
        return _answer_one(item, k, the_slice, answerer, judge_model, counter, speaker_of, message_ids)

    try:
        with progress_bars(progress_shown) as progress, _own_pool(pool, in_flight) as answering:
            task = progress.add_task(f"answer + judge (k={k if k is not None else 'all'})", total=len(asked))
            records = []
            for record in answering.map(one, asked):  # map keeps slice order whatever finishes first
                records.append(record)
                progress.advance(task)
    finally:
        models.close()
    return records


@contextmanager
def _own_pool(shared: Executor | None, workers: int) -> Iterator[Executor]:
    if shared is not None:
        yield shared
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="answer") as pool:
        yield pool


def _answer_one(
    item: Asked,
    k: int | None,
    the_slice: Slice,
    answerer: Any,
    judge_model: Any,
    counter: Any,
    speaker_of: Mapping[str, str],
    message_ids: set[str],
) -> Answer:
    question = item.question
    shown = item.retrievals[k]
    gold = _gold(question)
    line_speakers = [speaker_of.get(sources[0]) if sources else None for sources in shown.sources]
    reply = answerer.answer(
        question.question, list(shown.lines), the_slice.speakers, line_speakers, asked_on=question.asked_on
    )
    # LongMemEval's questions get its own judge templates and session recall (smallest hook; rules live there)
    verdict = longmemeval_judge.judge(
        judge_model, question.category_name, question.id, question.question, gold, reply.text
    )
    evidence = [e for e in question.evidence if e in message_ids]  # set-2 evidence is prose, not message ids
    f1, scores = scoring.llm_free_scores(reply.text, gold, question.category_name)
    scores = {**(scores or {}), **retrieval_scores(question.extra, shown.sources)} or scores
    return Answer(
        question_id=question.id,
        conversation=question.conversation,
        category=question.category_name,
        scored=item.scored,
        question=question.question,
        gold=str(gold),
        answer=reply.text,
        label=verdict.label,
        f1=f1,
        scores=scores,
        evidence_recall=judge.evidence_recall(shown.sources, evidence) if evidence else None,
        # A system that ignores k shows the whole transcript so far: the lines are the slice itself, and keeping
        # them would make every held-out file tens of megabytes of repeated conversation. lines_shown still counts.
        lines=None if shown.notes.get("k_ignored") else list(shown.lines),
        sources=None if shown.notes.get("k_ignored") else [list(s) for s in shown.sources],
        evidence=evidence if question.evidence else None,
        lines_shown=len(shown.lines),
        retrieved_tokens=tokens.retrieved_tokens(counter, shown.lines),
        checkpoint=item.checkpoint,
        tier=question.tier,
        expected=question.expected,
        type=question.type,
    )


def result_metrics(stack: Stack, k: int | None) -> dict[str, Any]:
    """The `metrics` block of a run's result: the LLM-free metrics, the stack's judge, evidence recall at k."""
    judge_name = judge_metric_for(stack.models)
    return scoring.metrics_block(judge_name, scoring.evidence_recall_metric(k))


def _gold(question: SliceQuestion) -> Any:
    if question.gold is None and question.category_name == "adversarial":
        return question.extra.get("adversarial_answer", "Not mentioned")
    return question.gold
