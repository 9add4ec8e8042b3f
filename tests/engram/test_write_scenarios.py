"""Write-path scenarios a user would recognise, each with a scripted decision backend so one gate is tested at a time."""

from __future__ import annotations

from engram import Flags, config
from engram.deciders import Raw
from tests.engram.conftest import day


def script_move(decider, p_update: float = 0.95, p_recheck: float = 0.95) -> None:
    """A decision model that sees 'Berlin' as an update of 'Paris', on both phrasings."""
    decider.on("edge_type", {"lives_in": 0.95}, new="Paris")
    decider.on("edge_type", {"lives_in": 0.95}, new="Berlin")
    decider.on("relation_to_candidate", {"update": p_update}, new="Berlin", existing="Paris")
    decider.on("relation_to_candidate_recheck", {"update": p_recheck}, new="Berlin", existing="Paris")


def only(facts, word):
    [fact] = [f for f in facts if word in f.text]
    return fact


def test_moving_to_berlin_closes_paris_and_history_still_finds_it(decider, make_memory):
    script_move(decider)
    memory = make_memory(Flags(retrieval_floor=0))
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0), message_id="m1")
    report = memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30), message_id="m2")

    paris = only(memory.facts(valid_only=False), "Paris")
    berlin = only(memory.facts(), "Berlin")
    assert paris.belief < config.THETA_CLOSE
    assert paris.valid_until == day(30) and paris.closed_reason == "belief" and paris.closed_by == berlin.id
    assert report.closes == [paris.id]
    assert [f.id for f in memory.facts()] == [berlin.id]
    assert berlin.belief > 0.9  # the new fact gains what the old one lost

    # Only Berlin is judged relevant; Paris arrives through the superseded link, marked as no longer true.
    decider.on("relevant_to_query", 0.9, memory="Berlin")
    lines = memory.search("where did she live before Berlin?", k=5)
    assert [(line.fact_id, line.source) for line in lines] == [(berlin.id, "rerank"), (paris.id, "history")]
    assert "(no longer true since 2023-05-31)" in lines[1].text

    # Without the history step, nothing else would have brought Paris back.
    assert [
        line.fact_id
        for line in make_memory(Flags(retrieval_floor=0, retrieval_history=False)).search(
            "where did she live before Berlin?"
        )
    ] == [berlin.id]


def test_likes_hiking_never_closes_likes_painting(decider, make_memory):
    # A confidently wrong decision model: it calls a second hobby a contradiction of the first, twice.
    decider.on("edge_type", {"hobby": 0.95}, new="likes")
    decider.on("relation_to_candidate", {"contradiction": 0.95}, new="hiking", existing="painting")
    decider.on("relation_to_candidate_recheck", {"contradiction": 0.95}, new="hiking", existing="painting")
    memory = make_memory()
    memory.add("Ana likes painting.", speaker="Ana", when=day(0))
    memory.add("Ana likes hiking.", speaker="Ana", when=day(1))

    painting = only(memory.facts(), "painting")
    assert painting.valid_until is None and painting.belief == config.BELIEF_MAX
    assert painting.disputed  # recorded, not acted on
    assert memory.stats()["blocked"]["cardinality"] == 1
    assert len(memory.facts()) == 2


def test_a_plan_never_closes_the_current_fact(decider, make_memory):
    script_move(decider)
    decider.on("relation_to_candidate", {"update": 0.95}, new="Rome", existing="Paris")
    decider.on("relation_to_candidate_recheck", {"update": 0.95}, new="Rome", existing="Paris")
    decider.on("temporal_status", {"planned": 0.7, "hypothetical": 0.2, "current": 0.1}, new="thinking of")
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    memory.add("Ana is thinking of moving to Rome.", speaker="Ana", when=day(3))

    paris = only(memory.facts(), "Paris")
    assert paris.valid_until is None and paris.belief == config.BELIEF_MAX
    assert memory.stats()["blocked"]["temporal"] == 1


