"""The store keeps everything, persists it in one file, and two runs build identical stores."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import Flags
from engram._store import _decision_json, _event_json
from tests.engram.conftest import day
from tests.engram.test_write_scenarios import script_move


def conversation(memory) -> None:
    memory.add("Ana lives in Paris. Ana likes jazz.", speaker="Ana", when=day(0), message_id="d1")
    memory.add("Ana moved to Berlin.", speaker="Ana", when=day(30), message_id="d2")


def test_a_reopened_store_holds_the_same_facts_history_and_links(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    conversation(memory)
    facts, stats = memory.facts(valid_only=False), memory.stats()
    explained = {f.id: memory.explain(f.id) for f in facts}
    memory.close()

    again = make_memory()
    assert again.facts(valid_only=False) == facts
    assert again.stats() == stats
    assert {f.id: again.explain(f.id) for f in facts} == explained
    assert [f.id for f in again.facts()] == ["d1#1", "d2#0"]  # ids derive from message id + index


def test_two_runs_build_identical_stores(decider, make_memory):
    script_move(decider)
    first, second = make_memory(name="a.db"), make_memory(name="b.db")
    conversation(first)
    conversation(second)
    assert first.facts(valid_only=False) == second.facts(valid_only=False)
    assert [f.belief for f in first.facts(valid_only=False)] == [f.belief for f in second.facts(valid_only=False)]


def test_nothing_is_deleted_and_the_close_is_explained(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    conversation(memory)
    assert len(memory.facts(valid_only=False)) == 3 and len(memory.facts()) == 2
    paris = memory.explain("d1#0")
    assert [e["event"] for e in paris["history"]] == ["insert", "belief", "close"]
    assert paris["belief_history"][-1]["after"] == paris["fact"].belief
    assert {d.question for d in paris["decisions"]} >= {"worth_remembering", "edge_type", "temporal_status"}
    assert memory.explain("d2#0")["superseded"] == ["d1#0"]


def test_a_repeated_message_id_is_refused_and_leaves_the_store_unchanged(decider, make_memory):
    memory = make_memory()
    memory.add("Ana likes jazz.", speaker="Ana", when=day(0), message_id="x")
    with pytest.raises(ValueError, match="message_id 'x': already stored"):
        memory.add("Ana likes rock.", speaker="Ana", when=day(1), message_id="x")
    assert [f.text for f in memory.facts()] == ["Ana likes jazz"]


def test_a_crash_mid_message_leaves_nothing_half_written(decider, make_memory):
    class Boom(Exception):
        pass

    memory = make_memory()
    memory.add("Ana likes jazz.", speaker="Ana", when=day(0))
    original = memory._write._write_fact
    calls = []

    def explode_on_second(run, draft, index, vector):
        calls.append(index)
        if index == 1:
            raise Boom()
        original(run, draft, index, vector)

    memory._write._write_fact = explode_on_second
    with pytest.raises(Boom):
        memory.add("Ana likes rock. Ana likes blues.", speaker="Ana", when=day(1))
    assert calls == [0, 1]
    assert [f.text for f in memory.facts()] == ["Ana likes jazz"]
    assert [f.text for f in make_memory().facts()] == ["Ana likes jazz"]


def test_validity_uses_conversation_time_not_the_wall_clock(decider, make_memory):
    script_move(decider)
    memory = make_memory()
    conversation(memory)
    paris = memory._store.get("d1#0")
    assert paris.valid_until == day(30) and paris.valid_at(day(29)) and not paris.valid_at(day(31))


def test_extraction_sees_the_last_ten_messages_and_ten_similar_facts(decider, make_memory):
    from tests.engram.conftest import SentenceExtractor

    extractor = SentenceExtractor()
    memory = make_memory(extractor=extractor)
    for n in range(13):
        memory.add(f"Ana read book {n}.", speaker="Ana", when=day(n))
    context = extractor.contexts[-1]
    assert [m.text for m in context.previous] == [f"Ana read book {n}." for n in range(2, 12)]
    assert len(context.similar_facts) == 10 and context.current_date == "2026-09-23"


def test_flag_presets_describe_themselves():
    assert Flags.frozen() == Flags() and Flags.frozen().describe()["belief_evidence"] == "argmax_gt_half"
    assert Flags.original_frozen().describe()["belief_evidence"] == "all"
    assert Flags.e2().policy == "direct" and Flags.reranking_off().retrieval_rerank is False


def test_hygiene_links_duplicates_within_subject_and_relation_and_can_undo_them(decider, make_memory):
    decider.on("edge_type", {"hobby": 0.95}, new="jazz")
    memory = make_memory()
    memory.add("Ana likes jazz.", speaker="Ana", when=day(0))
    memory.add("Ana enjoys jazz music.", speaker="Ana", when=day(1))
    memory.add("Ben likes jazz.", speaker="Ben", when=day(2))  # another subject: never compared with Ana's
    decider.on("same_fact", 0.9)
    report = memory.hygiene()
    assert (report.groups, report.pairs, report.links) == (1, 1, 1)
    assert memory.stats()["same_as_links"] == 1 and len(memory.facts()) == 3  # linked, nothing deleted
    decider.on("same_fact", 0.1)
    assert memory.hygiene().drops == 1 and memory.stats()["same_as_links"] == 0


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.datetimes(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=st.dictionaries(st.text(max_size=8), _json_values, max_size=8))
def test_stored_records_are_the_text_json_dumps_gives(value):
    # The store keeps one encoder instead of building one per row; the text must be json.dumps' to the byte
    # (non-ASCII, NaN and infinities, nesting, and str() of what JSON cannot hold, such as datetimes, in events).
    assert _event_json(value) == json.dumps(value, sort_keys=True, default=str)
    plain = json.loads(json.dumps(value, default=str))
    assert _decision_json(plain) == json.dumps(plain, sort_keys=True)


def test_an_update_writes_the_changing_columns_as_an_insert_writes_them():
    from engram._store import _FACT_COLUMNS, _MUTABLE_COLUMNS, _fact_row, _mutable_row
    from tests.engram.test_store_exact import fact

    closed = fact(3, "Ana hikes", closed=True)
    for stored in (fact(2, "Ana cooks"), closed):
        row = _fact_row(stored)
        assert _mutable_row(stored) == (*(row[_FACT_COLUMNS.index(c)] for c in _MUTABLE_COLUMNS), stored.seq)


def test_a_fact_read_back_from_its_row_is_the_fact_that_was_stored():
    # Facts are built from rows without running Fact's __init__: every field, its type and their order must be
    # what __init__ gives.
    import dataclasses
    from datetime import timedelta

    from engram._store import _fact_from_row, _fact_row
    from tests.engram.test_store_exact import fact

    closed = dataclasses.replace(fact(3, "Ana hikes", closed=True), closed_by="m9#0", disputed=True, refines="m1#0")
    for stored in (fact(2, "Ana cooks"), closed, dataclasses.replace(closed, valid_until=day(4) + timedelta(hours=1))):
        built = _fact_from_row(_fact_row(stored))
        assert built == stored and list(vars(built).items()) == list(vars(stored).items())
        assert [type(v) for v in vars(built).values()] == [type(v) for v in vars(stored).values()]
        assert built.is_open == stored.is_open


def test_records_assembled_on_hot_paths_are_the_records_their_constructor_builds():
    # `assemble` skips __init__, so it is only right for records without __post_init__, given every field.
    from engram._types import Ask, Fact, Line, assemble
    from engram.questions import RELEVANT_TO_QUERY
    from tests.engram.test_store_exact import fact

    stored = fact(4, "Ana paints")
    examples = [
        (Fact, dict(vars(stored))),
        (Ask, {"key": "rel_0", "question": RELEVANT_TO_QUERY, "refs": {"memory": {"text": "x"}}, "target": "m1#0"}),
        (Line, {"text": "[said 2023-05-01] Ana paints", "fact_id": "m4#0", "source": "cosine", "score": 0.5}),
    ]
    for cls, fields in examples:
        assert not hasattr(cls, "__post_init__")
        built = assemble(cls, **fields)
        assert built == cls(**fields) and list(vars(built).items()) == list(vars(cls(**fields)).items())
