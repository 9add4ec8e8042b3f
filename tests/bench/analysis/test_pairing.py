"""The one paired-comparison object: the join by question id, the missing-question policy, and the figures that
`compare`, `compare --metric` and the paper draw from it."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.analysis.pairing import SHARED, Pairing
from bench.analysis.stats import compare_paired, discordance
from bench.errors import QuestionSetMismatch, ResultError


def _labels(name: str, values: dict[str, int]) -> pd.Series:
    return pd.Series(values, name=name)


def test_join_is_by_question_id_whatever_order_each_side_lists_them() -> None:
    lantern = _labels("lantern", {"q3": 1, "q1": 0, "q2": 1, "q4": 1})
    harbour = _labels("harbour", {"q1": 1, "q2": 1, "q4": 0, "q3": 0})
    pairing = Pairing.join(lantern, harbour)
    assert list(pairing.d.index) == ["q1", "q2", "q3", "q4"]
    assert pairing.d.tolist() == [-1.0, 0.0, 1.0, 1.0]
    assert pairing.aligned_b().index.tolist() == lantern.index.tolist()
    table = pairing.discordance()
    assert (table.only_a, table.only_b, table.both) == (2, 1, 1)


def test_strict_policy_names_the_first_question_one_side_lacks() -> None:
    quill = _labels("quill arm", {"w1": 1, "w2": 0, "w7": 1})
    ember = _labels("ember arm", {"w1": 1, "w2": 1})
    with pytest.raises(QuestionSetMismatch, match="'w7' in quill arm but not in ember arm"):
        Pairing.join(quill, ember)


def test_shared_policy_keeps_the_common_questions_and_counts_what_each_side_lost() -> None:
    quill = _labels("quill", {"w1": 1, "w2": 0, "w7": 1})
    ember = _labels("ember", {"w1": 1, "w2": 1, "w9": 0, "w8": 1})
    pairing = Pairing.join(quill, ember, policy=SHARED)
    assert pairing.n == 2
    assert pairing.dropped == (1, 2)
    with pytest.raises(QuestionSetMismatch, match="share questions"):
        Pairing.join(quill, _labels("elsewhere", {"z1": 1}), policy=SHARED)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ResultError, match="expected the policy"):
        Pairing.join(_labels("a", {"x": 1}), _labels("b", {"x": 0}), policy="lenient")  # type: ignore[arg-type]


def test_judged_figures_equal_the_statistics_functions_called_directly() -> None:
    ids = [f"c{i:02d}" for i in range(40)]
    a = pd.Series([(i * 7) % 3 == 0 for i in range(40)], index=ids, name="A").astype(int)
    b = pd.Series([(i * 5) % 4 == 0 for i in range(40)], index=ids, name="B").astype(int)
    convs = pd.Series(["conv-x" if i < 22 else "conv-y" for i in range(40)], index=ids)
    pairing = Pairing.join(a, b, convs)
    assert pairing.judged(draws=300, seed=11) == compare_paired(a, b, convs, draws=300, seed=11)
    assert pairing.discordance() == discordance(a, b)
    assert pairing.cluster_interval(draws=300, seed=11) == pairing.judged(draws=300, seed=11).cluster


def test_graded_comparison_with_one_conversation_has_no_cluster_interval() -> None:
    ids = ["g1", "g2", "g3", "g4"]
    a = pd.Series([0.5, 0.25, 1.0, 0.0], index=ids, name="A")
    b = pd.Series([0.5, 0.5, 0.75, 0.0], index=ids, name="B")
    pairing = Pairing.join(a, b, pd.Series("conv-solo", index=ids))
    graded = pairing.graded("f1", draws=200, seed=3)
    assert graded.cluster is None
    assert graded.n == 4
    assert graded.mean_a == pytest.approx(0.4375) and graded.mean_b == pytest.approx(0.4375)
    assert graded.difference.estimate == pytest.approx(0.0)
    rows = pairing.graded_by(pd.Series(["temporal", "temporal", "multi-hop", "multi-hop"], index=ids))
    assert rows["group"].tolist() == ["multi-hop", "temporal"]
    assert rows["delta"].tolist() == pytest.approx([0.125, -0.125])


def test_a_cluster_bootstrap_without_conversations_is_refused() -> None:
    pairing = Pairing.join(_labels("a", {"x": 1, "y": 0}), _labels("b", {"x": 0, "y": 0}))
    with pytest.raises(ResultError, match="conversation of each question"):
        pairing.cluster_bootstrap(draws=10)
