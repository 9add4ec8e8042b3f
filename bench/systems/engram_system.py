"""engram under test: `engram.Engram` with the arm's flags, its models wired through the gateway per stack.

Settings (an arm's `[settings]` table):
- `preset`: the flag set to start from: "E4_FROZEN" (the frozen held-out system, = the article's flags),
  "E2" (the dev-table decision-layer arms), "ORIGINAL_FROZEN" (E4_FROZEN with the original code's quirks that
  change results, for replicating v1 numbers);
- `relation_decider`: "typed" (the decision model answers one relation question per candidate) or "llm_update"
  (the LLM-decider arm: one mem0 update-prompt call per extracted fact; the six fact questions stay typed);
- any field of `engram.Flags` (e.g. `retrieval_rerank = false`), overriding the preset.

Who serves each role: the stack's models, built by `context.hub` (the provider registry): `extract` (an
`Extractor`: mem0's additive prompt on a chat model, or the rules stand-in), `decide` (the typed questions' decision
backend: Jev, the rules stand-in, or the logprob decider on an OpenAI-compatible model), `escalate` (the chat model
answering mem0's update prompt) and, with relation_decider "llm_update", `llm_decider` (the chat model that decides
relations; the typed fact questions stay on `decide`, as in the v1 `e2_llm` arm).

Lines are engram's rendered lines (`engram.Line`), cut to the first k after the whole read path; each line's
sources are the source messages of its fact and of the facts in its same_as cluster.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bench.results.trace import jsonable
from bench.systems.base import AuditFact, RetrievedLines, Setting, System, SystemContext, WriteUsage, register_system
from engram import Engram, Flags, Mem0UpdateEscalator
from engram.deciders import LLMRelationDecider

if TYPE_CHECKING:
    from bench.data.slices import SliceMessage, SliceQuestion
    from bench.models.providers import Models
    from engram import DecisionBackend, Engram, Extractor

PRESETS = ("E4_FROZEN", "E2", "ORIGINAL_FROZEN")
# What each preset is, in one line (`engram-bench arms` prints the ones its arms use).
PRESET_DESCRIPTIONS = {
    "E4_FROZEN": "the frozen held-out system, the article's flags: belief, three gates, same_as links, reranking",
    "E2": "the earlier write policy of the dev-table arms: no belief or gates, close on a confident superseding "
    "answer, duplicates merged into the stored text",
    "ORIGINAL_FROZEN": "E4_FROZEN with the original code's result-changing quirks, for replicating the v1 numbers",
}
RELATION_DECIDERS = ("typed", "llm_update")


def _flag_settings() -> tuple[Setting, ...]:
    """One setting per `engram.Flags` field; its default None means "the preset's value"."""
    hints = typing.get_type_hints(Flags)
    settings = []
    for field in dataclasses.fields(Flags):
        hint = hints[field.name]
        choices = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else None
        kind = type(choices[0]) if choices else hint
        settings.append(Setting(field.name, kind, None, "engram flag (default: the preset's value)", choices))
    return tuple(settings)


def flags_for(settings: dict[str, Any]) -> Any:
    """The Flags an arm resolves to: the preset, then every flag the arm sets."""
    preset = {"E4_FROZEN": Flags.frozen, "E2": Flags.e2, "ORIGINAL_FROZEN": Flags.original_frozen}
    overrides = {s.name: settings[s.name] for s in _flag_settings() if settings.get(s.name) is not None}
    return preset[settings["preset"]]().but(**overrides)


@register_system("engram")
class EngramSystem(System):
    SETTINGS = (
        Setting("preset", str, "E4_FROZEN", "flag set to start from", PRESETS),
        Setting("relation_decider", str, "typed", "who decides relations to candidates", RELATION_DECIDERS),
        *_flag_settings(),
    )

    @classmethod
    def write_roles(cls, settings: Mapping[str, Any]) -> tuple[str, ...] | None:
        llm = settings.get("relation_decider", "typed") == "llm_update"
        return ("extract", "decide", "escalate", *(("llm_decider",) if llm else ()))

    def __init__(self, settings: dict[str, Any], context: SystemContext) -> None:
        super().__init__(settings, context)

        self.flags = flags_for(self.settings)
        models = context.hub
        embedder = context.get_embedder()
        self.decider: DecisionBackend = models.decider()
        self.extractor: Extractor = models.extractor()
        self.escalator = Mem0UpdateEscalator(models.chat("escalate"), model=models.ref("escalate").model)
        self.relation_decider = self._relation_decider(models)
        context.run_dir.mkdir(parents=True, exist_ok=True)
        self.engram: Engram = Engram(
            context.run_dir / "engram.db",
            extractor=self.extractor,
            decider=self.decider,
            embedder=embedder,
            escalator=self.escalator,
            flags=self.flags,
            relation_decider=self.relation_decider,
        )

    def _relation_decider(self, models: Models) -> Any:
        if self.settings["relation_decider"] != "llm_update":
            return None

        return LLMRelationDecider(models.chat("llm_decider"), model=models.ref("llm_decider").model)

    # -- the System interface ----------------------------------------------------------------------------------

    def write(self, message: SliceMessage) -> WriteUsage:
        report = self.engram.add(message.text, speaker=message.speaker, when=message.timestamp, message_id=message.id)
        return WriteUsage(
            extract_cost_usd=report.extract_cost_usd,
            decision_cost_usd=report.decision_cost_usd,
            extract_ms=report.extract_ms,
            decision_ms=report.decide_ms,
            facts=report.facts_extracted,
            calls=len(report.extract_usage) + len(report.decision_usage),
        )

    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        result = self.engram.retrieve(question.question)
        shown = result.lines if k is None else result.lines[:k]
        return RetrievedLines(
            lines=tuple(line.text for line in shown),
            sources=tuple(self._sources(line.fact_id) for line in shown),
            cost_usd=result.cost_usd,
            latency_ms=result.latency_ms,
            notes={"degraded": result.degraded} if result.degraded else {},
            details=tuple({"fact_id": line.fact_id, "via": line.source, "score": line.score} for line in shown),
        )

    def _sources(self, fact_id: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(member.source_message_id for member in self.engram.same_as(fact_id)))

    def trace(self, fact_ids: Sequence[str]) -> dict[str, Any]:
        """`Engram.explain` for every shown fact, the facts of its same_as cluster and its whole superseded chain
        (the facts that closed it, and those it closed, transitively), as of the end of the run."""
        explained: dict[str, Any] = {}
        frontier = list(dict.fromkeys(fact_ids))
        while frontier:
            fact_id = frontier.pop()
            if fact_id in explained:
                continue
            record = self._explained(fact_id)
            explained[fact_id] = record
            fact = record["fact"]
            # A chain link in either direction is followed; a same_as member is explained but not walked from.
            chain = [fact.get("closed_by"), fact.get("refines"), *record.get("superseded", [])]
            frontier.extend(i for i in chain if i and i not in explained)
            for member in record.get("same_as", []):
                if member not in explained:
                    explained[member] = self._explained(member)
        return dict(sorted(explained.items()))

    def _explained(self, fact_id: str) -> dict[str, Any]:
        record = jsonable(self.engram.explain(fact_id))
        record.pop("belief_history", None)  # a filter of `history`; the trace keeps the history once
        record["decisions"] = [_decision_for_reading(d) for d in record["decisions"]]
        return record

    def stats(self) -> dict[str, Any]:
        raw = self.engram.stats()
        return {
            **{key: value for key, value in raw.items() if key not in ("closes", "flags")},
            "closes_by_reason": dict(sorted(raw["closes"].items())),
        }

    def facts_for_audit(self) -> list[AuditFact]:
        facts = self.engram.facts(valid_only=False)
        source_of = {f.id: f.source_message_id for f in facts}
        return [
            AuditFact(
                fact_id=f.id,
                text=f.text,
                source_message_id=f.source_message_id,
                active=f.is_open,
                closed_reason=f.closed_reason,
                closed_by=source_of.get(f.closed_by) if f.closed_by else None,
            )
            for f in facts
        ]

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "flags": self.flags.describe(),
            "extractor": {"name": self.extractor.name, "model": self.extractor.model},
            "decider": {"name": self.decider.name, "model": self.decider.model},
            "relation_decider": (
                None
                if self.relation_decider is None
                else {"name": self.relation_decider.name, "model": self.relation_decider.model}
            ),
            "escalator": {"model": self.context.hub.ran.get("escalate", str(self.context.hub.ref("escalate")))},
            "embedder": self.context.get_embedder().name,
            "line_format": '[said YYYY-MM-DD] <fact> [(no longer true since YYYY-MM-DD)] - "<source quote>"',
            "hygiene_pass": "not implemented by engram; the v1 frozen arm ran one before its last checkpoint",
        }

    def close(self) -> None:
        self.engram.close()  # the model clients belong to `context.hub`, closed by the runner


TRACE_DIGITS = 4  # probabilities in a trace are for reading; four decimals keep a held-out trace a few MB


def _decision_for_reading(decision: dict[str, Any]) -> dict[str, Any]:
    """A decision as the trace keeps it: question, every option with its probability (the keys of ``probs``), the
    choice, its target, and only the fields that say something (a fallback, an error, a proposed text, the tokens a
    logprob decision was read from); latency and nominal cost are in the result's figures already."""
    kept = {
        "question": decision["question"],
        "probs": {o: round(float(p), TRACE_DIGITS) for o, p in decision["probs"].items()},
        "chosen": decision["chosen"],
        "confidence": round(float(decision["confidence"]), TRACE_DIGITS),
        "model": decision["model"],
    }
    for name in ("target", "fallback", "error", "text", "scored"):
        if decision.get(name):
            kept[name] = decision[name]
    return kept
