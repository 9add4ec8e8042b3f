"""Stacks: which model serves each role of a run, declared as data in `stacks/<name>.toml`.

A stack file names, per role, one model as `provider/model` (`anthropic/claude-haiku-4-5`, `jev/jev-1.13.0`,
`openai/gpt-4o-mini`, `offline/rules-decider`), and per provider its settings: base URL, prices in USD per million
input/output tokens, concurrency, timeouts and retries. Providers register themselves (`bench.models.providers`), so routing
a role to its client is a registry lookup on the provider name, never a guess from the model's spelling.

    description = "..."            # one line, shown by `engram-bench stacks`
    label = "..."                  # how tables and banners name the stack (optional)
    import_only = false            # true: results are imported under this name, it cannot be run here
    [roles]                        # every role of ROLES, each "provider/model"
    extract = "anthropic/claude-haiku-4-5"
    [providers.anthropic]          # optional per provider: base_url, concurrency, timeout_s, retries,
    concurrency = 4                # max_retry_after_s, requests_per_second, paid, a price per model, and
                                   # the capability flags json_schema, tools, max_array_items,
                                   # max_string_length, repair_json, default_max_tokens
    [providers.anthropic.prices]
    claude-haiku-4-5 = { input = 1.0, output = 5.0 }

The `offline` provider is the local stand-ins ($0, no key); every other model is priced, so each model a stack
names on one needs a price (a local server is priced 0 explicitly). `paid = false` declares a provider free in this
stack (a server on your own machine): every price of it must then be 0, and a run on it asks no spending question. An arm may override a role's model
(`Arm.models_for`). Results record `provider/model` for every role, with the exact version that ran.
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import ConfigError
from bench.models.provider import FREE, Price, ProviderSettings, is_standin, provider_class, registered_class
from bench.settings import STACKS as STACKS_DIR_ENV
from bench.settings import stacks_dir_at_import
from bench.vocab import REPO_ROOT, SHIPPED_STACKS_DIR

ROLES = ("extract", "decide", "escalate", "llm_decider", "answer", "judge", "count_tokens")
# The zero-key stack's name (stacks/offline.toml, results/offline/): every role a labelled stand-in. It is also the
# stack of a run that names none, whatever keys the environment holds: a key never chooses to spend money. A stack
# name, spelled like the stand-in provider's id (bench.models.cache.OFFLINE_PROVIDER) but never compared with it.
OFFLINE_STACK = "offline"
DEFAULT_STACK = OFFLINE_STACK
# The shipped stack files; $ENGRAM_STACKS_DIR's are read beside them (`_stack_files`), listed at import (their names
# are CLI choices) and each parsed only when its stack is used.
STACKS_DIR = SHIPPED_STACKS_DIR
STACK_KEYS = ("description", "label", "import_only", "roles", "providers")


def user_stacks_dir() -> Path | None:
    """$ENGRAM_STACKS_DIR: a folder of one's own stack files, read beside the shipped ones (None when unset)."""
    folder = stacks_dir_at_import()
    return None if folder == SHIPPED_STACKS_DIR else folder


def _stack_files(directory: Path | None = None) -> dict[str, Path]:
    """name -> file. `directory` alone when given (tests); else the shipped stacks/ and then $ENGRAM_STACKS_DIR, whose
    file of a shipped name replaces it. A missing or empty folder of one's own adds nothing (a stack it lacks is
    named as unknown when asked for), and a file is only parsed when its stack is used, so a broken one is named
    then, not at every command's start."""
    folders = [directory] if directory is not None else [STACKS_DIR, user_stacks_dir()]
    files: dict[str, Path] = {}
    for folder in folders:
        if folder is not None and folder.is_dir():
            files |= {path.stem: path for path in sorted(folder.glob("*.toml"))}
    return files


def _stack_names(directory: Path | None = None) -> tuple[str, ...]:
    return tuple(sorted(_stack_files(directory)))


def _folders_named(directory: Path | None) -> str:
    if directory is not None:
        return str(directory)
    mine = user_stacks_dir()
    if mine is None:
        return _display(STACKS_DIR)
    state = "" if mine.is_dir() else ", which does not exist"
    return f"{_display(STACKS_DIR)} and ${STACKS_DIR_ENV} {mine}{state}"


