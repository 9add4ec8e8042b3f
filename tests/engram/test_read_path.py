"""Read-path scenarios: relevance threshold, rho*b order, floor, relation pull, reranking off, degraded reads."""

from __future__ import annotations

from engram import Flags, config
from tests.engram.conftest import day


def seed(memory) -> dict[str, str]:
    texts = ["Ana lives in Paris", "Ana works at the bakery", "Ana likes jazz", "Ana owns a red bike"]
    for n, text in enumerate(texts):
        memory.add(text + ".", speaker="Ana", when=day(n))
    return {f.text: f.id for f in memory.facts()}


def test_only_facts_judged_relevant_above_theta_rel_are_reranked_by_rho_times_belief(decider, make_memory):
    memory = make_memory(Flags(retrieval_floor=0))
    ids = seed(memory)
    decider.on("relevant_to_query", 0.9, memory="jazz")
    decider.on("relevant_to_query", 0.95, memory="bakery")
    decider.on("relevant_to_query", config.THETA_REL, memory="Paris")  # exactly theta_rel: not kept (strict)
    lines = memory.search("what does Ana do for fun?")
    assert [line.fact_id for line in lines] == [ids["Ana works at the bakery"], ids["Ana likes jazz"]]
    assert all(line.source == "rerank" for line in lines)
    assert lines[0].score == 0.95 * memory._store.get(ids["Ana works at the bakery"]).belief

    # Belief weighs in: a weakly held fact falls behind a slightly less relevant one.
    memory._store.set_belief(ids["Ana works at the bakery"], 0.3)
    assert [line.fact_id for line in memory.search("what does Ana do for fun?")][0] == ids["Ana likes jazz"]


def test_the_floor_keeps_the_closest_facts_even_when_none_is_judged_relevant(decider, make_memory):
    memory = make_memory()
    seed(memory)
    lines = memory.search("Ana bike")
    assert len(lines) == 4 and {line.source for line in lines} == {"cosine"}
    assert "red bike" in lines[0].text  # cosine order


def test_a_question_naming_a_relation_pulls_valid_facts_of_it(decider, make_memory):
    decider.on("edge_type", {"lives_in": 0.95}, new="lives in")
    memory = make_memory(Flags(retrieval_floor=0))
    ids = seed(memory)
    decider.on("query_relation", {"lives_in": 0.9}, query="where")
    lines = memory.search("where is her home?")
    assert [(line.fact_id, line.source) for line in lines] == [(ids["Ana lives in Paris"], "relation")]
    decider.on("query_relation", {"lives_in": 0.8}, query="where")  # below theta_act: no pull
    assert memory.search("where is her home?") == []


def test_reranking_off_returns_the_cosine_shortlist_without_asking(decider, make_memory):
    memory = make_memory(Flags.reranking_off())
    seed(memory)
    before = len(decider.requests)
    lines = memory.search("red bike", k=2)
    assert len(decider.requests) == before
    assert len(lines) == 2 and lines[0].source == "cosine" and "red bike" in lines[0].text
    assert lines[0].score >= lines[1].score


def test_a_failed_read_request_degrades_to_the_closest_facts(decider, make_memory):
    memory = make_memory()
    seed(memory)
    decider.fail_next = 1
    retrieval = memory.retrieve("red bike")
    assert retrieval.degraded and len(retrieval.lines) == 4 and "red bike" in retrieval.lines[0].text


def test_the_shortlist_is_thirty_and_is_scored_in_one_request(decider, make_memory):
    memory = make_memory()
    for n in range(35):
        memory.add(f"Ana visited museum number {n}.", speaker="Ana", when=day(n))
    before = len(decider.requests)
    memory.search("museum")
    assert len(decider.requests) == before + 1
    _, asks = decider.requests[-1]
    assert sum(a.question.id == "relevant_to_query" for a in asks) == config.SHORTLIST_K
    assert [a.key for a in asks][-1] == "query_relation"


def test_lines_show_the_date_said_the_fact_and_the_quote(decider, make_memory):
    memory = make_memory()
    memory.add("Ana lives in Paris.", speaker="Ana", when=day(7))
    [line] = memory.search("Paris")
    assert line.text == '[said 2023-05-08] Ana lives in Paris - "Ana lives in Paris."'


def test_a_same_as_cluster_shows_once(decider, make_memory):
    decider.on("relation_to_candidate", {"duplicate": 0.95}, new="Ana really likes jazz", existing="likes jazz")
    memory = make_memory()
    memory.add("Ana likes jazz.", speaker="Ana", when=day(0))
    memory.add("Ana really likes jazz.", speaker="Ana", when=day(1))
    assert memory.stats()["same_as_links"] == 1 and len(memory.facts()) == 2  # both kept, linked
    assert len(memory.search("jazz")) == 1
