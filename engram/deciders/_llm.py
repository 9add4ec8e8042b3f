"""mem0's update-memory prompt as a decision: the escalation call L(f, u*) and the LLM-decider arm.

Both send mem0 2.1.0's `DEFAULT_UPDATE_MEMORY_PROMPT` (imported from mem0 through `get_update_memory_messages`,
never retyped) as a single user message with no system prompt, on claude-sonnet-4-6 with max_tokens 2000 and
temperature 0.1, and map the returned events to engram's relations (`map_update_events`):

    any DELETE on a candidate  -> contradiction on it (engram closes, never deletes)
    else any UPDATE            -> rewrite of that candidate with the LLM's merged text
    else any ADD, or no candidates -> new
    else (all NONE)            -> duplicate of candidate 0

The answer is certain by construction (p = 1.0), so an LLM decision never escalates.

`RulesUpdateLLM` is an OFFLINE STAND-IN for the chat model: it answers only mem0's update prompt, by asking the
RulesDecider how each new fact relates to each old memory, so the LLM-decider arm and escalation run without a key.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engram import config
from engram._exceptions import LLMError
from engram._protocols import LLM
from engram._types import Ask, Completion, Decision, Question
from engram._write_state import LLM_DECIDER_BACKEND, REWRITE
from engram.deciders._rules import RulesDecider
from engram.questions import RELATION_TO_CANDIDATE


def _prompts() -> Any:
    os.environ.setdefault("MEM0_TELEMETRY", "False")  # read by mem0 at import time
    # local import: mem0 (the run extra) reads MEM0_TELEMETRY at import, set just above
    import mem0.configs.prompts as prompts

    return prompts


def update_prompt(existing: Sequence[str], new_facts: Sequence[str]) -> str:
    """mem0's update-memory user message: old memories with ids "0".."k-1", then the new facts."""
    old_memory = [{"id": str(i), "text": text} for i, text in enumerate(existing)]
    return _prompts().get_update_memory_messages(old_memory, list(new_facts))


def parse_events(reply: str) -> list[dict[str, Any]]:
    """The `memory` list of the reply: code fences stripped, then the outermost JSON object as a fallback."""
    # local import: mem0 is the run extra, which the analysis-only install lacks
    from mem0.memory.utils import extract_json, remove_code_blocks

    body = remove_code_blocks(reply)
    for candidate in (body, extract_json(body) if body else ""):
        try:
            data = json.loads(candidate, strict=False)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("memory"), list):
            return [e for e in data["memory"] if isinstance(e, dict)]
    return []


@dataclass(frozen=True)
class UpdateVerdict:
    """An update-prompt call mapped to engram: the relation, which candidate it is about, the merged text for a
    rewrite, the raw events and the completion (for usage)."""

    relation: str  # contradiction | rewrite | new | duplicate
    target_index: int | None
    text: str | None
    events: tuple[dict[str, Any], ...] = ()
    completion: Completion | None = None
    parsed: bool = True  # False: the reply held no readable memory list, and the verdict is the safe "new"


def map_update_events(events: Sequence[dict[str, Any]], n: int) -> tuple[str, int | None, str | None]:
    """(relation, candidate index, merged text) from mem0 events; priority DELETE > UPDATE > ADD > NONE.

    Only events whose id names a candidate ("0".."n-1") count for DELETE and UPDATE. An empty event list means
    the reply said nothing usable and maps to "new", the answer that touches no stored fact.
    """
    ids = {str(i): i for i in range(n)}

    def first(kind: str) -> dict[str, Any] | None:
        return next((e for e in events if str(e.get("event", "")).upper() == kind and str(e.get("id")) in ids), None)

    deleted = first("DELETE")
    if deleted is not None:
        return "contradiction", ids[str(deleted["id"])], None
    updated = first("UPDATE")
    if updated is not None:
        return REWRITE, ids[str(updated["id"])], str(updated.get("text", "") or "") or None
    if n == 0 or not events or any(str(e.get("event", "")).upper() == "ADD" for e in events):
        return "new", None, None
    return "duplicate", 0, None