def _import_only(path: Path) -> bool:
    """A light read of one flag (full validation happens when the stack is loaded)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")).get("import_only") is True
    except (OSError, tomllib.TOMLDecodeError):
        return False


# Every stack a result may name: one file each in stacks/. Imported stacks (`import_only = true`, e.g. paper-v3,
# the v3 paper's stack, whose results live under results/v3/) are files too, but cannot be run here.
RESULT_STACK_NAMES = _stack_names()
IMPORTED_STACK_NAMES = tuple(name for name, path in _stack_files().items() if _import_only(path))
STACK_NAMES = tuple(name for name in RESULT_STACK_NAMES if name not in IMPORTED_STACK_NAMES)  # runnable
PAPER_V3_STACK = "paper-v3"
IMPORTED_STACK = "imported"  # result files from another run, with the models each states (import-v1)


@dataclass(frozen=True)
class ModelRef:
    """One model of one provider: `provider/model` is its identity in stack files, arms and results."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"

    @classmethod
    def parse(cls, text: Any, where: str) -> ModelRef:
        if not isinstance(text, str) or text.count("/") < 1 or not all(text.split("/", 1)):
            raise ConfigError(
                f"{where}: expected a model as provider/model (e.g. anthropic/claude-haiku-4-5), found {text!r}"
            )
        provider, model = text.split("/", 1)
        return cls(provider, model)


_SETTING_TYPES: dict[str, tuple[type, ...]] = {
    "base_url": (str,),
    "concurrency": (int,),
    "timeout_s": (int, float),
    "retries": (int,),
    "max_retry_after_s": (int, float),
    "requests_per_second": (int, float),
    "max_array_items": (int,),
    "max_string_length": (int,),
    "default_max_tokens": (int,),
}
# Capability flags of a server (true or false), read by the gateway endpoint's translations.
_CAPABILITY_FLAGS = ("json_schema", "tools", "repair_json")


@dataclass(frozen=True)
class StackSpec:
    """One stack file, validated."""

    name: str
    path: Path
    description: str
    label: str
    import_only: bool
    roles: Mapping[str, ModelRef]
    providers: Mapping[str, ProviderSettings]

    def settings(self, provider: str) -> ProviderSettings:
        return self.providers.get(provider, ProviderSettings())


# ------------------------------------------------------------------------------------------------------ loading


def unknown_stack(name: str, where: str = "--stack") -> ConfigError:
    """The one line for a stack name (`where`: the option or file field it came from) that names no runnable stack,
    with the folders that were read."""
    return ConfigError(
        f"{where}: expected one of {', '.join(STACK_NAMES)} (files in {_folders_named(None)}), found {name!r}"
    )


def check_stack_name(name: str, where: str = "--stack") -> None:
    """The one check of a stack name a run, plan or grid is asked for: a runnable stack, else `unknown_stack`."""
    if name not in STACK_NAMES:
        raise unknown_stack(name, where)


def load_stack_spec(name: str, directory: Path | None = None) -> StackSpec:
    """The stack `name` from its file (see `_stack_files`); a bad file is one ConfigError line naming the field."""
    files = _stack_files(directory)
    if name not in files:
        raise ConfigError(
            f"--stack: expected one of {', '.join(sorted(files))} (files in {_folders_named(directory)}), "
            f"found {name!r}"
        )
    return _load(files[name])


