"""Arms: a researcher declares what to run in a small TOML file; this module loads, resolves and hashes it.

An arm file `arms/<name>.toml` may contain exactly these keys (anything else is refused, naming the file and key):

    name         = "engram-jev"          # optional; when present it must equal the file name without .toml
    description  = "one line"            # free text; not part of the hash (it changes no behaviour)
    extends      = "engram"              # optional parent arm (a file in the same folder); child keys win,
                                         # tables (settings, models, scoring, token_match, k_by_slice) merge key by key
    system       = "engram"              # a name in the system registry (bench.systems)
    k            = 20 | [3, 4, 5, 20]    # retrieval budget: an int, or a list = a sweep answered from ONE ingestion
    [settings]                           # system settings, checked by the system itself (e.g. engram flags/preset)
    [models]                             # role -> model for the `paper` stack, e.g. decide = "claude-sonnet-4-6";
    [models.offline]                     #   a sub-table named after a stack overrides roles on that stack only
    [k_by_slice]                         # slice name (or "heldout" for every held-out conversation) -> int | list
    [token_match]                        # sweep_arm, reference_arm, reference_k, ks: choose k by pooled mean tokens
    [scoring]                            # adversarial = true: also score LoCoMo category 5 (off by default)
    import_only  = true                  # results only come from an import (e.g. import-v3); `run` refuses it,
                                         # and `system` then names the original's system, registered or not

The canonical hash is the sha256 of the canonical JSON of the resolved arm (after inheritance, without
`description`), so two files that resolve to the same behaviour share a hash, and any behavioural edit changes it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.data.slices import SLICE_NAMES
from bench.errors import ConfigError
from bench.models.stacks import ROLES, STACK_NAMES
from bench.systems import get_system
from bench.vocab import ARMS_DIR, HELDOUT_GROUP, heldout_slices, is_heldout

TOP_LEVEL_KEYS = (
    "name",
    "description",
    "extends",
    "system",
    "settings",
    "models",
    "k",
    "k_by_slice",
    "token_match",
    "scoring",
    "import_only",
)
TOKEN_MATCH_KEYS = ("sweep_arm", "reference_arm", "reference_k", "ks")
SCORING_KEYS = ("adversarial",)


@dataclass(frozen=True)
class ResultNeed:
    """Results a run reads before it can start: `arm` on `slice_name` at every k of `ks`."""

    arm: str
    slice_name: str
    ks: tuple[int, ...]


@dataclass(frozen=True)
class TokenMatchPlan:
    """An arm's `[token_match]` table: answer at the k of a k-sweep arm whose pooled mean retrieved tokens is
    closest to a reference arm's (the choosing itself is `bench.analysis.stats.token_matched_k`)."""

    sweep_arm: str
    reference_arm: str
    reference_k: int
    ks: tuple[int, ...]

    def pooled_slices(self, slice_name: str) -> list[str]:
        """The slices whose answers are pooled: the article matched tokens over its four held-out conversations
        pooled, so on any one of them all four; any other slice matches on itself."""
        article_heldout = heldout_slices()
        return article_heldout if slice_name in article_heldout else [slice_name]

    def needs(self, slice_name: str) -> list[ResultNeed]:
        """The sweep at every candidate k and the reference at its k, on every pooled slice."""
        return [
            need
            for name in self.pooled_slices(slice_name)
            for need in (
                ResultNeed(self.sweep_arm, name, self.ks),
                ResultNeed(self.reference_arm, name, (self.reference_k,)),
            )
        ]