def mem0_update_decision(
    llm: LLM, model: str, existing: Sequence[str], new: str, *, role: str = "escalate"
) -> UpdateVerdict:
    """One update-prompt call for one new fact against `existing` (the escalation target, or every candidate).

    Raises LLMError when the call fails; the caller keeps the fact tentative and closes nothing.
    """
    completion = llm.complete(
        role=role,
        model=model,
        system=None,
        messages=[{"role": "user", "content": update_prompt(existing, [new])}],
        max_tokens=config.UPDATE_MAX_TOKENS,
        temperature=config.UPDATE_TEMPERATURE,
    )
    events = parse_events(completion.text)
    relation, index, text = map_update_events(events, len(existing))
    return UpdateVerdict(relation, index, text, tuple(events), completion, parsed=bool(events))


@dataclass(frozen=True)
class RelationVerdict:
    """The LLM decider's answer for one extracted fact: a certain Decision about one candidate (or none)."""

    decision: Decision
    text: str | None  # the merged text when the relation is a rewrite
    verdict: UpdateVerdict | None  # None when no call was made (no candidates)


@dataclass
class LLMRelationDecider:
    """The LLM-decider arm (v1 `e2_llm`): one update-prompt call per extracted fact with ALL its candidates as the
    old memory, instead of one relation question per candidate. The six fact questions still go to the decision
    backend; only the relation is the LLM's.

    No candidates: `new` at p = 1.0 without a call. A failed call: `new` at p = 0.0, marked fallback, so the fact
    is stored tentative and nothing is closed.
    """

    llm: LLM
    model: str = config.LLM_MODEL
    question: Question = field(default=RELATION_TO_CANDIDATE)
    name: str = LLM_DECIDER_BACKEND

    def decide(self, new: str, candidates: Sequence[tuple[str, str]]) -> RelationVerdict:
        """`candidates` are (fact id, fact text), in the order given to the LLM as ids "0".."k-1"."""
        if not candidates:
            return RelationVerdict(self._certain("new", None, 1.0), None, None)
        try:
            verdict = mem0_update_decision(self.llm, self.model, [t for _, t in candidates], new, role="decide")
        except LLMError as error:
            failed = Decision(
                question=self.question.id,
                options=self.question.options,
                probs={},
                chosen="new",
                confidence=0.0,
                backend=self.name,
                model=self.model,
                fallback=True,
                error=str(error),
            )
            return RelationVerdict(failed, None, None)
        target = candidates[verdict.target_index][0] if verdict.target_index is not None else None
        completion = verdict.completion
        decision = self._certain(
            verdict.relation,
            target,
            1.0,
            text=verdict.text,
            # The model that answered (a stand-in names itself), not only the one requested.
            model=completion.model if completion and completion.model else self.model,
            latency_ms=completion.latency_ms if completion else 0.0,
            cost_usd=completion.cost_usd if completion else 0.0,
        )
        return RelationVerdict(decision, verdict.text, verdict)

    def _certain(
        self,
        relation: str,
        target: str | None,
        p: float,
        *,
        text: str | None = None,
        model: str | None = None,
        latency_ms: float = 0.0,
        cost_usd: float = 0.0,
    ) -> Decision:
        # `rewrite` is not an option of the relation question; it is carried as an extra option so the
        # distribution stays honest (all mass on what the LLM said).
        options = self.question.options if relation in self.question.options else (*self.question.options, relation)
        probs = {o: (p if o == relation else 0.0) for o in options}
        return Decision(
            question=self.question.id,
            options=options,
            probs=probs,
            chosen=relation,
            confidence=p,
            backend=self.name,
            model=model or self.model,
            target=target,
            latency_ms=latency_ms,
            cost_usd=cost_usd,
            text=text,
        )


# --------------------------------------------------------------------------------------------------------------
# the offline stand-in for the chat model
# --------------------------------------------------------------------------------------------------------------