def test_a_past_tense_mention_never_closes_the_current_fact(decider, make_memory):
    # The first phrasing is fooled into "update"; the second phrasing (g_A) is not.
    decider.on("relation_to_candidate", {"update": 0.9}, new="Lyon", existing="Paris")
    decider.on("relation_to_candidate_recheck", {"new": 0.9}, new="Lyon", existing="Paris")
    decider.on("temporal_status", {"past": 0.95}, new="as a child")
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    memory.add("Ana lived in Lyon as a child.", speaker="Ana", when=day(3))

    paris = only(memory.facts(), "Paris")
    assert paris.valid_until is None and paris.belief == config.BELIEF_MAX
    assert memory.stats()["blocked"]["agreement"] == 1
    recheck_asks = decider.asked("relation_to_candidate_recheck")
    assert [a.target for a in recheck_asks] == [paris.id]


def test_alternating_weak_answers_do_not_make_a_fact_flicker(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    memory.add("Ana moved to Berlin.", speaker="Ana", when=day(1))
    paris = only(memory.facts(valid_only=False), "Paris")
    assert paris.valid_until is not None

    # Then the model wavers: "Paris" is supported, then updated away again, several times.
    decider.on("relation_to_candidate", {"duplicate": 0.9}, new="Paris again", existing="lives in Paris")
    decider.on("relation_to_candidate", {"update": 0.9}, new="Berlin again", existing="lives in Paris")
    beliefs = []
    for n in range(3):
        memory.add("Ana loves Paris again.", speaker="Ana", when=day(2 + 2 * n))
        beliefs.append(memory._store.get(paris.id).belief)
        assert memory._store.get(paris.id).valid_until is not None, "support alone must clear theta_open"
        memory.add("Ana loves Berlin again.", speaker="Ana", when=day(3 + 2 * n))
        beliefs.append(memory._store.get(paris.id).belief)
        assert memory._store.get(paris.id).valid_until is not None

    # The supported belief rose above theta_close, so a single threshold would have reopened it every time.
    assert max(beliefs) > config.THETA_CLOSE
    assert max(beliefs) < config.THETA_OPEN
    assert memory.stats()["reopens"] == 0


def test_strong_support_does_reopen_a_belief_closed_fact(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    memory.add("Ana moved to Berlin.", speaker="Ana", when=day(1))
    decider.on("relation_to_candidate", {"duplicate": 0.97}, new="back in Paris", existing="lives in Paris")
    for n in range(2):
        memory.add(f"Ana is back in Paris for good {n}.", speaker="Ana", when=day(5 + n))
    paris = memory._store.get(only(memory.facts(valid_only=False), "lives in Paris").id)
    assert paris.valid_until is None and paris.belief > config.THETA_OPEN
    assert memory.stats()["reopens"] == 1
    assert [e["event"] for e in memory.explain(paris.id)["history"]].count("reopen") == 1


def test_a_weak_duplicate_answer_does_not_lower_belief(decider, make_memory):
    decider.on("relation_to_candidate", {"duplicate": 0.45, "new": 0.35, "refinement": 0.2}, new="sushi a lot")
    memory = make_memory()
    memory.add("Ana likes sushi.", speaker="Ana", when=day(0))
    memory.add("Ana eats sushi a lot.", speaker="Ana", when=day(1))
    sushi = only(memory.facts(), "likes sushi")
    assert sushi.belief == config.BELIEF_MAX
    assert memory.stats()["ignored_weak"] == 1

    # v2 "every answer counts" (the original's bug): the same weak support lowers belief.
    decider.requests.clear()
    v2 = make_memory(Flags(belief_evidence="all"), name="v2.db")
    v2.add("Ana likes sushi.", speaker="Ana", when=day(0))
    v2.add("Ana eats sushi a lot.", speaker="Ana", when=day(1))
    assert only(v2.facts(), "likes sushi").belief < config.BELIEF_MAX


def test_a_plan_is_closed_as_fulfilled_when_it_happens(decider, make_memory):
    decider.on("edge_type", {"plans": 0.95}, new="plans to")
    decider.on("temporal_status", {"planned": 0.95}, new="plans to")
    decider.on("plan_fulfilled", 0.95, new="ran the Boston marathon", existing="plans to run")
    memory = make_memory()
    memory.add("Ana plans to run the Boston marathon.", speaker="Ana", when=day(0))
    memory.add("Ana is training for the Boston marathon.", speaker="Ana", when=day(5))
    plan = only(memory.facts(), "plans to run")
    assert plan.valid_until is None  # progress is not completion

    report = memory.add("Ana ran the Boston marathon.", speaker="Ana", when=day(40))
    plan = memory._store.get(plan.id)
    ran = only(memory.facts(), "ran the")
    assert plan.closed_reason == "fulfilled" and plan.closed_by == ran.id and plan.valid_until == day(40)
    assert report.closes == [plan.id]
    assert memory.stats()["plan_fulfilled_asks"] == 2
    assert memory.stats()["closes"] == {"fulfilled": 1}


def test_a_malformed_answer_degrades_only_its_own_question(decider, make_memory):
    script_move(decider)
    decider.on("edge_type", Raw({"probabilities": {"lives_in": 1.7}, "choice": "lives_in"}), new="Berlin")
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30))

    berlin = only(memory.facts(), "Berlin")
    decisions = {d.question: d for d in memory.explain(berlin.id)["decisions"] if d.target is None}
    assert decisions["edge_type"].fallback and "edge_type.probabilities" in decisions["edge_type"].error
    assert berlin.predicate == "related_to"  # the extractor's hint stands in
    assert not decisions["temporal_status"].fallback and decisions["temporal_status"].chosen == "current"
    # The relation answer was well formed, so Paris still closes (lives_in is single-valued).
    assert only(memory.facts(valid_only=False), "Paris").closed_reason == "belief"


