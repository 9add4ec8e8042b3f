"""Behaviour switches. Each field changes what engram does; its default is the article's behaviour.

Presets name the flag sets the harness's arms use:
- `Flags()` / `Flags.article()` / `Flags.frozen()`: the article's system (the v1 frozen arm's structure:
  belief, three gates, cosine+graph candidates, same_as links, plan question, temporal v2, reranking on) as the
  article's §3 describes it, where the original code differed.
- `Flags.original_frozen()`: the same with the original code's behaviour wherever it differs from the article and
  changes results (v2 "every answer counts" evidence, rechecks on every multi-valued update, lost belief updates
  between facts of one message, and `ORIGINAL_DEPARTURES`: worth in the zones, escalations unconfirmed, mem0's
  UPDATE as a rewrite, plan closes without g_T, one phrasing after the first evidence, history after the floor),
  for replicating the v1 numbers.
- `Flags.e2()`: the original's earlier "E2" write policy used by the `engram-jev` and `engram-llm-decider` arms: no
  belief, close on a confident current superseding answer, duplicates merged into the stored text, no gates, and
  the original's departures.
- `Flags.reranking_off()`: the frozen system with the read path's reranker switched off.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

# Where the original implementation departs from the article's text (each a flag below, the article's value the
# default): the original's values, shared by every preset that replicates the original's arms.
ORIGINAL_DEPARTURES: dict[str, Any] = {
    "worth_in_zones": True,
    "escalation_agreement": False,
    "mem0_update": "rewrite",
    "plan_temporal_gate": False,
    "recheck_every_against": False,
    "history_placement": "after",
}


@dataclass(frozen=True)
class Flags:
    # Write policy. "belief": the article's §3.2 (evidence in log-odds, close/reopen by belief).
    # "direct": the E2 policy (a confident, current superseding answer closes at once; nothing reopens).
    policy: Literal["belief", "direct"] = "belief"
    # v3 (article): an answer counts as evidence only when it is the argmax and pi > 0.5.
    # "all" is v2, where a weak duplicate answer (pi < 0.5) lowered belief.
    belief_evidence: Literal["argmax_gt_half", "all"] = "argmax_gt_half"
    # g_T. "not_planned_mass" (article): P(current) + P(past) >= theta_act. "current": chosen current at theta_act.
    temporal_gate: Literal["not_planned_mass", "not_planned", "current"] = "not_planned_mass"
    temporal_version: int = 2
    relation_version: int = 2
    cardinality_gate: bool = True  # g_C
    update_multi_sibling: bool = True  # g_C lets an update close a sibling on a multi-valued relation
    agreement_gate: bool = True  # g_A: the first evidence against a fact needs the second phrasing
    # The original also asked the second phrasing for every update on a multi-valued relation, not only the first.
    recheck_multi_valued_updates: bool = False
    graph_candidates: bool = True  # C(f) includes Top_10 G(f)
    plan_question: bool = True  # plan_fulfilled closes plans with closed_reason "fulfilled"
    merge_policy: Literal["same_as", "union"] = "same_as"  # duplicates: reversible link, or text merged (E1/E2)
    escalate: bool = True  # use the escalator (when one is given) for r* in S with pi* < theta_esc
    # Facts of one message apply their belief updates one after another (the article). False replays the
    # original's lost updates: every fact of a message reads beliefs as they were before the message.
    sequential_belief: bool = True
    # The three zones depend on pi* alone (article). True: a fact whose worth_remembering P(yes) < theta_act (or
    # whose worth answer degraded) is also tentative, so e.g. a confident duplicate gets no same_as link (original).
    worth_in_zones: bool = False
    # An escalated LLM verdict is first evidence like any other: g_A asks the second phrasing (article). False: the
    # verdict counts at once, unconfirmed (original).
    escalation_agreement: bool = True
    # mem0's UPDATE answer (escalation, LLM decider): "update", a relation of R (article: a new fact is stored and the
    # old one loses belief), or "rewrite": the stored text is replaced, no new fact, no belief change (original).
    mem0_update: Literal["update", "rewrite"] = "update"
    # plan_fulfilled closes a plan only when g_T(f) holds (article: plans and hypotheticals close nothing). False:
    # a yes closes the plan whatever the new fact's temporal status (original).
    plan_temporal_gate: bool = True
    # e(f, u) = - logit pi - logit pi' on every superseding answer, so the second phrasing is asked each time
    # (article). False: only for the first evidence against u (g_A); later ones count one phrasing (original).
    recheck_every_against: bool = True
    retrieval_rerank: bool = True
    retrieval_history: bool = True
    retrieval_floor: int = 10
    # Where a kept fact's superseded chain goes: "beside" it (article: "where did she live before Berlin?" shows
    # Paris next to Berlin) or "after" every other line, behind the floor and the relation pull (original).
    history_placement: Literal["beside", "after"] = "beside"

    def describe(self) -> dict[str, Any]:
        """The flag values as plain data, for result files."""
        return asdict(self)

    @classmethod
    def article(cls) -> Flags:
        return cls()

    @classmethod
    def frozen(cls) -> Flags:
        return cls()

    @classmethod
    def original_frozen(cls) -> Flags:
        return cls(
            belief_evidence="all",
            recheck_multi_valued_updates=True,
            sequential_belief=False,
            **ORIGINAL_DEPARTURES,
        )

    @classmethod
    def reranking_off(cls) -> Flags:
        return cls(retrieval_rerank=False)

    @classmethod
    def e2(cls) -> Flags:
        return cls(
            policy="direct",
            temporal_gate="current",
            temporal_version=1,
            relation_version=1,
            cardinality_gate=False,
            update_multi_sibling=False,
            agreement_gate=False,
            graph_candidates=False,
            plan_question=False,
            merge_policy="union",
            **ORIGINAL_DEPARTURES,
        )

    def but(self, **changes: Any) -> Flags:
        return replace(self, **changes)