@dataclass(frozen=True)
class Arm:
    """A resolved arm: inheritance applied, every field validated."""

    name: str
    description: str
    system: str
    settings: dict[str, Any]
    models: dict[str, str]  # paper-stack role -> model
    stack_models: dict[str, dict[str, str]]  # stack -> role -> model overrides
    k: tuple[int, ...] | None  # None: the system shows everything it retrieves (no cap)
    k_by_slice: dict[str, tuple[int, ...]]
    token_match: TokenMatchPlan | None
    scoring: dict[str, bool]
    path: Path
    lineage: tuple[str, ...] = field(default=())  # this arm, then its parents
    import_only: bool = False  # results are imported, never run here

    def needs(self, slice_name: str) -> list[ResultNeed]:
        """The results this arm reads before it runs on `slice_name`: a token-matched arm's sweep and reference;
        none for an arm that ingests the slice itself. The runner turns each missing one into an earlier stage."""
        return self.token_match.needs(slice_name) if self.token_match is not None else []

    def ks_for(self, slice_name: str) -> tuple[int, ...] | None:
        """The k values to answer at on `slice_name` (a list means one ingestion, answered at every k)."""
        if slice_name in self.k_by_slice:
            return self.k_by_slice[slice_name]
        if is_heldout(slice_name) and HELDOUT_GROUP in self.k_by_slice:
            return self.k_by_slice[HELDOUT_GROUP]
        return self.k

    def models_for(self, stack: str) -> dict[str, str]:
        """Role overrides this arm asks of `stack` (the stack fills in the rest)."""
        if stack == "paper":
            return {**self.models, **self.stack_models.get("paper", {})}
        return dict(self.stack_models.get(stack, {}))

    @property
    def scores_adversarial(self) -> bool:
        return bool(self.scoring.get("adversarial", False))

    def resolved(self) -> dict[str, Any]:
        """The arm as canonical data: what the hash covers and what `arms --json` prints."""
        return {
            "name": self.name,
            "system": self.system,
            "settings": self.settings,
            "models": self.models,
            "stack_models": self.stack_models,
            "k": list(self.k) if self.k is not None else None,
            "k_by_slice": {key: list(value) for key, value in sorted(self.k_by_slice.items())},
            "token_match": None
            if self.token_match is None
            else {
                "sweep_arm": self.token_match.sweep_arm,
                "reference_arm": self.token_match.reference_arm,
                "reference_k": self.token_match.reference_k,
                "ks": list(self.token_match.ks),
            },
            "scoring": self.scoring,
            # only when set, so the hashes of runnable arms (stamped into committed results) stay as they were
            **({"import_only": True} if self.import_only else {}),
        }

    @property
    def hash(self) -> str:
        return canonical_hash(self.resolved())


def canonical_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------- loading


# An arm name is a plain file stem: it can never reach outside arms/ (no separators, no "..", not absolute).
ARM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def check_arm_name(name: object, where: str = "arm") -> str:
    """`name` itself when it is a plain arm name; ConfigError (naming `where`) otherwise."""
    if not isinstance(name, str) or not ARM_NAME.fullmatch(name):
        raise ConfigError(
            f"{where}: expected a plain arm name (letters, digits, '-' or '_', a file in arms/), found {name!r}"
        )
    return name


def arm_path(name: str, arms_dir: Path = ARMS_DIR) -> Path:
    return Path(arms_dir) / f"{check_arm_name(name)}.toml"


def arm_names(arms_dir: Path = ARMS_DIR) -> list[str]:
    return sorted(path.stem for path in Path(arms_dir).glob("*.toml"))


def load_arm(name: str, arms_dir: Path = ARMS_DIR) -> Arm:
    """Load `arms/<name>.toml`, apply `extends`, validate; a `ConfigError` names the file, field and what fits."""
    arms_dir = Path(arms_dir)
    check_arm_name(name)
    path = arm_path(name, arms_dir)
    if not path.is_file():
        raise ConfigError(
            f"arm {name!r}: no file {path}; expected one of: {', '.join(arm_names(arms_dir)) or '(no arms)'}"
        )
    merged, lineage = _merged_tables(name, arms_dir, chain=())
    return _build_arm(name, path, merged, lineage)


def load_all_arms(arms_dir: Path = ARMS_DIR) -> list[Arm]:
    return [load_arm(name, arms_dir) for name in arm_names(arms_dir)]


@functools.cache
def _short_description(name: str, arms_dir: Path) -> str | None:
    """An arm file's description up to its first aside ("engram, the frozen held-out system (E4_FROZEN)" ->
    "engram, the frozen held-out system"); None for an arm with no readable file (e.g. one only imported)."""
    try:
        description = load_arm(name, arms_dir).description
    except ConfigError:
        return None
    short = re.split(r" \(|; ", description, maxsplit=1)[0].strip()
    return short or None


# Arms that exist only as imported v1 results (no arm file describes them).
IMPORTED_ARM_LABELS = {
    "engram-laya": "engram, frozen, with laya (a zero-shot 421M open model) deciding",
    "engram-jev-v2": "engram, simple 0.85 close policy",
    "mem0-nodates": "mem0, dates removed from context",
}