def test_a_failed_request_stores_the_fact_tentatively_and_touches_nothing(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    decider.fail_next = 1
    report = memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30))
    assert report.actions == ["fallback"]
    assert only(memory.facts(), "Berlin").tentative
    assert only(memory.facts(), "Paris").belief == config.BELIEF_MAX
    assert memory.stats()["failed_requests"] == 1


def test_facts_of_one_message_do_not_lose_each_others_belief_updates(decider, make_memory):
    decider.on("edge_type", {"lives_in": 0.95}, new="Paris")
    decider.on("edge_type", {"lives_in": 0.95}, new="Berlin")
    decider.on("relation_to_candidate", {"update": 0.9}, new="Berlin", existing="Paris")
    decider.on("relation_to_candidate_recheck", {"update": 0.9}, new="Berlin", existing="Paris")
    two_facts = "Ana moved to Berlin. Ana lives in Berlin now."

    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add(two_facts, speaker="Ana", when=day(30))
    paris = only(memory.facts(valid_only=False), "Paris")
    history = [e for e in memory.explain(paris.id)["history"] if e["event"] == "belief"]
    assert len(history) == 2 and history[1]["before"] == history[0]["after"]  # the second built on the first
    assert paris.closed_reason == "belief" and report.closes == [paris.id]

    # The original's concurrent writes (flag off): the second fact reads the stale belief, the first update is lost.
    lost = make_memory(Flags(sequential_belief=False), name="lost.db")
    lost.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    lost.add(two_facts, speaker="Ana", when=day(30))
    stale = only(lost.facts(valid_only=False), "Paris")
    lost_history = [e for e in lost.explain(stale.id)["history"] if e["event"] == "belief"]
    assert len(lost_history) == 2 and lost_history[1]["before"] == lost_history[0]["before"] == config.BELIEF_MAX
    assert stale.valid_until is None  # one update's worth of evidence: not enough to close


