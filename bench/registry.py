"""One registry for every kind of pluggable part: systems, providers, datasets, metrics, tables, executors, commands.

A `Registry[T]` maps a name to a factory (a class or a function). Parts come from two places:

- this repository: a module registers its part with `registry.register("name")` (a decorator) or
  `registry.add("name", factory)`; an optional `discover` hook imports the package that holds them, once, on the
  first lookup (so adding a built-in part never edits a list);
- an installed package: an entry point in the registry's group (e.g. `engram_bench.systems`), read through
  `importlib.metadata` on the first lookup, and *loaded* (its module imported) only when that name is used. A broken
  entry point therefore never breaks `--help` or a lookup of another name; using it raises one line naming the
  entry point, its distribution and what failed.

A duplicate name or an unknown name is one error, `bench.errors.RegistryError` (a `ConfigError`: exit 2), whose line
lists the known names and says how to add one.

Each part created through `Registry.create(name, **params)` carries `registry_info` (a `RegistryInfo`: kind, name,
the creation parameters and, for a part from an installed package, its distribution and version), as inspect_ai's
components do, so a result file can record what built it. `Registry.info(name, params)` gives the same record for a
part constructed some other way.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any, Generic, TypeVar

from bench.errors import RegistryError

__all__ = [
    "ENTRY_POINT_GROUPS",
    "Registry",
    "RegistryInfo",
    "attach_info",
    "import_modules",
    "registry_info",
]

T = TypeVar("T")
F = TypeVar("F")

#: kind -> the entry-point group an installed package declares its parts of that kind under.
ENTRY_POINT_GROUPS: Mapping[str, str] = {
    "system": "engram_bench.systems",
    "provider": "engram_bench.providers",
    "dataset": "engram_bench.datasets",
    "metric": "engram_bench.metrics",
    "table": "engram_bench.tables",
}

#: the attribute a created part carries its `RegistryInfo` under
INFO_ATTRIBUTE = "registry_info"


@dataclass(frozen=True)
class RegistryInfo:
    """What built one part: its kind and registered name, the parameters it was created with, and where it came
    from (`distribution`/`version` of the installed package for an entry-point part; None for a built-in one)."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    distribution: str | None = None
    version: str | None = None

    @property
    def plugin(self) -> bool:
        """True for a part an installed package provides (through an entry point)."""
        return self.distribution is not None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able mapping; the distribution and version only for an entry-point part (omitted, not null)."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "params": dict(self.params)}
        if self.distribution is not None:
            out["distribution"] = self.distribution
            out["version"] = self.version
        return out


def import_modules(package: str, *, skip: Collection[str] = ()) -> list[ModuleType]:
    """Import every module and sub-package directly inside `package` (a dotted name), in name order, and return them:
    the one way a `discover` hook finds the built-in parts, so a new part is a new module and no list is edited.
    Private modules (a leading underscore) and the names in `skip` (e.g. the module holding the base class) are left
    out. The package is imported by name because it usually imports the registry's module, which cannot import it."""
    found = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(found.__path__))
    return [importlib.import_module(f"{package}.{n}") for n in names if not n.startswith("_") and n not in skip]


def registry_info(part: Any) -> RegistryInfo | None:
    """The `RegistryInfo` a created part carries, or None for a part not created through a registry."""
    info = getattr(part, INFO_ATTRIBUTE, None)
    return info if isinstance(info, RegistryInfo) else None


@dataclass
class _Entry:
    """One name's factory, or the entry point that will give it on first use."""

    factory: Any = None
    origin: str = ""  # where it was registered: a module, or "entry point X of distribution D"
    entry_point: metadata.EntryPoint | None = None
    distribution: str | None = None
    version: str | None = None
    loaded: bool = True
    duplicate_of: str | None = None  # a second entry point claimed this name (refused when used)


