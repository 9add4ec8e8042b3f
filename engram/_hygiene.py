"""The hygiene pass: after ingestion, ask `same_fact` about pairs of facts that share subject and relation, and
link (or unlink) them as same_as. Nothing is deleted and no belief changes (the original's v1 frozen
arm ran it once before the final questions; the article does not describe it, so the harness decides whether to run it).

Groups: every fact, open or closed, by (subject, relation); the 30 most recently stored facts of each group;
every pair of them, 50 pairs per request, state {"subject": <entity>}. P(yes) >= theta_act links the pair;
P(yes) <= 1 - theta_act drops an existing link.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from engram import config
from engram._exceptions import DecisionError
from engram._protocols import DecisionBackend
from engram._store import Store
from engram._types import Ask, Usage
from engram.questions import SAME_FACT

MAX_GROUP = 30
PAIRS_PER_REQUEST = 50


@dataclass
class HygieneReport:
    groups: int = 0
    pairs: int = 0
    links: int = 0
    drops: int = 0
    already_linked: int = 0
    failed_requests: int = 0
    usage: list[Usage] = field(default_factory=list)

    @property
    def cost_usd(self) -> float:
        return math.fsum(u.cost_usd for u in self.usage)


def run_hygiene(store: Store, decider: DecisionBackend, message_id: str = "hygiene") -> HygieneReport:
    report = HygieneReport()
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fact in store.all_facts():
        groups[(fact.subject, fact.predicate)].append(fact.id)
    for (subject, _), ids in sorted(groups.items()):
        recent = ids[-MAX_GROUP:]  # all_facts is in insertion order
        if len(recent) < 2:
            continue
        report.groups += 1
        pairs = list(combinations(recent, 2))
        report.pairs += len(pairs)
        for start in range(0, len(pairs), PAIRS_PER_REQUEST):
            _judge(store, decider, subject, pairs[start : start + PAIRS_PER_REQUEST], report, message_id)
    return report


def _judge(
    store: Store,
    decider: DecisionBackend,
    subject: str,
    pairs: list[tuple[str, str]],
    report: HygieneReport,
    message_id: str,
) -> None:
    asks = [
        Ask(f"same_fact__{k}", SAME_FACT, {"fact_a": store.get(a).text, "fact_b": store.get(b).text}, b)
        for k, (a, b) in enumerate(pairs)
    ]
    try:
        answers = decider.ask({"subject": subject}, asks)
    except DecisionError:
        report.failed_requests += 1
        return
    decisions = [answers[a.key] for a in asks if a.key in answers]
    report.usage.append(
        Usage(
            role="decide",
            backend=decider.name,
            model=decider.model,
            cost_usd=math.fsum(d.cost_usd for d in decisions),
            latency_ms=max((d.latency_ms for d in decisions), default=0.0),
        )
    )
    for ask, (a, b) in zip(asks, pairs):
        decision = answers.get(ask.key)
        if decision is None or decision.fallback:
            continue
        p_yes = decision.p("yes")
        linked = b in store.same_as_cluster(a)
        if p_yes >= config.THETA_ACT:
            if linked:
                report.already_linked += 1
            else:
                store.link_same_as(a, b, p_yes, message_id)
                store.log("same_as", b, message_id, other=a, p=p_yes, by="hygiene")
                report.links += 1
        elif p_yes <= 1.0 - config.THETA_ACT and store.directly_linked(a, b):
            store.unlink_same_as(a, b)
            store.log("same_as_dropped", b, message_id, other=a, p=p_yes, by="hygiene")
            report.drops += 1
