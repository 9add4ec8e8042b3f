"""Datasets declare their slices, their categories with their numbering, and which categories are scored; slices
are found and category names checked through those declarations, not through lists in the harness."""

from __future__ import annotations

import pytest

from bench.data.datasets import DATASETS, Category, Dataset, dataset_for_slice, declared_categories
from bench.data.slices import load_slice, slice_names
from bench.errors import DataError, RegistryError


def test_locomo_declares_its_own_numbering_and_scores_all_but_adversarial() -> None:
    locomo = DATASETS.get("locomo")
    assert locomo.codes == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    assert locomo.scored_categories == ("multi-hop", "temporal", "open-domain", "single-hop")
    assert locomo.category(5).scored is False


def test_mem0s_names_for_locomos_codes_are_an_alias_map() -> None:
    locomo = DATASETS.get("locomo")
    # What mem0's per-category table calls "single-hop" is LoCoMo's code 1, multi-hop; and the other way round.
    assert locomo.from_label("single-hop", "mem0").name == "multi-hop"
    assert locomo.from_label("open-domain", "mem0").name == "single-hop"
    assert locomo.from_label(3, "mem0").name == "open-domain"
    assert locomo.label("single-hop", "mem0") == "open-domain"
    assert locomo.label("temporal", "mem0") == "temporal"
    with pytest.raises(DataError, match="numbering 'mem0' has no label for category 'adversarial'"):
        locomo.label("adversarial", "mem0")  # mem0's evaluation skips category 5
    with pytest.raises(DataError, match="expected a numbering of mem0, found 'zep'"):
        locomo.from_label("single-hop", "zep")


def test_every_listed_slice_belongs_to_exactly_one_dataset_and_asks_only_declared_categories() -> None:
    for name in slice_names():
        owner = dataset_for_slice(name)
        if name.startswith("locomo:") and name != "locomo:conv-26":
            continue  # the whole conversations are built the same way; the pooled `locomo` covers them
        allowed = set(owner.category_names)
        for included in owner.includes:
            allowed |= set(DATASETS.get(included).category_names)
        asked = {q.category_name for q in load_slice(name).questions}
        assert asked <= allowed, f"{name} asks {sorted(asked - allowed)}, undeclared by {owner.name}"
    assert dataset_for_slice("dev_updates").name == "update-set-1"
    assert dataset_for_slice("dev_updates2").name == "update-set-2"
    assert dataset_for_slice("longmemeval:s").name == "longmemeval"


def test_an_unknown_slice_lists_every_declared_one() -> None:
    with pytest.raises(DataError) as caught:
        load_slice("dev-but-bigger")
    assert str(caught.value) == (
        "slice 'dev-but-bigger': expected one of dev, stress, heldout:<conv>, locomo:<conv>, locomo, "
        "longmemeval:oracle, longmemeval:<split>[/<subset>], dev_updates, dev_updates2"
    )


def test_the_contradiction_pairs_declare_their_tiers_and_no_slice() -> None:
    pairs = DATASETS.get("contradiction-pairs")
    assert pairs.category_names == ("easy", "medium", "subtle") and pairs.slices == ()
    assert declared_categories()["subtle"] == ("contradiction-pairs",)
    assert declared_categories()["update2"] == ("update-set-2",)


def test_a_declaration_with_a_repeated_category_or_a_stray_alias_is_refused() -> None:
    with pytest.raises(RegistryError, match="expected each category once"):
        Dataset("riddles", "riddles", (Category("pun"), Category("pun")))
    with pytest.raises(RegistryError, match="expected each category code once"):
        Dataset("riddles", "riddles", (Category("pun", 1), Category("rebus", 1)))
    with pytest.raises(RegistryError, match=r"numbering 'elsewhere' names codes \[7\] the dataset lacks"):
        Dataset("riddles", "riddles", (Category("pun", 1),), numberings={"elsewhere": {7: "pun"}})


def test_two_datasets_claiming_one_slice_name_are_refused_when_it_is_loaded() -> None:
    from bench.data.datasets import register_dataset

    register_dataset(Dataset("shadow-dev", "claims dev", (Category("shade"),), slices=("dev",)))
    try:
        with pytest.raises(RegistryError, match="slice 'dev': declared by datasets locomo, shadow-dev"):
            dataset_for_slice("dev")
    finally:
        DATASETS.remove("shadow-dev")