class Registry(Generic[T]):
    """name -> factory for one kind of part.

    `kind` names the part in messages ("system"); `group` is the entry-point group of installed packages (None: no
    plug-ins); `discover` imports the built-in parts, once, before the first lookup; `adopt(name, factory)` checks a
    factory and may return a replacement (e.g. set a class's `name`), called for built-in and entry-point parts
    alike; `hint` says how to add a part of this kind (ends the unknown-name message).
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        discover: Callable[[], None] | None = None,
        adopt: Callable[[str, Any], T] | None = None,
        hint: str = "",
    ) -> None:
        self.kind = kind
        self.group = group if group is not None else ENTRY_POINT_GROUPS.get(kind)
        self._discover = discover
        self._adopt = adopt
        self._hint = hint
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        self._discovered = discover is None
        self._discovering = False
        self._scanned = self.group is None
        self._loading: set[str] = set()

    # ---------------------------------------------------------------------------------------------- registration

    def register(self, name: str) -> Callable[[F], F]:
        """Decorator: register the decorated class or function under `name`."""

        def decorate(factory: F) -> F:
            self.add(name, factory)
            return factory

        return decorate

    def add(self, name: str, factory: Any, *, origin: str | None = None) -> None:
        """Register `factory` under `name`; a different factory already there is a `RegistryError`.

        Registering the same object again, or a class of the same module and qualified name (a module imported a
        second time), replaces it quietly."""
        where = origin or _origin_of(factory)
        with self._lock:
            existing = self._entries.get(name)
            if existing is not None and name in self._loading:
                # A plug-in's module registering itself while its own entry point loads it: one part, not two
                # (the entry point's object is what the name gets).
                return
            if existing is not None and existing.entry_point is None and not _same_part(existing.factory, factory):
                raise self._duplicate(name, existing.origin, where)
            adopted = self._adopt(name, factory) if self._adopt is not None else factory
            entry = _Entry(factory=adopted, origin=where)
            if existing is not None and existing.entry_point is not None:
                # An installed package claims a built-in name: refused when the name is used, not at import time
                # (listing names, and --help, must keep working).
                entry.duplicate_of = existing.origin
            self._entries[name] = entry

    def remove(self, name: str) -> None:
        """Forget `name` (tests that register a throwaway part)."""
        with self._lock:
            self._entries.pop(name, None)

    # ---------------------------------------------------------------------------------------------------- lookup

    def names(self) -> list[str]:
        """Every registered name, built-in and from installed packages (no entry point is loaded to list them)."""
        self._ready()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ready()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def get(self, name: str, where: str | None = None) -> T:
        """The factory registered under `name` (an entry point is loaded now); `RegistryError` when unknown."""
        return self._loaded(name, where)[0]

    def is_loaded(self, name: str) -> bool:
        """True when `name` is usable without importing anything: a built-in part, or a plug-in already loaded."""
        self._ready()
        entry = self._entries.get(name)
        return entry is not None and entry.loaded and entry.duplicate_of is None

    def origin(self, name: str) -> str:
        """Where `name` was registered: a module, or the entry point and its distribution."""
        self._ready()
        entry = self._entries.get(name)
        if entry is None:
            raise self._unknown(name, None)
        return entry.origin

    def info(self, name: str, params: Mapping[str, Any] | None = None) -> RegistryInfo:
        """The record of a part built from `name` with `params` (see `RegistryInfo`)."""
        entry = self._loaded(name, None)[1]
        return RegistryInfo(
            kind=self.kind,
            name=name,
            params=dict(params or {}),
            distribution=entry.distribution,
            version=entry.version,
        )

    def create(self, name: str, /, *args: Any, **params: Any) -> Any:
        """Call the factory registered under `name` with `*args` and `**params`, and stamp the part it returns
        with `registry_info` (the keyword parameters are what it records; positional arguments are the run's
        services, such as a gateway, and are not parameters of the part)."""
        factory = self.get(name)
        part = factory(*args, **params)  # type: ignore[operator]
        return attach_info(part, self.info(name, params))

    # ------------------------------------------------------------------------------------------------ internals

    def _loaded(self, name: str, where: str | None) -> tuple[T, _Entry]:
        self._ready()
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                raise self._unknown(name, where)
            if entry.duplicate_of is not None:
                raise self._duplicate(name, entry.duplicate_of, entry.origin)
            if not entry.loaded:
                self._load(name, entry)
            return entry.factory, entry

    def _load(self, name: str, entry: _Entry) -> None:
        assert entry.entry_point is not None
        self._loading.add(name)
        try:
            factory = entry.entry_point.load()
            adopted = self._adopt(name, factory) if self._adopt is not None else factory
        except RegistryError:
            raise
        except Exception as exc:  # a plug-in's import can fail in any way; name it in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise RegistryError(
                f"{self.kind} {name!r}: {entry.origin} failed to load: {type(exc).__name__}"
                f"{': ' + first if first else ''}; fix or uninstall that package"
            ) from exc
        finally:
            self._loading.discard(name)
        entry.factory = adopted
        entry.loaded = True

    def _ready(self) -> None:
        """Import the built-in parts and read the entry points, once."""
        if self._discovered and self._scanned:
            return
        with self._lock:
            if self._discovering:
                # Discovery imports modules that register into this registry and may look names up: a nested
                # lookup sees what is registered so far instead of recursing.
                return
            if not self._discovered:
                self._discovering = True
                try:
                    assert self._discover is not None
                    self._discover()
                    self._discovered = True
                finally:
                    self._discovering = False
            if not self._scanned:
                self._scan_entry_points()
                self._scanned = True

    def refresh_entry_points(self) -> None:
        """Read the entry points again (after sys.path changed): earlier entry-point parts are forgotten."""
        with self._lock:
            for name in [n for n, e in self._entries.items() if e.entry_point is not None]:
                del self._entries[name]
            self._scanned = self.group is None

    def _scan_entry_points(self) -> None:
        assert self.group is not None
        for ep in sorted(metadata.entry_points(group=self.group), key=lambda e: (e.name, e.value)):
            dist_name, version = _distribution_of(ep)
            origin = (
                f"entry point {ep.name} = {ep.value} (group {self.group}, "
                f"distribution {dist_name or 'unknown'} {version or ''})".replace(" )", ")")
            )
            existing = self._entries.get(ep.name)
            if existing is not None:
                if existing.entry_point is not None and existing.entry_point.value == ep.value:
                    continue  # the same distribution seen twice on the path
                # Refused when the name is used, not now: listing names (and --help) must keep working.
                existing.duplicate_of = origin
                continue
            self._entries[ep.name] = _Entry(
                origin=origin, entry_point=ep, distribution=dist_name, version=version, loaded=False
            )

    def _known(self) -> str:
        return ", ".join(sorted(self._entries)) or "(none)"

    def _unknown(self, name: str, where: str | None) -> RegistryError:
        prefix = f"{where}: " if where else ""
        how = self._hint or f"register one with @register({name!r})"
        plugin = f", or install a package with an entry point in group {self.group}" if self.group else ""
        return RegistryError(
            f"{prefix}unknown {self.kind} {name!r}; known {self.kind}s: {self._known()} (to add one: {how}{plugin})"
        )

    def _duplicate(self, name: str, first: str, second: str) -> RegistryError:
        return RegistryError(
            f"{self.kind} {name!r} is registered twice: by {first} and by {second}; "
            f"rename one (known {self.kind}s: {self._known()})"
        )


def attach_info(part: T, info: RegistryInfo) -> T:
    """Stamp `part` with `registry_info` (also a frozen dataclass's); a part that takes no attributes is returned
    unstamped (a plain function's result such as an int cannot carry it)."""
    try:
        object.__setattr__(part, INFO_ATTRIBUTE, info)
    except (AttributeError, TypeError):
        pass
    return part


def _origin_of(factory: Any) -> str:
    module = getattr(factory, "__module__", None) or "?"
    qualname = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return f"{module}.{qualname}"


def _same_part(a: Any, b: Any) -> bool:
    if a is b:
        return True
    # The same class defined again by a second import of its module (importlib.reload, a test's fresh import), or
    # by its file imported under a second module name (pytest's `test_runner` and `tests.bench.run.test_runner`).
    return (
        isinstance(a, type)
        and isinstance(b, type)
        and a.__qualname__ == b.__qualname__
        and (a.__module__ == b.__module__ or _source_file(a) == _source_file(b) is not None)
    )


def _source_file(factory: type) -> str | None:
    try:
        found = inspect.getsourcefile(factory)
    except TypeError:  # a built-in class has no file
        return None
    return os.path.realpath(found) if found else None


def _distribution_of(ep: metadata.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    try:
        return dist.metadata["Name"], dist.version
    except Exception:  # a dist-info without METADATA: the entry point still works, its origin is unknown
        return None, None
