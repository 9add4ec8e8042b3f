"""A plan's figures per role (bench.run.plan): how many calls, how many the caches hold, the input and output tokens
of the rest and their price from the stack file, each with the basis it was taken on."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.data.slices import Slice, SliceMessage
from bench.models import budget, judge
from bench.models.budget import estimate_input_tokens
from bench.models.provider import is_standin
from bench.models.stacks import Stack
from bench.results.schema import Answer
from engram import config

PROMPT_OUTPUT_TOKENS = {"answer": judge.ANSWER_MAX_TOKENS, "judge": judge.JUDGE_MAX_TOKENS}


@dataclass(frozen=True)
class RoleEstimate:
    role: str
    model: str
    calls: int | None  # None: not estimated (the plan says why in `basis`)
    cached: int
    input_tokens: int | None  # of the calls still to send
    output_tokens: int | None
    usd: float | None
    basis: str

    @property
    def to_send(self) -> int | None:
        return None if self.calls is None else max(0, self.calls - self.cached)

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "model": self.model,
            "calls": self.calls,
            "cached": self.cached,
            "to_send": self.to_send,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": self.usd,
            "basis": self.basis,
        }


def price_of(stack: Stack, role: str, endpoint: str = "") -> budget.Price:
    ref = stack.ref(role)
    return budget.price_for(ref.provider, ref.model, endpoint)


def estimate_role(
    role: str, stack: Stack, calls: int | None, cached: int, per_call_in: float | None, per_call_out: int, basis: str
) -> RoleEstimate:
    model = str(stack.ref(role))
    if calls is None:
        return RoleEstimate(role, model, None, 0, None, None, None, basis)
    cached = min(cached, calls)
    to_send = calls - cached
    if is_standin(stack.ref(role).provider):
        return RoleEstimate(role, model, calls, cached, 0, 0, 0.0, f"{basis}; stand-in, $0")
    if per_call_in is None:
        return RoleEstimate(role, model, calls, cached, None, None, None, f"{basis}; request size not known")
    input_tokens, output_tokens = math.ceil(per_call_in * to_send), per_call_out * to_send
    usd = price_of(stack, role).cost_usd(input_tokens, output_tokens)
    return RoleEstimate(role, model, calls, cached, input_tokens, output_tokens, usd, basis)


def write_role(
    role: str, stack: Stack, write_calls: Counter[str] | None, earlier: Counter[str], the_slice: Slice, basis: str
) -> RoleEstimate:
    if write_calls is None:
        return estimate_role(role, stack, None, 0, None, 0, basis)  # basis: why the calls are not counted
    calls = write_calls.get(role, 0)
    per_call: float | None = None
    output = 0
    if role == "extract" and calls:
        per_call, output = extract_tokens(the_slice.messages), engram_config().UPDATE_MAX_TOKENS
    elif role in ("escalate", "llm_decider") and calls:
        per_call, output = update_prompt_tokens(), engram_config().UPDATE_MAX_TOKENS
    return estimate_role(role, stack, calls, earlier.get(role, 0), per_call, output, basis)


def question_role(
    role: str,
    stack: Stack,
    asked: Sequence[tuple[Any, int, Slice]],
    ks: tuple[int | None, ...],
    reference: dict[tuple[str, int], Answer],
    earlier: Counter[str],
) -> RoleEstimate:
    calls = len(asked) * len(ks)
    if role == "count_tokens":
        # the empty block is counted once; counting endpoints and local counters bill nothing
        calls += 1 if calls else 0
        model = str(stack.ref(role))
        price = price_of(stack, role, "count_tokens")
        free = price.input_per_mtok == 0 and price.output_per_mtok == 0
        cached = min(earlier.get(role, 0), calls)
        if free:
            return RoleEstimate(role, model, calls, cached, 0, 0, 0.0, "one per answer + the empty block; $0")
        return estimate_role(role, stack, calls, cached, None, 0, "one per answer + the empty block")
    sizes = []
    for question, checkpoint, part in asked:
        seen = reference.get((question.id, checkpoint))
        if role == "answer":
            lines = list(seen.lines or []) if seen is not None else []
            prompt = judge.render_answer_prompt(
                question.question, judge.memories_by_speaker(lines, None, part.speakers)
            )
            extra = seen.retrieved_tokens if seen is not None and seen.lines is None else 0
            sizes.append(estimate_input_tokens({"system": prompt, "q": question.question}) + (extra or 0))
        else:
            answer = seen.answer if seen is not None and seen.answer else ""
            sizes.append(estimate_input_tokens(judge.render_judge_prompt(question.question, question.gold, answer)))
    per_call = math.fsum(sizes) / len(sizes) if sizes else 0.0
    basis = "one per question per k" + ("; prompts with the offline run's lines" if reference else "; prompt only")
    return estimate_role(role, stack, calls, earlier.get(role, 0), per_call, PROMPT_OUTPUT_TOKENS[role], basis)


def engram_config() -> Any:
    return config


def extract_tokens(messages: Sequence[SliceMessage]) -> float:
    """Mean input of mem0's extraction request per message: its prompt, the message and the ones before it."""
    # local import: mem0's system module is a plug-in the systems registry imports by name (bench.systems.base)
    from bench.systems.mem0_system import mem0_prompts

    prompt = estimate_input_tokens(mem0_prompts().ADDITIVE_EXTRACTION_PROMPT)
    previous = engram_config().EXTRACT_PREVIOUS_MESSAGES
    lines = [f"[{m.session_date}] {m.speaker}: {m.text}" for m in messages]
    sizes = [estimate_input_tokens(lines[max(0, i - previous) : i + 1]) for i in range(len(lines))]
    return prompt + (math.fsum(sizes) / len(sizes) if sizes else 0.0)


def update_prompt_tokens() -> float:
    # local import: mem0's system module is a plug-in the systems registry imports by name (bench.systems.base)
    from bench.systems.mem0_system import mem0_prompts

    return float(estimate_input_tokens(mem0_prompts().DEFAULT_UPDATE_MEMORY_PROMPT))