def test_an_unsure_superseding_answer_is_escalated_and_the_llm_verdict_counts(decider, make_memory):
    from engram import Escalation, Usage

    class FakeLLMJudge:
        model = "fake-sonnet"
        calls: list[tuple[str, str]] = []

        def judge(self, existing: str, new: str) -> Escalation:
            self.calls.append((existing, new))
            return Escalation("contradiction", None, Usage("escalate", "llm", self.model, 0.007, 900.0))

    decider.on("edge_type", {"lives_in": 0.95}, new="lives")
    decider.on("relation_to_candidate", {"contradiction": 0.5, "new": 0.3, "duplicate": 0.2}, new="Lisbon")
    decider.on("relation_to_candidate_recheck", {"contradiction": 0.9}, new="Lisbon")
    judge = FakeLLMJudge()
    memory = make_memory(escalator=judge)
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add("Ana lives in Lisbon.", speaker="Ana", when=day(9))

    assert judge.calls == [("Ana lives in Paris", "Ana lives in Lisbon")]
    assert report.escalations == 1 and memory.stats()["escalations"] == 1
    # The verdict is first evidence against Paris, so g_A asks the second phrasing (a third request).
    assert [u.role for u in report.decision_usage] == ["decide", "escalate", "decide"]
    assert report.decide_ms == 900.0 and report.decision_cost_usd == 0.007
    paris = only(memory.facts(valid_only=False), "Paris")
    escalated = [d for d in memory.explain(report.outcomes[0].fact_id)["decisions"] if d.backend == "llm_escalation"]
    assert escalated and escalated[0].chosen == "contradiction"
    # The LLM verdict is certain (p = 1 -> logit 0.98); with the agreeing second phrasing both count, Paris closes.
    assert len(decider.asked("relation_to_candidate_recheck")) == 1
    assert paris.closed_reason == "belief" and paris.belief < config.THETA_CLOSE

    # Between theta_esc and theta_act: no escalation, the new fact is stored tentative.
    decider.on("relation_to_candidate", {"contradiction": 0.7, "new": 0.3}, new="Porto")
    report = memory.add("Ana lives in Porto.", speaker="Ana", when=day(10))
    assert report.escalations == 0 and report.outcomes[0].tentative


def test_latency_and_cost_come_from_recorded_figures(decider, make_memory):
    from tests.engram.conftest import SentenceExtractor

    script_move(decider)
    decider.latency_ms, decider.cost_per_ask_usd = 120.0, 0.00001
    memory = make_memory(extractor=SentenceExtractor(latency_ms=700.0))
    first = memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    assert first.extract_ms == 700.0 and first.decide_ms == 120.0  # one request, no candidates
    second = memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30))
    # request 1 (six questions + one relation), then the recheck: sequential, so the latencies add.
    assert len(second.decision_usage) == 2 and second.decide_ms == 240.0
    assert abs(second.decision_cost_usd - 8 * 0.00001) < 1e-12


def test_the_e2_policy_closes_at_once_on_a_confident_current_update(decider, make_memory):
    script_move(decider)
    memory = make_memory(Flags.e2())
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30))
    paris = only(memory.facts(valid_only=False), "Paris")
    assert paris.closed_reason == "superseded" and report.actions == ["updated"]
    assert not decider.asked("relation_to_candidate_recheck")  # no agreement gate in E2

    # E2 merges a confident duplicate into the stored text instead of linking it.
    decider.on("relation_to_candidate", {"duplicate": 0.95}, new="Berlin Mitte", existing="Berlin")
    report = memory.add("Ana moved to Berlin Mitte.", speaker="Ana", when=day(31))
    assert report.actions == ["merged"] and len(memory.facts()) == 1
    assert "Mitte" in memory.facts()[0].text


def test_when_no_candidate_gets_a_usable_answer_the_new_fact_is_tentative(decider, make_memory):
    decider.on("relation_to_candidate", Raw("garbled"), new="Lisbon")
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(0))
    report = memory.add("Ana lives in Lisbon.", speaker="Ana", when=day(9))
    assert report.outcomes[0].tentative and report.outcomes[0].relation == "new"
    assert only(memory.facts(), "Paris").belief == config.BELIEF_MAX
