"""Every threshold and cap in engram.config, checked against the article's own text (parsed, never retyped).

The article lives in the sibling folder `shared/seed/` (a fresh clone has `shared/` next to the repo). If it is
missing the test fails and says where it looked: a silent skip would let the code drift from the paper.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram import config

REPO = Path(__file__).resolve().parents[2]
ARTICLE = REPO.parent / "shared" / "seed" / "000_58f91aa07d70b2af.txt"
NUMBER_WORDS = {"three": 3, "five": 5, "ten": 10, "twenty": 20, "thirty": 30}


@pytest.fixture(scope="module")
def article() -> str:
    if not ARTICLE.is_file():
        pytest.fail(f"{ARTICLE}: expected the v1 article next to the repo (../shared/seed/), found nothing")
    return ARTICLE.read_text(encoding="utf-8")


def _number(token: str) -> float:
    return float(NUMBER_WORDS[token]) if token in NUMBER_WORDS else float(token)


def _theta(text: str, name: str) -> float:
    """The value in the article's '$θ_{name} = x$'."""
    found = {float(v) for v in re.findall(rf"θ_{{{name}}}\s*=\s*([0-9.]+)", text)}
    assert len(found) == 1, f"article: expected one value for θ_{name}, found {sorted(found)}"
    return found.pop()


@pytest.mark.parametrize(
    "name, value",
    [
        ("act", config.THETA_ACT),
        ("esc", config.THETA_ESC),
        ("rel", config.THETA_REL),
        ("close", config.THETA_CLOSE),
        ("open", config.THETA_OPEN),
    ],
)
def test_each_threshold_equals_the_article(article, name, value):
    assert value == _theta(article, name)


def test_relevance_is_strictly_greater_than_theta_rel(article):
    assert re.search(r"ρ \(u, q\) > θ_{rel}", article), "article: expected 'ρ (u, q) > θ_{rel}' (strict)"


def test_belief_clamp_equals_the_article(article):
    low, high = re.search(r"b_{u} \\in \[([0-9.]+), ([0-9.]+)\]", article).groups()
    assert (config.BELIEF_MIN, config.BELIEF_MAX) == (float(low), float(high))


def test_write_path_caps_equal_the_article(article):
    # "compared with the ten most similar stored facts, plus up to ten facts that cosine similarity tends to miss"
    cosine, graph = re.search(
        r"compared with the (\w+) most similar stored facts, plus up to (\w+) facts", article
    ).groups()
    assert config.CANDIDATE_K == _number(cosine)
    assert config.GRAPH_CANDIDATE_K == _number(graph)
    # C(f) = Top_10 s_cos(f, .) ∪ Top_10 G(f)
    top_cos, top_graph = re.search(
        r"C \(f\) = {Top}_{(\d+)} s_{\\cos} \(f, \\cdot\) \\cup {Top}_{(\d+)} G \(f\)", article
    ).groups()
    assert (config.CANDIDATE_K, config.GRAPH_CANDIDATE_K) == (int(top_cos), int(top_graph))


def test_extraction_inputs_equal_the_article(article):
    previous, similar = re.search(
        r"seeing the last (\w+) messages and the (\w+) most similar stored facts", article
    ).groups()
    assert config.EXTRACT_PREVIOUS_MESSAGES == _number(previous)
    assert config.EXTRACT_SIMILAR_FACTS == _number(similar)
    assert re.search(rf"m_{{t - {config.EXTRACT_PREVIOUS_MESSAGES}}}", article)


def test_read_path_caps_equal_the_article(article):
    assert config.SHORTLIST_K == int(re.search(r"A \(q\) = {Top}_{(\d+)} s_{\\cos}", article).group(1))
    assert config.SHORTLIST_K == _number(re.search(r"One Jev request scores all (\w+) shortlisted", article).group(1))
    assert config.FLOOR_K == _number(re.search(r"The (\w+) closest facts are kept as a floor", article).group(1))


def test_superseding_and_relation_sets_equal_the_article(article):
    from engram.questions import RELATIONS, SUPERSEDING

    r_set = re.search(r"R = {([a-z, ]+)},", article).group(1).split(", ")
    s_set = re.search(r"S = {([a-z, ]+)} \\subset R", article).group(1).split(", ")
    assert set(RELATIONS) == set(r_set) and SUPERSEDING == set(s_set)
