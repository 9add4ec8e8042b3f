"""Behaviour switches. Each field changes what engram does; its default is the article's behaviour.

Presets name the flag sets the harness's arms use:
- `Flags()` / `Flags.article()` / `Flags.frozen()`: the article's system (the v1 frozen arm's structure:
  belief, three gates, cosine+graph candidates, same_as links, plan question, temporal v2, reranking on) with the
  article's fixes where the original code differed.
- `Flags.original_frozen()`: the same with the original code's quirks that change results switched back on (v2
  "every answer counts" evidence, rechecks on every multi-valued update, lost belief updates between facts of one
  message), for replicating the v1 numbers.
- `Flags.e2()`: the earlier "E2" write policy used by the `engram-jev` and `engram-llm-decider` arms: no belief,
  close on a confident current superseding answer, duplicates merged into the stored text, no gates.
- `Flags.reranking_off()`: the frozen system with the read path's reranker switched off.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal


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
    retrieval_rerank: bool = True
    retrieval_history: bool = True
    retrieval_floor: int = 10

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
        return cls(belief_evidence="all", recheck_multi_valued_updates=True, sequential_belief=False)

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
        )

    def but(self, **changes: Any) -> Flags:
        return replace(self, **changes)