@functools.cache
def _load(path: Path) -> StackSpec:
    where = _display(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: expected a readable TOML stack file, found an error ({exc})") from None
    unknown = sorted(set(raw) - set(STACK_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; expected one of: {', '.join(STACK_KEYS)}")
    description = raw.get("description")
    if not isinstance(description, str) or not description:
        raise ConfigError(f"{where}: field 'description' must be a one-line text, found {description!r}")
    import_only = raw.get("import_only", False)
    if not isinstance(import_only, bool):
        raise ConfigError(f"{where}: field 'import_only' must be true or false, found {import_only!r}")
    roles = _roles(where, raw.get("roles"))
    providers = _providers(where, raw.get("providers", {}))
    spec = StackSpec(
        name=path.stem,
        path=path,
        description=description,
        label=str(raw.get("label") or f"{path.stem} stack"),
        import_only=import_only,
        roles=roles,
        providers=providers,
    )
    if not import_only:
        for role, ref in roles.items():
            check_model(spec, ref, f"{where}: roles.{role}")
    return spec


def _roles(where: str, table: Any) -> dict[str, ModelRef]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: field 'roles' must be a table of role -> provider/model, found {table!r}")
    unknown = sorted(set(table) - set(ROLES))
    if unknown:
        raise ConfigError(f"{where}: unknown role 'roles.{unknown[0]}'; expected one of: {', '.join(ROLES)}")
    missing = [role for role in ROLES if role not in table]
    if missing:
        raise ConfigError(f"{where}: missing field 'roles.{missing[0]}' (every role needs a model)")
    return {role: ModelRef.parse(table[role], f"{where}: roles.{role}") for role in ROLES}


def _providers(where: str, table: Any) -> dict[str, ProviderSettings]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: field 'providers' must be a table of provider -> settings, found {table!r}")
    out = {}
    for provider, settings in table.items():
        here = f"{where}: providers.{provider}"
        if not isinstance(settings, dict):
            raise ConfigError(f"{here}: expected a table of settings, found {settings!r}")
        allowed = (*_SETTING_TYPES, *_CAPABILITY_FLAGS, "paid", "prices")
        unknown = sorted(set(settings) - set(allowed))
        if unknown:
            raise ConfigError(f"{here}: unknown setting {unknown[0]!r}; expected one of: {', '.join(allowed)}")
        values: dict[str, Any] = {}
        for name, types in _SETTING_TYPES.items():
            if name in settings:
                values[name] = _setting(f"{here}.{name}", settings[name], types)
        for flag in _CAPABILITY_FLAGS:
            if flag in settings:
                if not isinstance(settings[flag], bool):
                    raise ConfigError(f"{here}.{flag}: expected true or false, found {settings[flag]!r}")
                values[flag] = settings[flag]
        values["prices"] = _prices(f"{here}.prices", settings.get("prices", {}))
        if "paid" in settings:
            values["paid"] = _paid(here, settings["paid"], values["prices"])
        out[provider] = ProviderSettings(**values)
    return out


def _setting(where: str, value: Any, types: tuple[type, ...]) -> Any:
    if isinstance(value, bool) or not isinstance(value, types):
        raise ConfigError(f"{where}: expected {' or '.join(t.__name__ for t in types)}, found {value!r}")
    if isinstance(value, (int, float)) and (not math.isfinite(value) or value <= 0):
        raise ConfigError(f"{where}: expected a positive number, found {value!r}")
    if isinstance(value, str) and not value.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: expected an http(s):// URL, found {value!r}")
    return value


def _paid(where: str, value: Any, prices: Mapping[str, Price]) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.paid: expected true or false, found {value!r}")
    priced = [model for model, price in prices.items() if price != FREE]
    if not value and priced:
        raise ConfigError(f"{where}.paid: false, but {where}.prices.{priced[0]} is not 0; expected free models only")
    return value


def _prices(where: str, table: Any) -> dict[str, Price]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table of model -> {{ input, output }}, found {table!r}")
    out = {}
    for model, price in table.items():
        if not isinstance(price, dict) or set(price) != {"input", "output"}:
            raise ConfigError(f"{where}.{model}: expected {{ input = USD, output = USD }} per million, found {price!r}")
        for side in ("input", "output"):
            value = price[side]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value >= 0):
                raise ConfigError(f"{where}.{model}.{side}: expected USD per million tokens >= 0, found {value!r}")
        out[model] = Price(float(price["input"]), float(price["output"]))
    return out


def is_paid(provider: str, settings: ProviderSettings) -> bool:
    """Whether calls to `provider` bill money under these settings: the stack's `paid`, else the provider's own."""
    return settings.paid if settings.paid is not None else provider_class(provider).paid


def check_model(spec: StackSpec, ref: ModelRef, where: str) -> None:
    """A model this stack can serve: a registered provider, and a price when the provider is paid."""
    cls = provider_class(ref.provider, where)
    cls.check_model(ref.model, spec.settings(ref.provider), where)
    if cls.paid and ref.model not in spec.settings(ref.provider).prices:
        raise ConfigError(
            f"{where}: {ref} has no price in {_display(spec.path)} [providers.{ref.provider}.prices]; "
            f"expected one before spending on it (a local server: price it 0)"
        )


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def stack_specs(directory: Path | None = None) -> dict[str, StackSpec]:
    return {name: load_stack_spec(name, directory) for name in _stack_names(directory)}


# ------------------------------------------------------------------------------------------------------- prices


@functools.cache
def _price_table(directory: Path | None = None) -> dict[tuple[str, str], tuple[Price, str]]:
    table: dict[tuple[str, str], tuple[Price, str]] = {}
    for name in _stack_names(directory):
        try:
            spec = load_stack_spec(name, directory)
        except ConfigError:
            continue  # a broken stack file of one's own is named when its stack is used, not when pricing another
        for provider, settings in spec.providers.items():
            for model, price in settings.prices.items():
                seen = table.get((provider, model))
                if seen is not None and seen[0] != price:
                    raise ConfigError(
                        f"{_display(spec.path)}: providers.{provider}.prices.{model} differs from {seen[1]}; "
                        f"expected one price per provider/model across stacks"
                    )
                table[(provider, model)] = (price, _display(spec.path))
    return table


def price_for(provider: str, model: str) -> Price:
    """USD per million tokens of `provider/model`, from the stack files (one price per model across stacks);
    a provider that is not paid (the stand-ins) costs $0. A paid model without a price is refused: nothing is ever
    spent blind."""
    registered = registered_class(provider)
    if registered is not None and not registered.paid:
        return FREE
    found = _price_table().get((provider, model))
    if found is None:
        known = ", ".join(f"{p}/{m}" for p, m in sorted(_price_table()))
        raise ConfigError(
            f"stacks/*.toml [providers.{provider}.prices]: expected a price for {provider}/{model} before "
            f"spending on it, found none (known: {known})"
        )
    return found[0]


# ------------------------------------------------------------------------------------------------------- stacks


@dataclass(frozen=True)
class Stack:
    """The model behind every role for one run: a stack file with an arm's overrides applied."""

    spec: StackSpec
    refs: Mapping[str, ModelRef]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def models(self) -> dict[str, str]:
        """role -> "provider/model", as declared (a result records the exact versions that ran)."""
        return {role: str(ref) for role, ref in self.refs.items()}

    def ref(self, role: str) -> ModelRef:
        try:
            return self.refs[role]
        except KeyError:
            raise ConfigError(f"models.{role}: expected a role among {', '.join(ROLES)}, found {role!r}") from None

    def settings(self, provider: str) -> ProviderSettings:
        return self.spec.settings(provider)

    @property
    def standins(self) -> list[str]:
        """Roles served by a stand-in (listed in every result)."""
        return sorted(role for role, ref in self.refs.items() if is_standin(ref.provider))

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def providers(self) -> list[str]:
        return sorted({ref.provider for ref in self.refs.values()})

    @property
    def paid_providers(self) -> list[str]:
        """The providers of this stack that bill money (a provider declared `paid = false` here does not)."""
        return [p for p in self.providers if is_paid(p, self.settings(p))]


def build_stack(name: str, overrides: Mapping[str, str] | None = None, directory: Path | None = None) -> Stack:
    """The stack `name` with an arm's role overrides applied (see `Arm.models_for`); refuses an import-only stack,
    an unknown role, provider or model format, and an unpriced paid model, before anything is loaded or sent."""
    spec = load_stack_spec(name, directory)
    if spec.import_only:
        raise ConfigError(
            f"--stack {name}: {_display(spec.path)} is import-only (its results are imported, not run here); "
            f"expected a runnable stack among {', '.join(n for n, s in stack_specs(directory).items() if not s.import_only)}"
        )
    refs = dict(spec.roles)
    for role, model in (overrides or {}).items():
        where = f"models.{role}" if name == "paper" else f"models.{name}.{role}"
        if role not in ROLES:
            raise ConfigError(f"{where}: expected a role among {', '.join(ROLES)}, found {role!r}")
        ref = ModelRef.parse(model, where)
        if name == OFFLINE_STACK and not is_standin(ref.provider):
            raise ConfigError(f"{where}: the offline stack only takes offline/* stand-ins, found {model!r}")
        check_model(spec, ref, where)
        refs[role] = ref
    stack = Stack(spec=spec, refs=refs)
    for provider in stack.providers:
        provider_class(provider).check_ready(spec.settings(provider), f"{_display(spec.path)}: providers.{provider}")
    return stack


def provider_of(model: str) -> str:
    """The provider of a `provider/model` id."""
    return ModelRef.parse(model, "model").provider


def stack_label(name: str) -> str:
    """How tables and banners name a stack (its file's `label`)."""
    return load_stack_spec(name).label


def __getattr__(name: str) -> Any:
    # The labels live in the stack files; these two names are read by commands that print them.
    if name == "OFFLINE_LABEL":
        return stack_label(OFFLINE_STACK)
    if name == "PAPER_LABEL":
        return stack_label("paper")
    raise AttributeError(f"module 'bench.models.stacks' has no attribute {name!r}")
