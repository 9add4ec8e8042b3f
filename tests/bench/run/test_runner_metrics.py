"""Run-level figures: costs per 1k messages, medians, and what the store did with the update sets."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from bench.analysis import metrics
from bench.data import files as data
from bench.systems import AuditFact, WriteUsage


class WordHashEmbedder:
    """A deterministic bag-of-words embedder: equal texts have cosine 1, texts sharing no word have cosine 0."""

    name = "word-hash-test"
    dim = 512

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_costs_are_per_thousand_messages_and_medians_follow_the_spec() -> None:
    usages = [
        WriteUsage(extract_cost_usd=0.01, decision_cost_usd=0.001, extract_ms=800, decision_ms=200, facts=2),
        WriteUsage(extract_cost_usd=0.01, decision_cost_usd=0.0, extract_ms=700, decision_ms=0, facts=0),
        WriteUsage(extract_cost_usd=0.01, decision_cost_usd=0.002, extract_ms=900, decision_ms=400, facts=1),
    ]
    figures = metrics.write_figures(usages, has_decision_layer=True)
    assert figures.cost_per_1k == pytest.approx(1000 * 0.033 / 3)
    assert figures.extract_cost_per_1k == pytest.approx(10.0)
    assert figures.decision_cost_per_1k == pytest.approx(1.0)
    assert figures.write_p50_ms == 1000.0  # medians of 1000, 700, 1300: every message counts
    assert figures.decision_p50_ms == 300.0  # only messages that produced a fact: 200 and 400


def test_a_system_without_a_decision_layer_reports_none_not_zero() -> None:
    figures = metrics.write_figures([WriteUsage(extract_cost_usd=0.01, extract_ms=500, facts=1)], False)
    assert figures.decision_cost_per_1k is None and figures.decision_p50_ms is None
    assert metrics.write_figures([], True).cost_per_1k is None


def item(item_id: str) -> dict:
    return next(i for i in data.load_update_set1()["items"] if i["id"] == item_id)


def fact_for(item_data: dict, *, active: bool, closed_by: str | None = None, reason: str | None = None) -> AuditFact:
    return AuditFact(
        fact_id=f"f-{item_data['id']}",
        text=item_data["original"]["fact"],
        source_message_id=item_data["original"]["message_id"],
        active=active,
        closed_reason=reason,
        closed_by=closed_by,
    )


def test_item_behaviour_covers_every_case() -> None:
    easy, trap, plan = item("E01"), item("S01"), item("F01")
    assert metrics.item_behaviour(easy, []) == "not_stored"
    assert metrics.item_behaviour(easy, [fact_for(easy, active=True)]) == "stale"
    assert metrics.item_behaviour(easy, [fact_for(easy, active=False, closed_by=easy["update"]["id"])]) == "closed"
    assert metrics.item_behaviour(trap, [fact_for(trap, active=True)]) == "kept"
    assert metrics.item_behaviour(trap, [fact_for(trap, active=False, closed_by=trap["update"]["id"])]) == "over_closed"
    # A trap closed by some other message was not closed by the trap itself.
    assert metrics.item_behaviour(trap, [fact_for(trap, active=False, closed_by="D3:1")]) == "kept"
    closed_plan = fact_for(plan, active=False, closed_by=plan["update"]["id"], reason="fulfilled")
    assert metrics.item_behaviour(plan, [closed_plan]) == "fulfilled"
    assert metrics.item_behaviour(plan, [replace_reason(closed_plan, "belief")]) == "closed_other_reason"


def replace_reason(fact: AuditFact, reason: str) -> AuditFact:
    from dataclasses import replace

    return replace(fact, closed_reason=reason)


def test_update_report_counts_stale_items_traps_and_audits_closes() -> None:
    easy, other_easy, trap = item("E01"), item("E02"), item("S01")
    facts = [
        fact_for(easy, active=True),  # stale
        fact_for(other_easy, active=False, closed_by=other_easy["update"]["id"], reason="belief"),  # labeled close
        fact_for(trap, active=False, closed_by=trap["update"]["id"], reason="belief"),  # over-closed trap, unlabeled
        AuditFact("noise", "Caroline likes tea", "D1:3", active=True),
    ]
    report = metrics.update_report("dev_updates", facts, WordHashEmbedder(), {"plan_fulfilled_asks": 7})

    behaviours = {i["id"]: i["behavior"] for i in report["items"]}
    assert behaviours["E01"] == "stale" and behaviours["E02"] == "closed" and behaviours["S01"] == "over_closed"
    assert report["stale"] == [1, 2]
    assert report["traps"] == {"stored": 1, "closed": 1}
    assert report["closes"]["total"] == 2 and report["closes"]["labeled"] == 1 and report["closes"]["unlabeled"] == 1
    assert report["closes"]["by_reason"]["belief"] == {"labeled": 1, "unlabeled": 1}
    assert report["plan_fulfilled"]["asks"] == 7
    assert sum(report["behavior_counts"].values()) == 30
    assert metrics.update_report("dev", facts, WordHashEmbedder(), {}) is None


def test_a_fact_from_the_right_message_but_about_something_else_does_not_match() -> None:
    easy = item("E01")
    unrelated = AuditFact("x", "completely different words here", easy["original"]["message_id"], active=True)
    matcher = metrics.FactMatcher([unrelated], WordHashEmbedder())
    assert matcher.matched(easy["original"]["message_id"], easy["original"]["fact"]) == []


def test_set2_close_pairs_follow_each_chain_except_the_kept_home_study() -> None:
    pairs = metrics.set2_close_pairs()
    assert ("U2:C01.1", "U2:C01.2") in pairs and ("U2:C01.2", "U2:C01.3") in pairs
    assert ("U2:C02.3", "U2:C02.4") in pairs
    assert ("U2:C03.2", "U2:C03.3") in pairs
    assert ("U2:C03.1", "U2:C03.2") not in pairs and ("U2:C03.3", "U2:C03.4") not in pairs
    assert ("U2:N05.1", "U2:N05.2") in pairs
    assert len(pairs) == 2 + 3 + 1 + 2 + 3 + 5


def test_set2_report_marks_replaced_values_still_active_as_stale() -> None:
    facts = [
        AuditFact("a", "Caroline lives in a studio downtown", "U2:C01.1", active=True),
        AuditFact("b", "Caroline lives elsewhere", "U2:C01.2", active=False, closed_by="U2:C01.3"),
        AuditFact("c", "Caroline passed her home study", "U2:C03.1", active=True),
    ]
    report = metrics.set2_report(facts)
    assert report["stale_values"] == [1, 2]
    assert report["stale_messages"] == ["U2:C01.1"]
    assert report["keep_ok"] == [1, 1]
