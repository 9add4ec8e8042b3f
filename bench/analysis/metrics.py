"""Run-level figures computed from what a run recorded: write costs and latencies, and what the store did.

Costs are nominal USD (a replayed call reports the cost it was recorded with), latencies come from the gateway's
virtual clock (recorded latencies), so every figure here is deterministic on replay.

Store behaviour on the update slices follows the original harness's rules:

- a set-1 item's original fact is *matched* by stored facts whose source is the item's original message and whose
  MiniLM cosine to the item's `original.fact` is at least 0.5;
- behaviour: `not_stored` (nothing matched); for `no_close` items (the traps) `over_closed` if a matched fact was
  closed by the item's update message, else `kept`; for close items `stale` if a matched fact is still active, else
  `fulfilled` / `closed_other_reason` for close_fulfilled items, else `closed`;
- every close is audited: *labeled* if (closed fact's source message, closing message) is a labeled pair (set-1
  close items, the stress superseded labels, set-2 close pairs), otherwise *unlabeled*.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.data import files as data
from bench.models.clock import p50_ms
from bench.systems import AuditFact, WriteUsage
from engram import Embedder

MATCH_THRESHOLD = 0.5  # a fact matches a labelled claim at MiniLM cosine >= 0.5
BEHAVIOURS = ("kept", "closed", "stale", "over_closed", "fulfilled", "closed_other_reason", "not_stored")

# Set-2 close pairs: each chain's consecutive values replace each other, except chain C03 whose first
# message (the passed home study) stays true; only C03's match ending (2 -> 3) closes anything.
SET2_KEEP = frozenset({"U2:C03.1"})
_SET2_NON_CONSECUTIVE = {"C03": ((2, 3),)}


# ----------------------------------------------------------------------------------------------- write figures


@dataclass(frozen=True)
class WriteFigures:
    cost_per_1k: float | None
    extract_cost_per_1k: float | None
    decision_cost_per_1k: float | None
    write_p50_ms: float | None
    decision_p50_ms: float | None


def write_figures(usages: Sequence[WriteUsage], has_decision_layer: bool) -> WriteFigures:
    """Per-1,000-message costs (mean over ALL messages x 1000) and medians, as the article reports them.

    Write p50 is over every message (including those that produced no fact); decision p50 only over messages
    with at least one fact, since a message with nothing to decide has no decision latency.
    """
    if not usages:
        return WriteFigures(None, None, None, None, None)
    n = len(usages)
    deciding = [u.decision_ms for u in usages if u.facts > 0]
    return WriteFigures(
        cost_per_1k=1000.0 * sum(u.cost_usd for u in usages) / n,
        extract_cost_per_1k=1000.0 * sum(u.extract_cost_usd for u in usages) / n,
        decision_cost_per_1k=(1000.0 * sum(u.decision_cost_usd for u in usages) / n) if has_decision_layer else None,
        write_p50_ms=p50_ms([u.write_ms for u in usages]),
        decision_p50_ms=p50_ms(deciding) if has_decision_layer else None,
    )


# ------------------------------------------------------------------------------------------- labelled pairs


def set1_items() -> list[dict[str, Any]]:
    return list(data.load_update_set1()["items"])


def set2_close_pairs() -> set[tuple[str, str]]:
    """(earlier message id, later message id) for every value in a set-2 chain that a later message replaces."""
    chains: dict[str, list[str]] = {}
    for message in data.load_update_set2()["messages"]:
        chains.setdefault(message["item"], []).append(message["id"])
    pairs: set[tuple[str, str]] = set()
    for chain, ids in chains.items():
        ordered = sorted(ids, key=lambda i: int(i.rsplit(".", 1)[1]))
        steps = _SET2_NON_CONSECUTIVE.get(chain) or tuple((k, k + 1) for k in range(1, len(ordered)))
        by_step = {int(i.rsplit(".", 1)[1]): i for i in ordered}
        pairs |= {(by_step[a], by_step[b]) for a, b in steps}
    return pairs


def labeled_close_pairs() -> set[tuple[str, str]]:
    """Every (closed fact's source, closer's source) pair that a label says should close."""
    pairs = {
        (item["original"]["message_id"], item["update"]["id"])
        for item in set1_items()
        if item["expected"] != "no_close"
    }
    pairs |= {(label["earlier_id"], label["later_id"]) for label in data.load_superseded_labels()["items"]}
    pairs |= set2_close_pairs()
    return pairs


# ------------------------------------------------------------------------------------------- store behaviour


class FactMatcher:
    """Which stored facts state a labelled claim: same source message, MiniLM cosine >= 0.5."""

    def __init__(self, facts: Sequence[AuditFact], embedder: Embedder) -> None:
        self.facts = list(facts)
        self.embedder = embedder
        self._vectors = embedder.embed([f.text for f in self.facts]) if self.facts else np.zeros((0, 1), np.float32)

    def matched(self, source_message_id: str, claim: str) -> list[AuditFact]:
        rows = [i for i, f in enumerate(self.facts) if f.source_message_id == source_message_id]
        if not rows:
            return []
        claim_vector = self.embedder.embed([claim])[0]
        scores = self._vectors[rows] @ claim_vector
        return [self.facts[i] for i, score in zip(rows, scores) if float(score) >= MATCH_THRESHOLD]


def item_behaviour(item: dict[str, Any], matched: Sequence[AuditFact]) -> str:
    if not matched:
        return "not_stored"
    if item["expected"] == "no_close":
        closed_by_update = any(not f.active and f.closed_by == item["update"]["id"] for f in matched)
        return "over_closed" if closed_by_update else "kept"
    if any(f.active for f in matched):
        return "stale"
    if item["expected"] == "close_fulfilled":
        return "fulfilled" if any(f.closed_reason == "fulfilled" for f in matched) else "closed_other_reason"
    return "closed"


def closes_audit(facts: Iterable[AuditFact], labeled: set[tuple[str, str]]) -> dict[str, Any]:
    """Every closed fact, judged against the labelled pairs, split by the reason it closed."""
    closed = [f for f in facts if not f.active and f.closed_by is not None]
    by_reason: dict[str, dict[str, int]] = {}
    detail = []
    for fact in sorted(closed, key=lambda f: (f.source_message_id or "", f.closed_by or "", f.text)):
        is_labeled = (fact.source_message_id, fact.closed_by) in labeled
        reason = fact.closed_reason or "unknown"
        counts = by_reason.setdefault(reason, {"labeled": 0, "unlabeled": 0})
        counts["labeled" if is_labeled else "unlabeled"] += 1
        detail.append(
            {
                "closed": fact.text,
                "closed_source": fact.source_message_id,
                "by_source": fact.closed_by,
                "reason": reason,
                "labeled": is_labeled,
            }
        )
    labeled_count = sum(1 for d in detail if d["labeled"])
    return {
        "total": len(detail),
        "labeled": labeled_count,
        "unlabeled": len(detail) - labeled_count,
        "by_reason": dict(sorted(by_reason.items())),
        "detail": detail,
    }


def update_report(
    slice_name: str, facts: Sequence[AuditFact], embedder: Embedder, store_stats: dict[str, Any]
) -> dict[str, Any] | None:
    """The `updates` block of an update-slice result (None on other slices)."""
    if slice_name not in ("dev_updates", "dev_updates2"):
        return None
    matcher = FactMatcher(facts, embedder)
    items = []
    for item in set1_items():
        behaviour = item_behaviour(item, matcher.matched(item["original"]["message_id"], item["original"]["fact"]))
        items.append({"id": item["id"], "tier": item["tier"], "expected": item["expected"], "behavior": behaviour})
    close_items = [i for i in items if i["expected"] != "no_close"]
    traps = [i for i in items if i["expected"] == "no_close"]
    audit = closes_audit(facts, labeled_close_pairs())
    fulfilled = audit["by_reason"].get("fulfilled", {"labeled": 0, "unlabeled": 0})
    report: dict[str, Any] = {
        "items": items,
        "behavior_counts": dict(sorted(Counter(i["behavior"] for i in items).items())),
        "stale": [
            sum(i["behavior"] == "stale" for i in close_items),
            sum(i["behavior"] != "not_stored" for i in close_items),
        ],
        "traps": {
            "stored": sum(i["behavior"] != "not_stored" for i in traps),
            "closed": sum(i["behavior"] == "over_closed" for i in traps),
        },
        "closes": audit,
        "plan_fulfilled": {
            "asks": store_stats.get("plan_fulfilled_asks"),
            "correct": fulfilled["labeled"],
            "wrong": fulfilled["unlabeled"],
        },
    }
    if slice_name == "dev_updates2":
        report["set2"] = set2_report(facts)
    return report


def set2_report(facts: Sequence[AuditFact]) -> dict[str, Any]:
    """Set 2: a replaced value is stale while its message still has an active fact; the kept value must stay."""
    by_source: dict[str, list[AuditFact]] = {}
    for fact in facts:
        if fact.source_message_id:
            by_source.setdefault(fact.source_message_id, []).append(fact)
    earlier = sorted({a for a, _ in set2_close_pairs()})
    stored = [m for m in earlier if by_source.get(m)]
    stale = [m for m in stored if any(f.active for f in by_source[m])]
    keep_stored = [m for m in sorted(SET2_KEEP) if by_source.get(m)]
    keep_ok = [m for m in keep_stored if any(f.active for f in by_source[m])]
    return {
        "stale_values": [len(stale), len(stored)],
        "stale_messages": stale,
        "keep_ok": [len(keep_ok), len(keep_stored)],
    }


def stale_labels_report(message_ids: set[str], facts: Sequence[AuditFact], embedder: Embedder) -> dict[str, Any]:
    """The set-1 matching rule (see the module docstring) on the stress transcript's superseded labels that fall inside the slice."""
    labels = [
        label
        for label in data.load_superseded_labels()["items"]
        if label["earlier_id"] in message_ids and label["later_id"] in message_ids
    ]
    matcher = FactMatcher(facts, embedder)
    stored = stale = 0
    for label in labels:
        matched = matcher.matched(label["earlier_id"], label["claim"])
        if matched:
            stored += 1
            stale += any(f.active for f in matched)
    return {
        "labels_in_slice": len(labels),
        "claims_stored": stored,
        "claims_stale": stale,
        "rate": (stale / stored) if stored else None,
    }
