"""The number registry behind paper/numbers.json.

Every number the tables, figures and article print is registered once, with its value, its printed form and the
result files it was computed from (with their sha256), so the article template holds references, never digits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import NumberError
from bench.report.formats import show


@dataclass(frozen=True)
class Number:
    id: str
    value: Any
    display: str
    sources: tuple[str, ...]
    sha256: tuple[str, ...]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "value": self.value,
            "display": self.display,
            "source": list(self.sources),
            "sha256": list(self.sha256),
        }
        if self.note:
            entry["note"] = self.note
        return entry


# A number's printed form must match exactly (that is its printed precision); its stored value only to this relative
# tolerance. Recomputing on another CPU or BLAS build moves some values in the 11th significant digit (temperature
# scaling, ECE), which no printed digit shows.
VALUE_RELATIVE_TOLERANCE = 1e-9
VALUE_ABSOLUTE_TOLERANCE = 1e-12  # for values that are zero or within rounding of it


def values_agree(new: Any, old: Any) -> bool:
    """Equal, except that floats need only agree within the stated tolerance (recursively through lists/dicts)."""
    if isinstance(new, bool) or isinstance(old, bool):
        return new == old
    if isinstance(new, (int, float)) and isinstance(old, (int, float)):
        return math.isclose(new, old, rel_tol=VALUE_RELATIVE_TOLERANCE, abs_tol=VALUE_ABSOLUTE_TOLERANCE)
    if isinstance(new, (list, tuple)) and isinstance(old, (list, tuple)):
        return len(new) == len(old) and all(values_agree(a, b) for a, b in zip(new, old))
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        return new.keys() == old.keys() and all(values_agree(new[k], old[k]) for k in new)
    return new == old


def same_number(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Two numbers.json entries say the same thing: same printed form, same sources, values within tolerance."""
    return (
        new.get("display") == old.get("display")
        and values_agree(new.get("value"), old.get("value"))
        and {k: v for k, v in new.items() if k not in ("value", "display")}
        == {k: v for k, v in old.items() if k not in ("value", "display")}
    )


def stable_numbers_json(new: dict[str, dict[str, Any]], path: Path) -> dict[str, dict[str, Any]]:
    """The entries to write to `path`: an entry the file already holds in the same sense is kept as it is there,
    so rebuilding on another machine leaves an unchanged paper/numbers.json byte for byte."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return new
    if not isinstance(old, dict):
        return new
    return {
        key: old[key] if isinstance(old.get(key), dict) and same_number(entry, old[key]) else entry
        for key, entry in new.items()
    }


@dataclass(frozen=True)
class SourceFile:
    """A result file as numbers.json cites it: a results-relative path (``results/v1/...``) and its hash."""

    path: str
    sha256: str


class Numbers:
    """Registry of printed numbers; ids are unique, lookups of unknown ids fail with the id."""

    def __init__(self) -> None:
        self._numbers: dict[str, Number] = {}

    def add(
        self,
        number_id: str,
        value: Any,
        kind: str,
        sources: Iterable[SourceFile],
        note: str | None = None,
        display: str | None = None,
    ) -> Number:
        if number_id in self._numbers:
            raise NumberError(f"numbers: id {number_id!r} registered twice")
        files = sorted({s.path: s for s in sources}.values(), key=lambda s: s.path)
        if isinstance(value, tuple):
            value = list(value)
        number = Number(
            number_id,
            value,
            display if display is not None else show(value, kind),
            tuple(s.path for s in files),
            tuple(s.sha256 for s in files),
            note,
        )
        self._numbers[number_id] = number
        return number

    def __getitem__(self, number_id: str) -> Number:
        try:
            return self._numbers[number_id]
        except KeyError:
            raise NumberError(f"numbers: no number with id {number_id!r} was computed") from None

    def __contains__(self, number_id: object) -> bool:
        return number_id in self._numbers

    def __iter__(self) -> Iterator[Number]:
        return iter(sorted(self._numbers.values(), key=lambda n: n.id))

    def __len__(self) -> int:
        return len(self._numbers)

    def to_json(self) -> dict[str, Any]:
        return {n.id: n.to_json() for n in self}

    def sources_of(self, ids: Iterable[str]) -> list[str]:
        return sorted({path for i in ids for path in self[i].sources})


def load_numbers_json(path: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NumberError(f"{path}: expected a committed numbers.json, found no file (run `make paper`)") from None
    except json.JSONDecodeError as exc:
        raise NumberError(f"{path}: expected JSON, found a parse error at line {exc.lineno}") from exc
    if not isinstance(raw, dict):
        raise NumberError(f"{path}: expected an object {{id: entry}}, found {type(raw).__name__}")
    return raw