_FENCED = re.compile(r"```\s*\n?(.*?)\n?\s*```", re.DOTALL)
# mem0's event for each rules relation: what the update prompt asks an LLM to do with that situation.
EVENT_OF_RELATION = {
    "new": "ADD",
    "duplicate": "NONE",
    "refinement": "UPDATE",
    "update": "UPDATE",
    "contradiction": "DELETE",
    "negates": "DELETE",
}
STANDIN_MODEL = "rules-update-standin-v1"


class RulesUpdateLLM:
    """OFFLINE STAND-IN implementing `engram._protocols.LLM` for mem0's update prompt only.

    It reads the old memories and new facts back out of the prompt, asks the RulesDecider's relation question for
    every (new fact, old memory) pair, and answers in mem0's JSON: the strongest non-`new` relation of each new fact
    decides its event (DELETE for contradiction/negates, UPDATE for update/refinement, NONE for duplicate), and a
    fact related to nothing is ADDed. Zero cost; the completion's model names the stand-in, not the requested LLM.
    """

    def __init__(self, decider: Any | None = None) -> None:
        if decider is None:
            decider = RulesDecider()
        self._decider = decider

    def complete(
        self,
        *,
        role: str,
        model: str,
        system: str | None,
        messages: list[dict],
        max_tokens: int,
        temperature: float | None = None,
    ) -> Completion:
        prompt = str(messages[-1].get("content", "")) if messages else ""
        old, new_facts = self._read_prompt(prompt)
        events = self._events(old, new_facts)
        return Completion(text=json.dumps({"memory": events}), model=STANDIN_MODEL)

    @staticmethod
    def _read_prompt(prompt: str) -> tuple[list[dict[str, str]], list[str]]:
        if "new retrieved facts" not in prompt:
            raise LLMError("RulesUpdateLLM answers only mem0's update-memory prompt; this prompt is something else")
        blocks = _FENCED.findall(prompt.split("Below is the current content of my memory", 1)[-1])
        try:
            if "Current memory is empty" in prompt:
                old, new = [], ast.literal_eval(blocks[0].strip())
            else:
                old, new = ast.literal_eval(blocks[0].strip()), ast.literal_eval(blocks[1].strip())
        except (IndexError, ValueError, SyntaxError) as error:
            raise LLMError(f"RulesUpdateLLM could not read the memories out of the prompt: {error}") from error
        return [{"id": str(m["id"]), "text": str(m["text"])} for m in old], [str(f) for f in new]

    def _events(self, old: list[dict[str, str]], new_facts: list[str]) -> list[dict[str, Any]]:
        events: dict[str, dict[str, Any]] = {m["id"]: {"id": m["id"], "text": m["text"], "event": "NONE"} for m in old}
        added: list[dict[str, Any]] = []
        for fact in new_facts:
            best_id, best_relation, best_p = None, "new", 0.0
            if old:
                asks = [
                    Ask(
                        f"r{m['id']}",
                        RELATION_TO_CANDIDATE,
                        refs={"existing_fact": {"text": m["text"]}},
                        target=m["id"],
                    )
                    for m in old
                ]
                answers = self._decider.ask({"new_fact": {"text": fact}, "source_message": fact}, asks)
                for memory in old:
                    decision = answers[f"r{memory['id']}"]
                    if decision.chosen != "new" and decision.confidence > best_p:
                        best_id, best_relation, best_p = memory["id"], decision.chosen, decision.confidence
            event = EVENT_OF_RELATION[best_relation]
            if best_id is None or event == "ADD":
                added.append({"id": str(len(old) + len(added)), "text": fact, "event": "ADD"})
            elif event == "UPDATE":
                events[best_id] = {
                    "id": best_id,
                    "text": fact,
                    "event": "UPDATE",
                    "old_memory": events[best_id]["text"],
                }
            elif event == "DELETE":
                events[best_id] = {"id": best_id, "text": events[best_id]["text"], "event": "DELETE"}
                added.append({"id": str(len(old) + len(added)), "text": fact, "event": "ADD"})
        return [*events.values(), *added]
