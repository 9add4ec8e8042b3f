"""Datasets, registered by name: what each declares about itself (its slices, its categories with their numbering,
which categories are scored) and how it builds a slice.

A `Dataset` is plain data plus one function, `build(slice_name) -> Slice`. The harness asks the registry, never a
list: `load_slice` finds the dataset that declares a slice name (`dataset_for_slice`), and a result file's category
names are checked against the categories some registered dataset declares (`check_category`), so the result schema
holds no closed list of categories.

Adding a dataset = one module in this package that calls `register_dataset(Dataset(...))` (modules here are
discovered on the first lookup), or, from another package, an entry point in group `engram_bench.datasets` whose
object is a `Dataset`. `docs/examples/dataset/` shows a whole one.

Categories have the dataset's own numbering (`Category.code`), and other projects' numberings are alias maps:
`Dataset.numberings = {"mem0": {1: "single-hop", ...}}` says what each code is called there, so
`dataset.from_label("single-hop", "mem0")` is LoCoMo's code 1, `multi-hop`, and `dataset.label("multi-hop", "mem0")`
is `single-hop`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.errors import DataError, RegistryError, ResultError
from bench.registry import Registry, import_modules

__all__ = [
    "DATASETS",
    "Category",
    "Dataset",
    "check_category",
    "dataset_for_slice",
    "declared_categories",
    "register_dataset",
    "slice_patterns",
]

#: in a declared slice name, a family of slices: `heldout:<conv>` declares every name starting `heldout:`
FAMILY_MARK = "<"


@dataclass(frozen=True)
class Category:
    """One question category: its name in result files, its code in the dataset's own numbering (None when the
    dataset numbers none), and whether its questions count towards accuracy (`scored`)."""

    name: str
    code: int | None = None
    scored: bool = True
    description: str = ""


@dataclass(frozen=True)
class Dataset:
    """What a dataset declares, and how it builds its slices.

    `slices`: the slice names it builds, in the order `slices` lists them; a name with a `<...>` part is a family
    (`locomo:<conv>` is every name starting `locomo:`). `build`: the function that gives the `bench.data.slices.Slice`
    of one of them, or its place as "module:function" (imported on first use, so a declaration stays pure data
    that anything may import); None for a dataset read by a script, with no slice. `load(name)` calls it. `includes`: datasets whose questions its slices also ask
    (`dev_updates` asks LoCoMo's). `numberings`: other projects' names for the codes. `reread`: build again on
    every load (data outside `data/` that may change between loads) instead of once per process.
    """

    name: str
    description: str
    categories: tuple[Category, ...]
    slices: tuple[str, ...] = ()
    # -> bench.data.slices.Slice, named in words only: slices imports this module to find a slice's dataset, and the
    # data package has no import circle, not even for annotations
    build: Callable[[str], Any] | str | None = field(default=None, compare=False, repr=False)
    includes: tuple[str, ...] = ()
    numberings: Mapping[str, Mapping[int, str]] = field(default_factory=dict)
    source: str = ""
    reread: bool = False

    def __post_init__(self) -> None:
        names = [c.name for c in self.categories]
        if len(set(names)) != len(names):
            raise RegistryError(f"dataset {self.name!r}: expected each category once, found {names}")
        codes = [c.code for c in self.categories if c.code is not None]
        if len(set(codes)) != len(codes):
            raise RegistryError(f"dataset {self.name!r}: expected each category code once, found {codes}")
        for numbering, labels in self.numberings.items():
            unknown = sorted(set(labels) - set(codes))
            if unknown:
                raise RegistryError(
                    f"dataset {self.name!r}: numbering {numbering!r} names codes {unknown} the dataset lacks"
                )

    # ------------------------------------------------------------------------------------------------ categories

    @property
    def category_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.categories)

    @property
    def scored_categories(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.categories if c.scored)

    @property
    def codes(self) -> dict[int, str]:
        """code -> category name, in the dataset's own numbering."""
        return {c.code: c.name for c in self.categories if c.code is not None}

    def category(self, key: str | int, where: str | None = None) -> Category:
        """The category named `key`, or numbered `key` in the dataset's own numbering; DataError otherwise."""
        for category in self.categories:
            if category.name == key or (isinstance(key, int) and category.code == key):
                return category
        prefix = f"{where}: " if where else ""
        known = ", ".join(f"{c.code} {c.name}" if c.code is not None else c.name for c in self.categories)
        raise DataError(f"{prefix}expected a category of dataset {self.name} ({known}), found {key!r}")

    def label(self, key: str | int, numbering: str) -> str:
        """What `numbering` calls one of this dataset's categories (given by name or own code)."""
        code = self.category(key).code
        labels = self._numbering(numbering)
        if code is None or code not in labels:
            raise DataError(f"dataset {self.name}: numbering {numbering!r} has no label for category {key!r}")
        return labels[code]

    def from_label(self, label: str | int, numbering: str) -> Category:
        """The category that `numbering` calls `label` (a label or that numbering's code)."""
        for code, name in self._numbering(numbering).items():
            if label in (name, code):
                return self.category(code)
        raise DataError(
            f"dataset {self.name}: expected a label of numbering {numbering!r} "
            f"({', '.join(f'{c} {n}' for c, n in self._numbering(numbering).items())}), found {label!r}"
        )

    def _numbering(self, numbering: str) -> Mapping[int, str]:
        try:
            return self.numberings[numbering]
        except KeyError:
            raise DataError(
                f"dataset {self.name}: expected a numbering of {', '.join(sorted(self.numberings)) or '(none)'}, "
                f"found {numbering!r}"
            ) from None

    # ---------------------------------------------------------------------------------------------------- slices

    def owns(self, slice_name: str) -> bool:
        """Whether `slice_name` is one of this dataset's slices (a declared name, or a member of a family)."""
        for declared in self.slices:
            if FAMILY_MARK in declared:
                # The family owns every name with its prefix, even a bad one: its builder names what is wrong.
                if slice_name.startswith(declared.split(FAMILY_MARK, 1)[0]):
                    return True
            elif slice_name == declared:
                return True
        return False

    def load(self, slice_name: str) -> Any:
        """Build one of this dataset's slices (a `bench.data.slices.Slice`)."""
        build = self.build
        if build is None:
            raise DataError(f"slice {slice_name!r}: dataset {self.name} declares it but builds no slice")
        if isinstance(build, str):
            module, _, function = build.partition(":")
            build = getattr(importlib.import_module(module), function)
        return build(slice_name)

    def to_json(self) -> dict[str, Any]:
        """The declaration as JSON-able data (for `engram-bench slices --json` and the docs)."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "slices": list(self.slices),
            "includes": list(self.includes),
            "categories": [
                {"name": c.name, "code": c.code, "scored": c.scored, "description": c.description}
                for c in self.categories
            ],
            "numberings": {k: {str(code): n for code, n in v.items()} for k, v in sorted(self.numberings.items())},
        }


# ------------------------------------------------------------------------------------------------------ registry


def _discover() -> None:
    """Import every module of this package once, so their register_dataset calls run."""
    import_modules(__name__)


def _adopt(name: str, factory: Any) -> Dataset:
    if not isinstance(factory, Dataset):
        raise RegistryError(f"dataset {name!r}: expected a bench.data.datasets.Dataset, found {factory!r}")
    if factory.name != name:
        raise RegistryError(f"dataset {name!r}: registered under {name!r} but calls itself {factory.name!r}")
    return factory


DATASETS: Registry[Dataset] = Registry(
    "dataset",
    discover=_discover,
    adopt=_adopt,
    hint="a module in bench/data/datasets/ calling register_dataset(Dataset(...)), see docs/examples/dataset/",
)


def register_dataset(dataset: Dataset) -> Dataset:
    """Make `dataset` findable by name and by its slices; a name taken by another dataset is a RegistryError."""
    DATASETS.add(dataset.name, dataset, origin=_caller_module())
    return dataset


def _caller_module() -> str:
    frame = sys._getframe(2)  # register_dataset's caller: the module that declares the dataset
    return str(frame.f_globals.get("__name__", "?"))


def _loaded() -> tuple[list[Dataset], list[str]]:
    """Every registered dataset that loads, and a one-line reason for each installed one that does not (a broken
    plug-in must not stop every other slice or result)."""
    datasets, broken = [], []
    for name in DATASETS.names():
        try:
            datasets.append(DATASETS.get(name))
        except RegistryError as exc:
            broken.append(str(exc))
    return datasets, broken


def slice_patterns() -> tuple[str, ...]:
    """Every slice name or family any dataset declares, dataset by dataset."""
    datasets, _ = _loaded()
    return tuple(pattern for dataset in datasets for pattern in dataset.slices)


def dataset_for_slice(slice_name: str) -> Dataset:
    """The dataset that declares `slice_name`; DataError listing every declared slice otherwise."""
    datasets, broken = _loaded()
    owners = [d for d in datasets if d.owns(slice_name)]
    if len(owners) > 1:
        raise RegistryError(
            f"slice {slice_name!r}: declared by datasets {', '.join(d.name for d in owners)}; rename one's slices"
        )
    if owners:
        return owners[0]
    accepted = ", ".join(pattern for d in datasets for pattern in d.slices)
    also = f" ({'; '.join(broken)})" if broken else ""
    raise DataError(f"slice {slice_name!r}: expected one of {accepted}{also}")


def declared_categories() -> dict[str, tuple[str, ...]]:
    """category name -> the datasets that declare it."""
    datasets, _ = _loaded()
    out: dict[str, tuple[str, ...]] = {}
    for dataset in datasets:
        for name in dataset.category_names:
            out[name] = (*out.get(name, ()), dataset.name)
    return out


class CategoryCheck:
    """Checks category names against the registered datasets, reading the registry once (one per result file)."""

    def __init__(self) -> None:
        self.known = declared_categories()

    def __call__(self, name: Any, where: str) -> None:
        if not isinstance(name, str) or name not in self.known:
            raise ResultError(
                f"{where}: expected a category a registered dataset declares ({', '.join(sorted(self.known))}), "
                f"found {name!r}"
            )


def check_category(name: Any, where: str) -> None:
    """ResultError unless a registered dataset declares the category `name`."""
    CategoryCheck()(name, where)
