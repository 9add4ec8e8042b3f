"""A researcher reports the numbers the field reports: LoCoMo's official F1 and adversarial rule, mem0's F1 and
BLEU-1, each checked here on examples worked out by hand from the published rules (docs/metrics.md)."""

from __future__ import annotations

import pytest

from bench.analysis.scoring import llm_free_scores
from bench.analysis.scoring.locomo import adversarial_correct, locomo_f1, normalize, token_f1
from bench.analysis.scoring.mem0 import mem0_bleu1, mem0_f1


def test_locomo_normalisation_drops_commas_case_ascii_punctuation_and_four_small_words() -> None:
    assert normalize("The cat, and A dog!") == "cat dog"
    assert normalize("7 May, 2023") == "7 may 2023"
    assert normalize(2022) == "2022"  # an integer gold is its digits
    # typographic quotes are not ASCII punctuation: LoCoMo keeps them inside the word
    assert normalize("Caroline’s") == "caroline’s"
    assert normalize("Caroline's") == "carolines"


def test_locomo_token_f1_by_hand() -> None:
    assert token_f1("7 May, 2023", "7 May 2023") == 1.0
    # painting of sunset -> [paint, of, sunset] vs [sunset, paint]: overlap 2, P 2/3, R 1, F1 0.8
    assert token_f1("The painting of a sunset", "sunset painting") == pytest.approx(0.8)
    assert token_f1("salt and pepper", "salt pepper") == 1.0  # "and" is dropped like an article
    assert token_f1("she moved in 2022", 2022) == pytest.approx(0.4)  # P 1/4, R 1
    # repeated tokens count as often as they occur in both: [yes, yes, yes] vs [yes] -> P 1/3, R 1, F1 0.5
    assert token_f1("yes yes yes", "yes") == pytest.approx(0.5)
    assert token_f1("", "Paris") == 0.0


def test_porter_not_snowball_decides_words_like_shes() -> None:
    # "she's" normalises to "shes": Porter strips the plural-like s ("she"), Snowball keeps "shes".
    assert token_f1("she's", "she") == 1.0
    # the typographic apostrophe survives normalisation, so "Caroline’s" never matches "Caroline"
    assert token_f1("Caroline’s", "Caroline") == 0.0
    assert token_f1("Caroline's", "Caroline") == 1.0


def test_multi_hop_splits_both_sides_on_commas_and_averages_the_best_match_of_each_gold_part() -> None:
    assert locomo_f1("pottery, camping", "camping, pottery", category=1) == 1.0
    # one prediction part [camp, potteri] against gold parts pottery (2/3), camping (2/3), painting (0): mean 4/9
    assert locomo_f1("camping and pottery", "pottery, camping, painting", category=1) == pytest.approx(4 / 9)
    # an empty gold part is kept and scores 0, as LoCoMo keeps it: (1 + 0) / 2
    assert locomo_f1("Paris", "Paris,", category=1) == pytest.approx(0.5)


def test_open_domain_scores_only_the_gold_before_its_first_semicolon() -> None:
    assert locomo_f1("Liberal", "Liberal; because she supports LGBTQ rights", category=3) == 1.0
    assert locomo_f1("because she supports LGBTQ rights", "Liberal; because she supports", category=3) == 0.0
    assert locomo_f1("Liberal", "Liberal; because she supports LGBTQ rights", category=4) == pytest.approx(2 / 7)


def test_locomo_adversarial_rule_accepts_only_its_two_phrases() -> None:
    assert adversarial_correct("That is NOT MENTIONED in the conversation.") == 1.0
    assert adversarial_correct("No information available about her sister.") == 1.0
    assert adversarial_correct("I don't know") == 0.0
    assert adversarial_correct("It was never mentioned") == 0.0  # "never mentioned" is not "not mentioned"
    assert locomo_f1("Not mentioned", "Not mentioned", category=5) is None  # category 5 has no F1


def test_mem0_f1_compares_token_sets_split_on_four_punctuation_marks() -> None:
    # {the, sunset, painted} vs {a, sunset, painting}: 1 shared, P 1/3, R 1/3
    assert mem0_f1("The sunset, painted.", "a sunset painting") == pytest.approx(1 / 3)
    assert mem0_f1("yes yes yes", "yes") == 1.0  # sets: a repeated word counts once
    assert mem0_f1("Caroline's", "Caroline") == 0.0  # no stemming, the apostrophe stays attached
    assert mem0_f1("Paris!", "paris?") == 1.0
    assert mem0_f1("", "Paris") == 0.0
    assert mem0_f1("  ", "Paris") == 0.0


def test_mem0_bleu1_is_clipped_unigram_precision_times_the_brevity_penalty() -> None:
    # 3 of 3 answer words in the 6-word gold: precision 1, brevity penalty exp(1 - 6/3)
    assert mem0_bleu1("the cat sat", "the cat sat on the mat") == pytest.approx(0.36787944, abs=1e-7)
    assert mem0_bleu1("Paris is in France", "Paris") == pytest.approx(0.25)  # 1 of 4, no penalty
    assert mem0_bleu1("the the the", "the cat") == pytest.approx(1 / 3)  # "the" clipped to its 1 in the gold
    assert mem0_bleu1("dog", "cat") == 0.0  # no shared word: 0, smoothing does not apply
    # word_tokenize detaches final punctuation: [paris, .] vs [paris]: precision 1/2
    assert mem0_bleu1("Paris.", "Paris") == pytest.approx(0.5)


def test_every_answer_gets_the_metrics_that_apply_to_its_category() -> None:
    f1, scores = llm_free_scores("camping, pottery", "pottery, camping", "multi-hop")
    assert f1 == 1.0 and set(scores or {}) == {"mem0-f1", "mem0-bleu1"}
    f1, scores = llm_free_scores("Not mentioned in the conversation", "Not mentioned", "adversarial")
    assert f1 is None and scores == {"locomo-adversarial": 1.0}
    f1, scores = llm_free_scores("She moved to Boston", "Boston", "update")  # the update sets: plain token F1
    assert f1 == pytest.approx(0.4)
    assert llm_free_scores(None, "Boston", "single-hop") == (None, None)
