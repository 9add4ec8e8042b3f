"""The slices a researcher gets are exactly the ones the article used, counted from the data."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime

import pytest

from bench.data import files as data
from bench.data.slices import SLICE_NAMES, load_slice, slice_names
from bench.errors import DataError


def test_dev_slice_is_conv26_sessions_1_to_4_with_35_questions() -> None:
    dev = load_slice("dev")
    assert len(dev.messages) == 76
    assert {m.session for m in dev.messages} == {1, 2, 3, 4}
    assert len(dev.scored_questions) == 35
    assert all(q.category in (1, 2, 3, 4) for q in dev.questions)
    assert dev.checkpoints == (4,)
    assert all(q.asked_at == (4,) for q in dev.questions)


def test_dev_and_stress_match_the_original_slice_files() -> None:
    for name, relative in (("dev", data.V1_DEV_SLICE), ("stress", data.V1_STRESS_SLICE)):
        ours = load_slice(name)
        original = data.load_v1_slice_definition(relative)
        assert [m.id for m in ours.messages] == [m["id"] for m in original["messages"]]
        assert [m.text for m in ours.messages] == [m["text"] for m in original["messages"]]
        assert [q.id for q in ours.questions] == [f"conv-26:{q['idx']}" for q in original["questions"]]


def test_stress_asks_each_question_once_its_evidence_is_in_and_at_every_later_checkpoint() -> None:
    stress = load_slice("stress")
    assert (len(stress.messages), len(stress.scored_questions)) == (215, 80)
    assert stress.checkpoints == (4, 7, 10)
    first_session_question = next(q for q in stress.questions if q.evidence == ("D1:3",))
    assert first_session_question.asked_at == (4, 7, 10)
    late = [q for q in stress.questions if q.asked_at == (10,)]
    assert late and all(max(int(e.split(":")[0][1:]) for e in q.evidence) > 7 for q in late)


def test_dev_updates_appends_30_update_messages_in_date_order_as_pseudo_sessions() -> None:
    s = load_slice("dev_updates")
    updates = s.messages[76:]
    assert len(updates) == 30
    assert [m.session for m in updates] == list(range(5, 35))
    assert [m.timestamp for m in updates] == sorted(m.timestamp for m in updates)
    items = [q for q in s.questions if q.category_name == "update"]
    assert len(items) == 30 and len(s.questions) == 65
    assert Counter(q.tier for q in items) == {"easy": 15, "subtle": 10, "fulfilled": 5}
    assert Counter(q.expected for q in items) == {"close": 15, "no_close": 10, "close_fulfilled": 5}
    assert all(q.asked_at == (34,) for q in s.questions)


def test_dev_updates2_adds_28_messages_and_asks_only_the_20_set2_questions() -> None:
    s = load_slice("dev_updates2")
    assert len(s.messages) == 76 + 30 + 28
    assert len(s.questions) == 20
    assert Counter(q.type for q in s.questions) == {
        "point_in_time": 5,
        "chain_current": 5,
        "chain_point_in_time": 5,
        "no_temporal_cue": 5,
    }


def test_heldout_conversations_score_610_questions_and_keep_190_adversarial_unscored() -> None:
    slices = [load_slice(f"heldout:{c}") for c in ("conv-30", "conv-41", "conv-42", "conv-43")]
    assert [len(s.scored_questions) for s in slices] == [81, 152, 199, 178]
    by_category = Counter(q.category_name for s in slices for q in s.scored_questions)
    assert by_category == {"multi-hop": 110, "temporal": 119, "open-domain": 33, "single-hop": 348}
    unscored = [q for s in slices for q in s.questions if not q.scored]
    assert len(unscored) == 190 and {q.category_name for q in unscored} == {"adversarial"}


def test_message_times_come_from_the_session_date_plus_the_turn_index_in_seconds() -> None:
    dev = load_slice("dev")
    first, second = dev.messages[0], dev.messages[1]
    assert first.session_date == "1:56 pm on 8 May, 2023"
    assert first.timestamp == datetime(2023, 5, 8, 13, 56, 0, tzinfo=UTC)
    assert (second.timestamp - first.timestamp).total_seconds() == 1
    for s in (load_slice(n) for n in SLICE_NAMES):
        stamps = [m.timestamp for m in s.messages]
        assert stamps == sorted(stamps), s.name


def test_messy_locomo_answers_survive_unchanged() -> None:
    raw = {
        (conv["sample_id"], position): qa.get("answer")
        for conv in data.load_locomo()
        for position, qa in enumerate(conv["qa"])
    }
    kinds = {type(v).__name__ for v in raw.values()}
    assert {"int", "str"} <= kinds  # LoCoMo mixes integer and string answers
    for name in SLICE_NAMES:
        for q in load_slice(name).questions:
            if q.id.startswith("conv-"):
                conv, position = q.id.rsplit(":", 1)
                assert q.gold == raw[(conv, int(position))] and type(q.gold) is type(raw[(conv, int(position))])


def test_unknown_slice_name_lists_the_accepted_ones() -> None:
    with pytest.raises(Exception, match="expected one of dev, stress"):
        load_slice("devv")


def test_cli_prints_every_slice_count_as_json() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "slices", "--json"], capture_output=True, text=True, check=True
    ).stdout
    rows = {row["name"]: row for row in json.loads(out)}
    assert set(rows) == set(slice_names())
    assert rows["dev"] == {
        "name": "dev",
        "messages": 76,
        "questions": 35,
        "unscored": 0,
        "by_category": {"multi-hop": 5, "open-domain": 2, "single-hop": 19, "temporal": 9},
        "checkpoints": [4],
        "description": "conv-26, first 4 sessions: the development slice (the article's first table)",
    }
    assert (rows["stress"]["messages"], rows["stress"]["questions"], rows["stress"]["checkpoints"]) == (
        215,
        80,
        [4, 7, 10],
    )
    assert sum(rows[f"heldout:{c}"]["unscored"] for c in ("conv-30", "conv-41", "conv-42", "conv-43")) == 190


TEN = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
# The per-category totals of LoCoMo's ten conversations (its code's numbering: 1 multi-hop, 2 temporal,
# 3 open-domain, 4 single-hop, 5 adversarial); 1,540 scored questions is the number the field reports.
LOCOMO_TOTALS = {"multi-hop": 282, "temporal": 321, "open-domain": 96, "single-hop": 841, "adversarial": 446}


def _json_rows() -> dict[str, dict]:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "slices", "--json"], capture_output=True, text=True, check=True
    ).stdout
    return {row["name"]: row for row in json.loads(out)}


def test_slices_json_lists_all_ten_locomo_conversations_with_the_fields_totals() -> None:
    rows = _json_rows()
    assert [name for name in rows if name.startswith("locomo:")] == [f"locomo:{c}" for c in TEN]
    summed: Counter[str] = Counter()
    for conv in TEN:
        row = rows[f"locomo:{conv}"]
        summed.update(row["by_category"])
        summed.update(row.get("unscored_by_category", {}))
    assert dict(summed) == LOCOMO_TOTALS
    pooled = rows["locomo"]
    assert pooled["questions"] == 1540 and pooled["unscored"] == 446
    assert pooled["by_category"] | pooled["unscored_by_category"] == LOCOMO_TOTALS
    assert pooled["parts"] == [f"locomo:{c}" for c in TEN]
    assert pooled["messages"] == sum(rows[f"locomo:{c}"]["messages"] for c in TEN)


def test_a_locomo_conversation_slice_is_the_whole_conversation_asked_after_its_last_session() -> None:
    conv44 = load_slice("locomo:conv-44")
    raw = data.locomo_conversation("conv-44")
    assert len(conv44.messages) == sum(len(v) for k, v in raw["conversation"].items() if k[8:].isdigit())
    assert len(conv44.questions) == len(raw["qa"]) == 158
    assert conv44.checkpoints == (max(m.session for m in conv44.messages),)
    assert conv44.speakers == (raw["conversation"]["speaker_a"], raw["conversation"]["speaker_b"])
    assert {q.category_name for q in conv44.questions if not q.scored} == {"adversarial"}


def test_the_pooled_locomo_slice_runs_each_conversation_on_its_own() -> None:
    pooled = load_slice("locomo")
    assert [part.conversation for part in pooled.runs()] == list(TEN)
    assert all(len(part.runs()) == 1 and part.runs()[0] is part for part in pooled.parts)
    assert len(pooled.questions) == sum(len(part.questions) for part in pooled.parts) == 1986


def test_heldout_accepts_any_conversation_the_frozen_configuration_was_not_tuned_on_and_records_it() -> None:
    for conv in ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50"):
        held = load_slice(f"heldout:{conv}")
        summary = held.summary()
        assert summary["tuned_on"] == ["conv-26"] and summary["article_heldout"] is False
        assert held.questions == load_slice(f"locomo:{conv}").questions
    assert load_slice("heldout:conv-30").summary()["article_heldout"] is True
    with pytest.raises(DataError, match="not tuned on; found conv-26, the dev conversation"):
        load_slice("heldout:conv-26")


@pytest.mark.parametrize("name", ["locomo:conv-99", "heldout:conv-7", "locomo:"])
def test_an_unknown_conversation_id_is_one_line_naming_the_data_file(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "run", "full-context", "--slice", name, "--stack", "offline", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "locomo10.json" in lines[0] and "conv-44" in lines[0]
    assert done.stdout == ""
