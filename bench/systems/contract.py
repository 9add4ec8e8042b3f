"""The contract every memory system must pass: `engram-bench systems check NAME`.

Written against the `System` interface the runner uses, so one contract covers in-process systems, `http` and `mcp`
arms and adapters alike. On four short turns, each check says what it saw in one line:

- round trip: a question about one written turn gets a line sourced from that turn. A question that gets no line at
  all is asked once more as the turn's own name ("Odalys"): a server that matches text (a substring or keyword
  search) passes on that, and the line says the question itself found nothing, so its runs will retrieve little
  (the run's health counts the empty retrievals). This checks the plumbing, not the retrieval; a run never asks so;
- valid source ids: every source is the id of a turn written to that conversation;
- k respected: asked for one line, the system shows at most one;
- retrieved tokens: a protocol system's own count of the lines it returned is not 0 for lines (null: it does not
  count, and results use the harness's count, as the protocol says);
- reset isolation: a conversation built again from nothing holds nothing of its earlier turns (a stdio MCP server
  without a reset tool is built again in a fresh data dir, which is how a run resets it);
- replay: the same turns written again from nothing retrieve the same lines for the same question, so a replayed
  run sees what the recorded one saw (a line carrying a wall-clock time fails it: strip it with settings.strip);
- namespace isolation: a marker written for another conversation never comes back (the canary's rule);
- errors in one line: a protocol server answers a malformed request with a one-line error (http only).

The turns and questions are made up for the check (nothing from any dataset), in plain first-person English so an
extractor can find a fact in each.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.data.slices import SliceMessage, SliceQuestion
from bench.errors import BenchError, SystemFailed
from bench.models.budget import RunLabels
from bench.models.gateway import Gateway, check_mode
from bench.models.stacks import build_stack
from bench.systems.base import RetrievedLines, System, SystemContext, build_system

HOME = "contract-home"
ELSEWHERE = "contract-elsewhere"
TURNS = (
    ("Ines", "I just adopted a three-legged greyhound called Pistachio."),
    ("Bartholomew", "My sister Odalys moved to Reykjavik last spring for a glaciology job."),
    ("Ines", "We repainted our kitchen a saffron yellow over the weekend."),
    ("Bartholomew", "I am training for the Lisbon half marathon in October."),
)
ASKED_TURN = 1  # the round trip asks about Odalys
ROUND_TRIP_QUESTION = "Where did Odalys move to?"
ROUND_TRIP_KEYWORD = "Odalys"  # the asked turn's distinctive word: what a text-matching server can find
MARKER_TURN = ("Ines", "My hamster Quintessa sleeps inside a porcelain teapot.")
MARKER_WORD = "quintessa"
MARKER_QUESTION = "Where does the hamster sleep?"  # never the marker itself: a server may echo the query back
ROUND_TRIP_K = 4


@dataclass(frozen=True)
class Outcome:
    check: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.passed else 'FAIL'} {self.check}: {self.detail}"


def turn(conversation: str, index: int, speaker: str, text: str) -> SliceMessage:
    return SliceMessage(
        id=f"C{index + 1}:1" if conversation == HOME else f"X{index + 1}:1",
        conversation=conversation,
        session=1,
        index=index,
        speaker=speaker,
        text=text,
        session_date=f"10:0{index} am on 3 March, 2031",
        timestamp=datetime(2031, 3, 3, 10, index),
    )


def question(conversation: str, text: str, n: int) -> SliceQuestion:
    return SliceQuestion(
        id=f"contract-q{n}",
        conversation=conversation,
        question=text,
        gold=None,
        category=0,
        category_name="",
        evidence=(),
        scored=False,
        asked_at=(1,),
    )


Builder = Callable[[str, Path], System]


def context_builder(system: str, settings: Mapping[str, Any], stack: str, gateway: Any) -> Builder:
    """Builds the named system for one conversation, on `stack`, its model calls through `gateway`."""
    models = build_stack(stack).models

    def build(conversation: str, run_dir: Path) -> System:
        run_dir.mkdir(parents=True, exist_ok=True)
        context = SystemContext(
            stack=stack,
            models=models,
            gateway=gateway,
            run_dir=run_dir,
            conversation=conversation,
            speakers=("Ines", "Bartholomew"),
            ks=(ROUND_TRIP_K, 1),  # the k values the checks ask at
        )
        return build_system(system, settings, context, where="settings")

    return build


@contextlib.contextmanager
def offline_gateway(cache_dir: Path | None, mode: str | None = None) -> Iterator[Any]:
    """A gateway over a cache of the check's own (its calls are recorded there, never in a run's cache); `mode` as
    `run --mode` (record: send a live model server the calls a local stack makes)."""
    with tempfile.TemporaryDirectory(prefix="engram-check-") as scratch:
        gateway = Gateway(
            local=cache_dir or Path(scratch) / "cache",
            subsets=[],
            mode=check_mode(mode),
            labels=RunLabels(run_id="systems-check"),
        )
        try:
            yield gateway
        finally:
            gateway.close()


def run_contract(build: Builder, work_dir: Path, *, reuse_dir: bool) -> list[Outcome]:
    """Every check, in order; a system that fails to start fails the round trip and the checks stop there.

    `reuse_dir`: the reset check builds the conversation again in the same folder, so a server whose store lives
    on disk must empty it itself (protocol systems, whose reset is theirs); an in-process system always gets a fresh
    folder from the runner, so it gets one here too."""
    outcomes: list[Outcome] = []
    home = [turn(HOME, i, speaker, text) for i, (speaker, text) in enumerate(TURNS)]
    written = {m.id for m in home}

    def attempt(name: str, body: Callable[[], Outcome]) -> bool:
        try:
            outcome = body()
        except BenchError as exc:
            outcome = Outcome(name, False, str(exc))
        outcomes.append(outcome)
        return outcome.passed

    with contextlib.ExitStack() as stack:
        system_holder: dict[str, System] = {}

        def first() -> Outcome:
            system = build(HOME, work_dir / "home-1")
            stack.callback(system.close)
            system_holder["home"] = system
            for message in home:
                system.write(message)
            outcome, found, asked = _round_trip(system, home[ASKED_TURN].id)
            system_holder["found"] = found  # type: ignore[assignment]
            system_holder["asked"] = asked  # type: ignore[assignment]
            return outcome

        if not attempt("round trip", first):
            if "home" not in system_holder:
                return outcomes
        system = system_holder["home"]
        found: RetrievedLines = system_holder.get("found")  # type: ignore[assignment]
        asked: str = system_holder.get("asked", ROUND_TRIP_QUESTION)  # type: ignore[assignment]
        if found is not None:
            outcomes.append(_sources_valid(found, written))
            outcomes.append(_tokens(system, found))
        attempt("k respected", lambda: _k_respected(system))
        attempt("namespace isolation", lambda: _namespace_isolation(build, system, work_dir, stack))
        attempt("errors in one line", lambda: _errors_one_line(system))
        stack.close()
        # A server whose own reset is a fresh data dir (no reset tool) is reset the way a run resets it.
        reuse = reuse_dir and not getattr(system, "resets_by_fresh_dir", False)
        again = work_dir / ("home-1" if reuse else "home-2")
        attempt("reset isolation", lambda: _reset_isolation(build, again, written, asked))
        if found is not None:
            attempt("replay", lambda: _replay(build, work_dir / "home-replay", home, found, asked))
    return outcomes


def _round_trip(system: System, asked_id: str) -> tuple[Outcome, RetrievedLines, str]:
    """The round trip's outcome, the lines it judged and the query that got them (the later checks ask it again:
    for a text-matching server the question finds nothing, before a reset or after it alike, which proves nothing)."""
    found = system.retrieve(question(HOME, ROUND_TRIP_QUESTION, 1), ROUND_TRIP_K)
    sourced = _sourced(found, asked_id)
    if sourced:
        return (
            Outcome("round trip", True, f"{len(found.lines)} lines, one from the asked turn: {sourced[0]!r}"),
            found,
            ROUND_TRIP_QUESTION,
        )
    if found.lines:  # lines, none of them the asked turn's: a wrong source or a wrong store, not a way of searching
        return _round_trip_failed(found, asked_id, ROUND_TRIP_QUESTION), found, ROUND_TRIP_QUESTION
    by_word = system.retrieve(question(HOME, ROUND_TRIP_KEYWORD, 7), ROUND_TRIP_K)
    sourced = _sourced(by_word, asked_id)
    if not sourced:
        return (
            _round_trip_failed(by_word, asked_id, f"{ROUND_TRIP_QUESTION!r} (no lines), then {ROUND_TRIP_KEYWORD!r}"),
            found,
            ROUND_TRIP_QUESTION,
        )
    detail = (
        f"found only by its keyword {ROUND_TRIP_KEYWORD!r} ({sourced[0]!r}); the question {ROUND_TRIP_QUESTION!r} "
        "itself found nothing: this server matches text, so a run's questions will retrieve little"
    )
    return Outcome("round trip", True, detail), by_word, ROUND_TRIP_KEYWORD


def _sourced(found: RetrievedLines, asked_id: str) -> list[str]:
    return [line for line, s in zip(found.lines, found.sources, strict=True) if asked_id in s]


def _round_trip_failed(found: RetrievedLines, asked_id: str, asked: str) -> Outcome:
    return Outcome(
        "round trip",
        False,
        f"wrote {len(TURNS)} turns; asked {asked} about {asked_id} at k={ROUND_TRIP_K}, got "
        f"{len(found.lines)} lines sourced from {sorted({s for ids in found.sources for s in ids})}",
    )


def _sources_valid(found: RetrievedLines, written: set[str]) -> Outcome:
    named = {s for ids in found.sources for s in ids}
    stray = sorted(named - written)
    if stray:
        return Outcome("valid source ids", False, f"sources {stray} were never written to this conversation")
    return Outcome("valid source ids", True, f"{len(named)} distinct sources, all written turns")


def _tokens(system: System, found: RetrievedLines) -> Outcome:
    if "system_retrieved_tokens" not in found.notes:
        return Outcome("retrieved tokens", True, "counted by the harness (the system's interface has no count)")
    count = found.notes["system_retrieved_tokens"]
    if count is None:
        # null is the protocol's "not counted" (docs/memory-protocol.md): results count with the harness's counter
        return Outcome("retrieved tokens", True, "null: the system does not count; the harness's count is used")
    if found.lines and count == 0:
        return Outcome("retrieved tokens", False, f"{len(found.lines)} lines reported as 0 tokens")
    return Outcome("retrieved tokens", True, f"{count} tokens reported for {len(found.lines)} lines")


def _k_respected(system: System) -> Outcome:
    found = system.retrieve(question(HOME, "What colour is the kitchen?", 2), 1)
    if len(found.lines) > 1:
        return Outcome("k respected", False, f"asked for k=1, got {len(found.lines)} lines")
    return Outcome("k respected", True, f"asked for k=1, got {len(found.lines)}")


def _namespace_isolation(build: Builder, home: System, work_dir: Path, stack: contextlib.ExitStack) -> Outcome:
    other = build(ELSEWHERE, work_dir / "elsewhere")
    stack.callback(other.close)
    other.write(turn(ELSEWHERE, 0, *MARKER_TURN))
    mine = other.retrieve(question(ELSEWHERE, MARKER_QUESTION, 3), ROUND_TRIP_K)
    found = home.retrieve(question(HOME, MARKER_QUESTION, 4), ROUND_TRIP_K)
    leaked = [line for line in found.lines if MARKER_WORD in line.lower()]
    if leaked:
        return Outcome("namespace isolation", False, f"another conversation's marker came back: {leaked[0]!r}")
    kept = any(MARKER_WORD in line.lower() for line in mine.lines)
    return Outcome(
        "namespace isolation",
        True,
        "the marker stayed in its own conversation" + ("" if kept else " (it did not come back there either)"),
    )


def _errors_one_line(system: System) -> Outcome:
    client = getattr(system, "client", None)
    if client is None:
        return Outcome("errors in one line", True, "not a protocol server (its errors are the harness's own)")
    try:
        client.call("POST", "/write", {"namespace": HOME, "id": "C9:1"}, " (malformed on purpose)")
    except SystemFailed as exc:
        text = str(exc)
        if "answered HTTP 4" in text and "\n" not in text:
            return Outcome("errors in one line", True, f"a write without text was refused: {text.split(': ', 2)[-1]}")
        return Outcome("errors in one line", False, f"expected a 4xx with one line, found: {text}")
    return Outcome("errors in one line", False, "a write without speaker, date or text was accepted (HTTP 2xx)")


def _replay(build: Builder, folder: Path, home: list[SliceMessage], first: RetrievedLines, asked: str) -> Outcome:
    again = build(HOME, folder)
    try:
        for message in home:
            again.write(message)
        found = again.retrieve(question(HOME, asked, 6), ROUND_TRIP_K)
    finally:
        again.close()
    if found.lines == first.lines:
        return Outcome("replay", True, f"the same {len(found.lines)} lines from the same turns written again")
    differ = next(
        ((a, b) for a, b in zip(first.lines, found.lines, strict=False) if a != b),
        (f"{len(first.lines)} lines", f"{len(found.lines)} lines"),
    )
    return Outcome(
        "replay",
        False,
        f"the same turns written again retrieved other lines: {differ[0]!r} then {differ[1]!r} "
        "(a volatile part, a time or a random id? remove it with settings.strip)",
    )


def _reset_isolation(build: Builder, folder: Path, written: set[str], asked: str) -> Outcome:
    again = build(HOME, folder)
    try:
        found = again.retrieve(question(HOME, asked, 5), ROUND_TRIP_K)
    finally:
        again.close()
    stale = [
        line for line, s in zip(found.lines, found.sources, strict=True) if set(s) & written or "odalys" in line.lower()
    ]
    if stale:
        return Outcome("reset isolation", False, f"after a reset the conversation still returned {stale[0]!r}")
    return Outcome("reset isolation", True, f"after a reset: {len(found.lines)} lines, none from before")
