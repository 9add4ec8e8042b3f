"""Re-judge stored answers with another judge (behind `engram-bench rejudge`): judge sensitivity without re-running
any system.

A re-judging reads a result file, sends every stored answer (question, gold, answer text) to the chosen judge, and
writes a NEW result file that points at the original: `provenance.origin = "rejudge"`, the original as its source
(path and sha256), and `extras.rejudge` = {of, sha256, judge_before, judge}. Only the labels, the accuracy blocks
derived from them, the judge's model and stand-in flag, and the judge's entry in `metrics` change; answers, F1,
BLEU-1, evidence recall, costs and store figures are the original's. The original is never modified.

Judges: `lexical` (the offline lexical stand-in, $0, no key), or a judge prompt, `mem0-lenient` (mem0's LoCoMo
prompt, the article's) or `strict` (ours), sent to the judge model of `--stack` (e.g. `paper`: claude-sonnet-4-6;
through the gateway, so a recorded judging replays from the cache). `compare ORIGINAL REJUDGED` then reports how
far the two judgings agree (bench.analysis.metric_compare.judge_agreement).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.analysis.gold import LABELS_GOLD_KEY, under_gold
from bench.data.audit import OFFICIAL, check_gold
from bench.errors import ConfigError, ResultError
from bench.models.embeddings import shared_minilm
from bench.models.gateway import Gateway
from bench.models.judge import DEFAULT_JUDGE_PROMPT, JUDGE_PROMPTS
from bench.models.provider import judge_metric_for
from bench.models.providers import Models
from bench.models.stacks import OFFLINE_STACK, build_stack
from bench.results.schema import Provenance, Result, Source, read_result, tally_answers, tally_by_category, write_result
from bench.vocab import JUDGE, REPO_ROOT

ORIGIN_REJUDGE = "rejudge"
LEXICAL = "lexical"
CONCURRENCY = 6


@dataclass(frozen=True)
class JudgeChoice:
    """Which judge re-judges: the stack whose judge model is used and the prompt it gets."""

    name: str  # lexical | mem0-lenient | strict
    stack: str
    prompt: str


def judge_choice(name: str, stack: str | None, command: str = "rejudge") -> JudgeChoice:
    """The judge `--judge NAME [--stack S]` names; `command` is the one whose options these are, for the error."""
    if name == LEXICAL:
        if stack not in (None, OFFLINE_STACK):
            raise ConfigError(
                f"{command} --judge lexical: the lexical stand-in is the offline stack's, found --stack {stack}"
            )
        return JudgeChoice(LEXICAL, OFFLINE_STACK, DEFAULT_JUDGE_PROMPT)
    if name not in JUDGE_PROMPTS:
        raise ConfigError(
            f"{command} --judge: expected {LEXICAL} or a judge prompt ({', '.join(JUDGE_PROMPTS.names())}), "
            f"found {name!r}"
        )
    if stack in (None, OFFLINE_STACK):
        raise ConfigError(
            f"{command} --judge {name}: a judge prompt needs a language-model judge; the offline stack's is the lexical "
            "stand-in. Name one with --stack (e.g. --stack paper)"
        )
    return JudgeChoice(name, stack, name)


def judge_bills(choice: JudgeChoice) -> bool:
    """Whether the chosen judge's calls cost money: its stack's judge role is served by a paid provider (a server
    declared `paid = false`, such as the local stack's, bills nothing)."""
    stack = build_stack(choice.stack)
    return stack.refs["judge"].provider in stack.paid_providers


def slug(choice: JudgeChoice) -> str:
    return LEXICAL if choice.name == LEXICAL else f"{choice.stack}-{choice.prompt}"


def output_path(original: Path, out_root: Path, choice: JudgeChoice) -> Path:
    """`<out>/<judge slug>/<the original's path under the checkout, or its name>`: side by side with its peers."""
    try:
        relative = original.resolve().relative_to(REPO_ROOT)
    except ValueError:
        relative = Path(original.name)
    return out_root / slug(choice) / relative


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def judge_entry(result: Result) -> str | None:
    """The name of the judge metric a result's labels carry (`judge:<model>:<prompt>`), if it has one."""
    return next((name for name in sorted(result.metrics) if name.startswith(f"{JUDGE}:")), None)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def check_judgeable(path: Path, result: Result) -> None:
    """Every answer needs its text: a judge cannot grade an answer the file does not hold."""
    for i, answer in enumerate(result.answers):
        if answer.answer is None:
            raise ResultError(f"{path}: field answers[{i}].answer: expected the answer text to judge, found null")


def rejudged(path: Path, result: Result, judge: Any, judge_model: str, judge_name: str, standin: bool) -> Result:
    """The result with every answer judged again by `judge` (`.judge(question, gold, answer)` -> Judgement)."""
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        verdicts = list(pool.map(lambda a: judge.judge(a.question, a.gold, a.answer), result.answers))
    answers = [replace(a, label=v.label) for a, v in zip(result.answers, verdicts, strict=True)]
    before = judge_entry(result)
    metrics = {name: entry for name, entry in result.metrics.items() if name != before}
    metrics[judge_name] = {"field": "answers[].label"}
    standins = sorted({*result.standins} - {"judge"} | ({"judge"} if standin else set()))
    source = Source(path=_display(path), sha256=_sha256(path), license="as the original's")
    extras = {
        **result.extras,
        "rejudge": {"of": _display(path), "sha256": source.sha256, "judge_before": before, "judge": judge_name},
    }
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return replace(
        result,
        answers=answers,
        accuracy=tally_answers(answers),
        accuracy_by_category=tally_by_category(answers),
        models={**result.models, "judge": judge_model},
        standins=standins,
        metrics=metrics,
        provenance=Provenance(origin=ORIGIN_REJUDGE, sources=[source]),
        extras=extras,
        timing=replace(result.timing, started_at=now, finished_at=now, wall_s=None),
    )


@dataclass(frozen=True)
class OpenedJudge:
    """A judge built for one stack, with the `provider/model` that serves it and the metric its labels carry."""

    judge: Any
    model: str
    metric: str
    standin: bool


@contextmanager
def opened_judge(choice: JudgeChoice, mode: str | None, run_id: str, arm: str) -> Iterator[OpenedJudge]:
    """The chosen judge on its own gateway (cached, replayable, budgeted like every call), closed on exit."""
    stack = build_stack(choice.stack)
    gateway = Gateway.from_env(mode=mode, run_id=run_id, arm=arm)  # type: ignore[arg-type]
    models = Models.for_stack(choice.stack, stack.models, gateway, shared_minilm)
    try:
        judge = models.judge(choice.prompt)
        model = models.ran["judge"]
        yield OpenedJudge(judge, model, judge_metric_for({"judge": model}, choice.prompt), models.is_standin("judge"))
    finally:
        models.close()
        gateway.close()


def rejudge_files(
    paths: Sequence[Path], choice: JudgeChoice, out_root: Path, mode: str | None = None, gold: str = "official"
) -> list[tuple[Path, Result]]:
    """Judge every file again; every file is read and checked before the first judge call, and all are judged
    before the first is written (a failure leaves nothing half-written). `gold` (bench.analysis.gold): the judge
    grades against that gold's answers, and the new file says its labels follow it (`extras.labels_gold`)."""
    check_gold(gold)
    loaded = [(path, under_gold(read_result(path), gold)) for path in paths]
    for path, result in loaded:
        check_judgeable(path, result)
    folder = out_root if gold == OFFICIAL else out_root / f"gold-{gold}"
    targets = [output_path(path, folder, choice) for path, _ in loaded]
    for (path, _), target in zip(loaded, targets, strict=True):
        if target.resolve() == path.resolve():
            raise ResultError(
                f"{path}: expected a re-judging to go to a new file, found --out pointing at the original"
            )
    with opened_judge(choice, mode, run_id=f"rejudge-{slug(choice)}", arm="rejudge") as opened:
        out = [
            (target, rejudged(path, result, opened.judge, opened.model, opened.metric, opened.standin))
            for (path, result), target in zip(loaded, targets, strict=True)
        ]
    if gold != OFFICIAL:
        out = [(t, replace(r, extras=_labels_follow(r.extras, gold, LABELS_GOLD_KEY))) for t, r in out]
    for target, result in out:
        write_result(target, result)
    return out


def _labels_follow(extras: dict[str, Any], gold: str, key: str) -> dict[str, Any]:
    """The extras of a file whose labels were just given against `gold`: said once at the top and in its gold block."""
    block = extras.get("gold")
    updated = {**extras, key: gold}
    if isinstance(block, dict) and "labels" in block:
        updated["gold"] = {**block, "labels": gold}
    return updated