def arm_label(name: str, k: int | None, arms_dir: Path = ARMS_DIR) -> str:
    """A readable name for an arm at a budget, for exports and listings: its description's first clause (or, for
    an imported arm with no file, what the import says it is), then k."""
    label = _short_description(name, Path(arms_dir)) or IMPORTED_ARM_LABELS.get(name) or f"{name} (imported v1 arm)"
    return f"{label}, k={k}" if k is not None else label


def load_arms_or_errors(arms_dir: Path = ARMS_DIR) -> tuple[list[Arm], list[ConfigError]]:
    """Every arm that loads, and the error of each that does not, so one bad file does not hide the others."""
    loaded, errors = [], []
    for name in arm_names(arms_dir):
        try:
            loaded.append(load_arm(name, arms_dir))
        except ConfigError as exc:
            errors.append(exc)
    return loaded, errors


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: expected UTF-8 text, found byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
        ) from None
    unknown = sorted(set(data) - set(TOP_LEVEL_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; expected one of: {', '.join(TOP_LEVEL_KEYS)}")
    if "name" in data and data["name"] != path.stem:
        raise ConfigError(f"{path}: field 'name' must equal the file name {path.stem!r}, found {data['name']!r}")
    return data


def _merged_tables(name: str, arms_dir: Path, chain: tuple[str, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The arm's own table merged over its parents'; returns it with the lineage (child first)."""
    path = arm_path(name, arms_dir)
    data = _read_toml(path)
    parent = data.get("extends")
    if parent is None:
        return data, (name,)
    if not isinstance(parent, str):
        raise ConfigError(f"{path}: field 'extends' must be an arm name (string), found {type(parent).__name__}")
    check_arm_name(parent, f"{path}: field 'extends'")
    if parent in chain or parent == name:
        raise ConfigError(f"{path}: field 'extends' makes a cycle: {' -> '.join((*chain, name, parent))}")
    if not arm_path(parent, arms_dir).is_file():
        raise ConfigError(
            f"{path}: field 'extends' names unknown arm {parent!r}; expected one of: "
            f"{', '.join(n for n in arm_names(arms_dir) if n != name)}"
        )
    base, lineage = _merged_tables(parent, arms_dir, (*chain, name))
    return _merge(base, data), (name, *lineage)


def _merge(base: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in child.items():
        if key in ("extends", "name"):
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# ------------------------------------------------------------------------------------------------ validation


def _build_arm(name: str, path: Path, data: dict[str, Any], lineage: tuple[str, ...]) -> Arm:
    system = _field(path, data, "system", str, required=True)
    import_only = _field(path, data, "import_only", bool, default=False)
    if not import_only:
        _known_system(path, system)
    settings = _field(path, data, "settings", dict, default={})
    if not import_only:
        _checked_settings(path, system, settings)  # the arm keeps its settings as declared; the system fills defaults
    models, stack_models = _models(path, data.get("models", {}))
    token_match = _token_match(path, data.get("token_match"))
    k = _ks(path, "k", data["k"]) if "k" in data else None
    k_by_slice = _k_by_slice(path, data.get("k_by_slice", {}))
    if token_match is not None:
        # The k of a token-matched arm is chosen at run time from the sweep; an inherited k would only mislead.
        k, k_by_slice = None, {}
    return Arm(
        name=name,
        description=_field(path, data, "description", str, default=""),
        system=system,
        settings=settings,
        models=models,
        stack_models=stack_models,
        k=k,
        k_by_slice=k_by_slice,
        token_match=token_match,
        scoring=_scoring(path, data.get("scoring", {})),
        path=path,
        lineage=lineage,
        import_only=import_only,
    )


def _field(
    path: Path, data: Mapping[str, Any], key: str, kind: type, *, required: bool = False, default: Any = None
) -> Any:
    if key not in data:
        if required:
            raise ConfigError(f"{path}: missing field {key!r} ({kind.__name__})")
        return default
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{path}: field {key!r} must be {_kind_name(kind)}, found {_describe(value)}")
    return value


def _kind_name(kind: type) -> str:
    return {str: "a string", int: "an integer", dict: "a table", bool: "true or false", list: "a list"}.get(
        kind, kind.__name__
    )


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}" if not isinstance(value, (dict, list)) else type(value).__name__


def _ks(path: Path, where: str, value: Any) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in values):
        raise ConfigError(f"{path}: field {where!r} must be a positive integer or a list of them, found {value!r}")
    if len(set(values)) != len(values):
        raise ConfigError(f"{path}: field {where!r} lists a k twice: {value!r}")
    return tuple(sorted(values))


def _k_by_slice(path: Path, table: Any) -> dict[str, tuple[int, ...]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: field 'k_by_slice' must be a table of slice -> k, found {_describe(table)}")
    known = (*SLICE_NAMES, HELDOUT_GROUP)
    for key in table:
        if key not in known:
            raise ConfigError(f"{path}: unknown key 'k_by_slice.{key}'; expected a slice name: {', '.join(known)}")
    return {key: _ks(path, f"k_by_slice.{key}", value) for key, value in table.items()}


def _models(path: Path, table: Any) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: field 'models' must be a table of role -> model, found {_describe(table)}")
    models: dict[str, str] = {}
    per_stack: dict[str, dict[str, str]] = {}
    for key, value in table.items():
        if key in STACK_NAMES:
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: field 'models.{key}' must be a table of role -> model")
            per_stack[key] = {role: _model(path, f"models.{key}.{role}", role, model) for role, model in value.items()}
        else:
            models[key] = _model(path, f"models.{key}", key, value)
    return models, per_stack


def _model(path: Path, where: str, role: str, value: Any) -> str:
    if role not in ROLES:
        raise ConfigError(
            f"{path}: field {where!r}: unknown role {role!r}; expected one of: {', '.join(ROLES + STACK_NAMES)}"
        )
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: field {where!r} must be a model name (string), found {_describe(value)}")
    return value


def _token_match(path: Path, table: Any) -> TokenMatchPlan | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: field 'token_match' must be a table, found {_describe(table)}")
    unknown = sorted(set(table) - set(TOKEN_MATCH_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown key 'token_match.{unknown[0]}'; expected one of: {', '.join(TOKEN_MATCH_KEYS)}"
        )
    missing = [key for key in TOKEN_MATCH_KEYS if key not in table]
    if missing:
        raise ConfigError(f"{path}: missing field 'token_match.{missing[0]}'")
    for key in ("sweep_arm", "reference_arm"):
        if not isinstance(table[key], str):
            raise ConfigError(f"{path}: field 'token_match.{key}' must be an arm name, found {_describe(table[key])}")
        check_arm_name(table[key], f"{path}: field 'token_match.{key}'")
        if not arm_path(table[key], path.parent).is_file():
            raise ConfigError(
                f"{path}: field 'token_match.{key}' names unknown arm {table[key]!r}; expected one of: "
                f"{', '.join(arm_names(path.parent))}"
            )
    reference_k = _ks(path, "token_match.reference_k", table["reference_k"])
    if len(reference_k) != 1:
        raise ConfigError(
            f"{path}: field 'token_match.reference_k' must be one integer, found {table['reference_k']!r}"
        )
    return TokenMatchPlan(
        sweep_arm=table["sweep_arm"],
        reference_arm=table["reference_arm"],
        reference_k=reference_k[0],
        ks=_ks(path, "token_match.ks", table["ks"]),
    )


def _scoring(path: Path, table: Any) -> dict[str, bool]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: field 'scoring' must be a table, found {_describe(table)}")
    for key, value in table.items():
        if key not in SCORING_KEYS:
            raise ConfigError(f"{path}: unknown key 'scoring.{key}'; expected one of: {', '.join(SCORING_KEYS)}")
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: field 'scoring.{key}' must be true or false, found {_describe(value)}")
    return dict(table)


# ---------------------------------------------------------------------------------------- system registry hooks


def _known_system(path: Path, system: str) -> None:
    """Refuse a name the system registry lacks (RegistryError listing the known ones); this loads a plug-in's
    entry point, so a broken one is named here, when an arm uses it."""
    get_system(system, where=f"{path}: field 'system'")


def _checked_settings(path: Path, system: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The system owns its settings' meaning: it refuses unknown keys and wrong types and fills in defaults."""
    try:
        return get_system(system).validate_settings(settings, where="settings")
    except ConfigError as exc:
        raise ConfigError(f"{path}: field {exc}") from None
