"""Tables and papers as registered parts: what a paper is made of, declared as data, and the tables it names.

- A **table** is a function `(PaperContext) -> list[Table]`: it registers the numbers it prints in `ctx.numbers`
  (each with the result files it came from) and returns its tables, which cite numbers by id only. Built-in tables
  register themselves with `@TABLES.register("name")` in their module of bench/report/parts/ (found there: a new
  table is a new module, no list is edited); an installed package adds one through an entry point in group
  `engram_bench.tables` (see docs/examples/table/). A table's module is imported only when a paper or
  `paper table NAME` uses it.
- A **figure set** is a function `(PaperContext) -> list[FigureSpec]`: the figures a paper draws from its numbers.
- A **paper** is a `PaperSpec`, declared in bench/report/papers.toml: which stack directory it reads, which tables (in order: a later table may cite a
  number an earlier one registered), which figure set, which list of printed numbers `paper check` compares, and
  where it is written. v1 and v3 are two such records, built and checked by the same code (`bench.report.build`,
  `bench.report.check`).

Every table a paper builds carries `registry_info` (kind "table", its name, and for a plug-in its distribution).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import ConfigError, RegistryError
from bench.registry import Registry, import_modules
from bench.report.inputs import ARTICLE_NUMBERS, ResultSet
from bench.report.numbers import Numbers
from bench.report.tables import Table
from bench.vocab import REPO_ROOT

__all__ = [
    "FIGURE_SETS",
    "PAPERS",
    "TABLES",
    "FigureSetFactory",
    "PaperContext",
    "PaperSpec",
    "TableFactory",
]


@dataclass
class PaperContext:
    """What a table reads and where it registers: one stack's result files and the paper's numbers so far.

    `calibration` holds v1's calibration cells (its reliability figure draws them); `state` is shared by the tables
    of one paper (v3's tables pool each arm once and reuse it)."""

    results: ResultSet
    numbers: Numbers
    # bench.report.calibration.CalibrationCell items; typed loosely so that every table module may import the catalog
    # (the report package has no import circle, not even for annotations: tests/paper/test_report_layers.py)
    calibration: list[Any] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)


TableFactory = Callable[[PaperContext], list[Table]]
FigureSetFactory = Callable[[PaperContext], list[Any]]  # -> list[bench.report.figures.FigureSpec]


def _discover() -> None:
    """Import the built-in tables and figure sets: every module of bench.report.parts (by name: they import this
    module, so this module cannot import them)."""
    import_modules("bench.report.parts")


def _adopt_table(name: str, factory: Any) -> TableFactory:
    if not callable(factory):
        raise RegistryError(f"table {name!r}: expected a function (PaperContext) -> list[Table], found {factory!r}")
    return factory


TABLES: Registry[TableFactory] = Registry(
    "table",
    discover=_discover,
    adopt=_adopt_table,
    hint="a module with @TABLES.register(name) on a function (PaperContext) -> list[Table], see docs/examples/table/",
)

FIGURE_SETS: Registry[FigureSetFactory] = Registry(
    "figure set",
    group=None,
    discover=_discover,
    hint="a module with @FIGURE_SETS.register(name) on a function (PaperContext) -> list[FigureSpec]",
)


@dataclass(frozen=True)
class PaperSpec:
    """One paper, as data: what it reads, which tables and figures it builds, what `paper check` compares."""

    name: str
    title: str
    stack_dir: str  # results/<stack_dir>/ by default (v1 can be built from another stack, e.g. offline)
    tables: tuple[str, ...]  # registered table names, in build order
    figures: str  # a registered figure set
    out_dir: Path  # where `paper build` writes it by default
    # the TSV (id, display) of every number the article prints, inside results/<stack_dir>/ (copied by the import)
    article_numbers: str = ARTICLE_NUMBERS
    writes_appendix: bool = False  # a default build also rewrites appendix_e/ (the v1 article's appendix)


def _adopt_paper(name: str, spec: Any) -> PaperSpec:
    if not isinstance(spec, PaperSpec) or spec.name != name:
        raise RegistryError(f"paper {name!r}: expected a bench.report.catalog.PaperSpec named {name!r}, found {spec!r}")
    return spec


PAPERS: Registry[PaperSpec] = Registry(
    "paper",
    group=None,
    discover=lambda: _discover_papers(),
    adopt=_adopt_paper,
    hint="a [name] table in bench/report/papers.toml",
)

PAPERS_FILE = Path(__file__).with_name("papers.toml")
_PAPER_FIELDS = {
    "title": str,
    "stack_dir": str,
    "tables": list,
    "figures": str,
    "article_numbers": str,
    "out_dir": str,
    "writes_appendix": bool,
}


def load_papers(path: Path = PAPERS_FILE) -> list[PaperSpec]:
    """The papers a TOML file declares (one table per paper); a missing or mistyped field is one `ConfigError` line
    naming the file, the paper and the field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: expected a TOML file of papers, found {type(exc).__name__}: {exc}") from None
    specs = []
    for name, fields in raw.items():
        where = f"{path}: paper {name!r}"
        if not isinstance(fields, dict):
            raise ConfigError(f"{where}: expected a table of fields, found {fields!r}")
        unknown = sorted(set(fields) - set(_PAPER_FIELDS))
        if unknown:
            raise ConfigError(f"{where}: expected only {', '.join(_PAPER_FIELDS)}, found {unknown[0]!r}")
        for field_name, kind in _PAPER_FIELDS.items():
            value = fields.get(field_name)
            if not isinstance(value, kind):
                raise ConfigError(f"{where}: field {field_name}: expected a {kind.__name__}, found {value!r}")
        if not fields["tables"] or not all(isinstance(t, str) for t in fields["tables"]):
            raise ConfigError(f"{where}: field tables: expected table names, found {fields['tables']!r}")
        specs.append(
            PaperSpec(
                name=name,
                title=fields["title"],
                stack_dir=fields["stack_dir"],
                tables=tuple(fields["tables"]),
                figures=fields["figures"],
                out_dir=REPO_ROOT / fields["out_dir"],
                article_numbers=fields["article_numbers"],
                writes_appendix=fields["writes_appendix"],
            )
        )
    return specs


def _discover_papers() -> None:
    for spec in load_papers():
        PAPERS.add(spec.name, spec, origin=str(PAPERS_FILE))
