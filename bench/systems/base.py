"""The one interface every memory system in the harness implements, and the registry that finds them by name.

A *system* is what an arm's `system = "..."` names: engram, mem0, or a baseline. The runner drives every system the
same way:

    system = build_system(arm.system, arm.settings, context)   # settings validated against the system's SETTINGS
    for message in slice.messages:
        usage = system.write(message)                            # WriteUsage: costs + recorded latencies
        ...at a checkpoint:
        retrieval = system.retrieve(question, k)                 # RetrievedLines: lines shown + the messages they came from
    system.stats(); system.facts_for_audit(); system.trace(fact_ids); system.describe()
    system.close()

Adding a baseline = one module in `bench/systems/` that defines a `System` subclass decorated with
`@register_system("my-baseline")`, plus one `arms/my-baseline.toml` with `system = "my-baseline"`. Modules in this
package are discovered automatically (no list to edit). Heavy imports (mem0, torch) belong inside methods so that
discovery stays fast.

Why the costs and latencies are *recorded* values: every model call goes through `bench.models.gateway`, which reports the
latency a call was recorded with (the virtual clock), so a replayed run reproduces write p50 / decision p50 exactly.
Systems never time model calls with the wall clock.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from bench.errors import BenchError, ConfigError, RegistryError
from bench.models.embeddings import shared_minilm
from bench.models.providers import Models
from bench.models.stacks import check_stack_name
from bench.registry import Registry, attach_info, import_modules

if TYPE_CHECKING:  # imported for annotations only: these modules belong to other parts and may import heavily
    from bench.data.slices import SliceMessage, SliceQuestion
    from bench.models.gateway import Gateway
    from bench.models.providers import Models
    from engram import Embedder


@dataclass(frozen=True)
class SystemContext:
    """Everything a system needs from the run, besides its own settings.

    `models` maps each role (see `bench.models.stacks.ROLES`) to the `provider/model` that serves it on this stack, e.g.
    {"extract": "anthropic/claude-haiku-4-5", "decide": "jev/jev-1.13.0", ...}; a system builds the roles it uses
    through `hub` (`hub.extractor()`, `hub.decider()`, `hub.chat(role)`), which also records the exact model that
    served each role for the result file.
    `embedder` is the process-wide MiniLM (loaded once); None means "use `shared_minilm()`".
    """

    stack: str
    models: Mapping[str, str]
    gateway: Gateway
    run_dir: Path
    conversation: str
    speakers: tuple[str, ...]
    embedder: Embedder | None = None
    ks: tuple[int | None, ...] = ()  # the k values the run retrieves at (None: all); () when unknown

    def model_for(self, role: str) -> str:
        try:
            return self.models[role]
        except KeyError:
            raise ConfigError(
                f"models.{role}: the {self.stack!r} stack names no model for role {role!r}; "
                f"found roles {sorted(self.models)}"
            ) from None

    @functools.cached_property
    def hub(self) -> Models:
        """This run's model objects per role, on this context's gateway (closed by whoever made the context)."""
        return Models.for_stack(self.stack, self.models, self.gateway, self.get_embedder)

    def get_embedder(self) -> Embedder:
        return self.embedder if self.embedder is not None else shared_minilm()


@dataclass(frozen=True)
class WriteUsage:
    """What writing one message cost, from the recorded figures of its model calls.

    extract_* covers fact extraction (mem0's one add() call counts as extraction); decision_* covers every later
    decision (typed decisions, the LLM decider, escalations). `*_ms` are critical-path latencies of recorded calls
    (concurrent calls count as their maximum). `facts` = facts the message produced (decision p50 is taken over
    messages with at least one fact).
    """

    extract_cost_usd: float = 0.0
    decision_cost_usd: float = 0.0
    extract_ms: float = 0.0
    decision_ms: float = 0.0
    facts: int = 0
    calls: int = 0

    @property
    def cost_usd(self) -> float:
        return self.extract_cost_usd + self.decision_cost_usd

    @property
    def write_ms(self) -> float:
        # Extraction precedes decisions within one message: the two phases add.
        return self.extract_ms + self.decision_ms


@dataclass(frozen=True)
class RetrievedLines:
    """The lines a system shows the answer model for one question, in rank order.

    `sources[i]` holds the ids of the slice messages line i came from (usually one; a merged same_as cluster may
    have several; empty if unknown). The runner uses them for evidence recall. `cost_usd`/`latency_ms` are the
    recorded figures of read-path model calls (engram's reranker); `notes` records anything a reader of the result
    must know (e.g. {"k_ignored": True} for full-context). `details` is optional, one JSON-able mapping per line
    (engram: the fact id, how the line was found, its score); the runner writes it to the trace sidecar, and the
    ids it names are what `System.trace` is asked to explain.
    """

    lines: tuple[str, ...]
    sources: tuple[tuple[str, ...], ...]
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    notes: Mapping[str, Any] = field(default_factory=dict)
    details: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if len(self.lines) != len(self.sources):
            raise ValueError(f"RetrievedLines: {len(self.lines)} lines but {len(self.sources)} source entries")
        if self.details and len(self.details) != len(self.lines):
            raise ValueError(f"RetrievedLines: {len(self.lines)} lines but {len(self.details)} detail entries")

    def top(self, k: int | None) -> RetrievedLines:
        """The first k lines (a system retrieved at a larger k; a smaller budget is a prefix for prefix-stable
        systems)."""
        if k is None:
            return self
        return RetrievedLines(
            self.lines[:k], self.sources[:k], self.cost_usd, self.latency_ms, self.notes, self.details[:k]
        )


@dataclass(frozen=True)
class AuditFact:
    """One stored fact as the update-set scoring sees it (`bench.analysis.metrics`): where it came from and whether it was closed.

    `closed_by` is the id of the slice message whose evidence closed it (None if active or never closed).
    """

    fact_id: str
    text: str
    source_message_id: str | None
    active: bool
    closed_reason: str | None = None
    closed_by: str | None = None


@dataclass(frozen=True)
class Setting:
    """One accepted key of an arm's `settings` table for a system: its type, default and meaning."""

    name: str
    type: type | tuple[type, ...]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None


class System(ABC):
    """A memory system under test. Construct through `build_system`, which validates the settings first."""

    #: registry name, set by @register_system
    name: ClassVar[str] = ""
    #: the accepted settings keys; arms.py validates an arm's `settings` table against these
    SETTINGS: ClassVar[tuple[Setting, ...]] = ()
    #: True when the lines at a small k are always the first lines at a larger k, so the runner may retrieve once
    #: at max(k) and cut (a k-sweep from one retrieval). False makes the runner call retrieve() per k.
    PREFIX_STABLE: ClassVar[bool] = True
    #: Whether the system has a decision layer, so a result reports decision cost and decision p50 for it. None
    #: leaves it to the recorded figures: any write with decision latency or cost means yes.
    DECISION_LAYER: ClassVar[bool | None] = None
    #: True when the system retrieves outside the harness (a server), so a replay runs its search again rather than
    #: reading it from the cache: the runner then compares each run's lines with the first run's
    #: (bench.run.retrievals), and a difference is a health problem.
    REPLAY_CHECKED: ClassVar[bool] = False
    #: Model calls besides answering and judging, per message written, by role, when the system fixes them (an
    #: empty mapping: none at all). None: they depend on what the models say (`engram-bench plan` then counts
    #: them from the offline run of the arm).
    MODEL_CALLS_PER_MESSAGE: ClassVar[Mapping[str, int] | None] = None

    @classmethod
    def write_roles(cls, settings: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The stack roles this system calls while writing, for the run banner (answer, judge and count_tokens are
        every run's). None: not declared, so the banner names every role. Default: the fixed per-message calls."""
        fixed = cls.MODEL_CALLS_PER_MESSAGE
        return None if fixed is None else tuple(role for role, n in fixed.items() if n > 0)

    def __init__(self, settings: Mapping[str, Any], context: SystemContext) -> None:
        self.settings = dict(settings)
        self.context = context

    @abstractmethod
    def write(self, message: SliceMessage) -> WriteUsage:
        """Ingest one conversation turn, in slice order."""

    @abstractmethod
    def retrieve(self, question: SliceQuestion, k: int | None) -> RetrievedLines:
        """At most k lines for the question; k=None means every line the system's read path returns (the article's
        dev table shows engram's whole read path). A system that ignores k says so in RetrievedLines.notes."""

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """Store figures: at least stored, active, tentative, closes_by_reason, reopens, escalations."""

    def before_final_questions(self) -> None:
        """Called once, after the last message of the final checkpoint and before its questions are asked: the
        place for a pass a system runs before it is examined (e.g. a store hygiene pass). Default: nothing."""

    def facts_for_audit(self) -> list[AuditFact]:
        """Every stored fact with its source and closing, for the update-set scoring. Systems that store no
        facts (full-context, raw-turn-rag) return []."""
        return []

    def describe(self) -> dict[str, Any]:
        """Creation parameters recorded in every result (what was built, with which models and modes)."""
        # Settings left at None mean "the default of what they refine" (e.g. an engram flag at its preset value).
        settings = {key: value for key, value in sorted(self.settings.items()) if value is not None}
        return {"system": self.name, "stack": self.context.stack, "settings": settings}

    def trace(self, fact_ids: Sequence[str]) -> dict[str, Any] | None:
        """For the trace sidecar, after the last question and before close(): what the system knows about the
        items its shown lines stand for (the `fact_id`s of `RetrievedLines.details`), as JSON-able data keyed by id,
        e.g. engram's belief, validity window, decisions and superseded chain. None: the system records none."""
        return None

    def close(self) -> None:
        """Release files and threads (qdrant locks, SQLite handles). Idempotent."""

    @classmethod
    def validate_settings(cls, settings: Mapping[str, Any], where: str = "settings") -> dict[str, Any]:
        """Defaults filled in, unknown keys and wrong types refused with one line naming the field."""
        accepted = {s.name: s for s in cls.SETTINGS}
        resolved: dict[str, Any] = {}
        for key, value in settings.items():
            spec = accepted.get(key)
            if spec is None:
                names = ", ".join(sorted(accepted)) or "(none)"
                raise ConfigError(f"{where}.{key}: unknown setting for system {cls.name!r}; accepted: {names}")
            resolved[key] = _checked_value(spec, value, f"{where}.{key}")
        for spec in cls.SETTINGS:
            resolved.setdefault(spec.name, spec.default)
        return resolved


def turn_store_stats(turns: int) -> dict[str, Any]:
    """`System.stats()` of a system whose store is the turns themselves, kept as they came: every one stored and
    active, nothing tentative, closed, reopened or escalated."""
    return {
        "stored": turns,
        "active": turns,
        "tentative": 0,
        "closes_by_reason": {},
        "reopens": 0,
        "escalations": 0,
        "unit": "turn",
    }


def _checked_value(spec: Setting, value: Any, where: str) -> Any:
    expected = spec.type if isinstance(spec.type, tuple) else (spec.type,)
    # bool is an int in Python; an arm writing `k_floor = true` must not pass as an int.
    if isinstance(value, bool) and bool not in expected:
        raise ConfigError(f"{where}: expected {_type_names(expected)}, found boolean {value!r}")
    if not isinstance(value, expected):
        raise ConfigError(f"{where}: expected {_type_names(expected)}, found {type(value).__name__} {value!r}")
    if spec.choices is not None and value not in spec.choices:
        raise ConfigError(f"{where}: expected one of {list(spec.choices)}, found {value!r}")
    return value


def _type_names(types: tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in types)


# ---------------------------------------------------------------------------------------------------------------
# Registry (bench.registry): the modules of this package, and installed packages' `engram_bench.systems` entry points

S = TypeVar("S", bound=type[System])


def _discover() -> None:
    """Import every module of this package once, so their @register_system decorators run."""
    import_modules("bench.systems", skip={"base"})


def _adopt(name: str, factory: Any) -> type[System]:
    """A system is a `System` subclass; it learns the name it is registered under (also one from a plug-in)."""
    if not (isinstance(factory, type) and issubclass(factory, System)):
        raise RegistryError(f"system {name!r}: expected a subclass of bench.systems.System, found {factory!r}")
    factory.name = name
    return factory


SYSTEMS: Registry[type[System]] = Registry(
    "system",
    discover=_discover,
    adopt=_adopt,
    hint="a module in bench/systems/ with a System subclass decorated @register_system(NAME)",
)


def register_system(name: str) -> Callable[[S], S]:
    """Class decorator: make a System findable as `system = "<name>"` in an arm file."""

    def decorate(cls: S) -> S:
        SYSTEMS.add(name, cls)
        return cls

    return decorate


#: The roles every run calls, whatever its system writes with: answering, judging and counting tokens.
EVERY_RUN_ROLES = ("answer", "judge", "count_tokens")


def roles_used(system: str, settings: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The stack roles a run of `system` with these settings calls (its write roles, then EVERY_RUN_ROLES); None
    when the system does not say, or is not one this install knows (an imported result's)."""
    try:
        writes = get_system(system).write_roles(settings)
    except BenchError:
        return None
    return None if writes is None else (*writes, *EVERY_RUN_ROLES)


def system_names() -> list[str]:
    return SYSTEMS.names()


def get_system(name: str, where: str = "system") -> type[System]:
    """The System class registered under `name`; RegistryError listing the known names otherwise."""
    return SYSTEMS.get(name, where)


def build_system(name: str, settings: Mapping[str, Any], context: SystemContext, where: str = "settings") -> System:
    """Validate the arm's settings for the named system and construct it; the system carries `registry_info`
    (its name, its validated settings as parameters and, for a plug-in, the distribution and version)."""
    check_stack_name(context.stack, "stack")
    cls = get_system(name)
    params = cls.validate_settings(settings, where)
    return attach_info(cls(params, context), SYSTEMS.info(name, params))


def plugin_record(name: str, settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """For a result's `provenance.plugins`: the system's registry record (name, validated settings, distribution
    and version) when an installed package provides it; None for a built-in system, whose name and settings the
    result already carries (so built-in results keep their bytes)."""
    info = SYSTEMS.info(name, get_system(name).validate_settings(settings))
    return info.to_json() if info.plugin else None
