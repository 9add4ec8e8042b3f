"""What a run is about to do, said in one line before its first model call, and the one question a paid live run asks.

Every run (`run`, `heldout`, `reproduce-dev`, a token-matched arm's prerequisites) goes through `bench.run.runner`, which
builds a `Preflight` once the arm, stack, slice and output folder are known and before anything is written or sent:

    run mem0 on dev | stack offline (offline stand-ins ...) | mode replay (...) | models extract=... |
    budget $20.00 per run, $100.00 total ($0.00 spent so far) | results -> runs/offline/dev/mem0/<run-id>/ | estimate: ...

A run that may send paid calls (a paid provider in `live` or `record` mode) needs a yes: asked on a terminal, or given
as `--yes` / `ENGRAM_ASSUME_YES=1` when stdin is not a terminal. Without one it stops before the first call (exit 2).
A spend estimate that says nothing will be sent (every call already cached) needs no yes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bench import settings
from bench.errors import SpendNotConfirmed
from bench.models.budget import usd
from bench.models.provider import is_standin
from bench.models.stacks import Stack, provider_of
from bench.systems.base import roles_used

if TYPE_CHECKING:
    from bench.data.slices import Slice
    from bench.run.arms import Arm

ASSUME_YES_ENV = settings.ASSUME_YES
SPENDING_MODES = frozenset({"live", "record"})


@dataclass(frozen=True)
class SpendEstimate:
    """What a run would send and cost given the cache it reads (`engram-bench plan` computes it)."""

    usd: float
    calls_to_send: int
    source: str  # who estimated it, e.g. "engram-bench plan"
    text: str | None = None  # the estimator's own one line, when it has one

    def describe(self) -> str:
        return self.text or f"up to {usd(self.usd)} for {self.calls_to_send} uncached call(s) ({self.source})"


# The spend estimate of a run, or None when none can be made.
Estimator = Callable[["Preflight"], "SpendEstimate | None"]


def _no_estimate(preflight: Preflight) -> SpendEstimate | None:
    return None


_estimator: Estimator = _no_estimate


def use_estimator(estimator: Estimator) -> Estimator:
    """Where `engram-bench plan` plugs in its estimate (`bench.run.plan.estimate_for`, on paid stacks); without one the
    banner says that no estimate was made. Returns the estimator it replaces (so a caller can put it back)."""
    global _estimator
    previous, _estimator = _estimator, estimator
    return previous


@dataclass(frozen=True)
class Preflight:
    """Everything the banner says about one run of one arm on one slice."""

    arm: str
    slice_name: str
    stack: Stack
    modes: Mapping[str, str]  # provider -> gateway mode, for every provider the stack's models use
    strict: bool
    run_limit_usd: float
    total_limit_usd: float
    spent_usd: float  # the ledger's total before this run
    destination: Path
    # The system's store (its memory, kept after the run for inspection); None for a unit that builds none (a
    # token-matched arm answers from its sweep's lines). With --out DIR it is under DIR/runs/, beside the results.
    store: Path | None = None
    ks: tuple[int | None, ...] | None = None  # the ks this stage answers at
    cache_dir: Path | None = None
    arm_spec: Arm | None = None  # the arm and slice as the run loaded them (the estimate reads them)
    the_slice: Slice | None = None

    @property
    def paid_providers(self) -> list[str]:
        """Providers that bill money (not the stand-ins, nor a provider the stack declares `paid = false`)."""
        paid = set(self.stack.paid_providers)
        return sorted(p for p in self.modes if not is_standin(p) and p in paid)

    @property
    def free_servers(self) -> list[str]:
        """Providers the stack declares free (a server on this machine): calls go out, but bill nothing."""
        paid = set(self.paid_providers)
        return sorted(p for p in self.modes if not is_standin(p) and p not in paid)

    @property
    def may_spend(self) -> bool:
        """True when a cache miss would be sent to a paid provider."""
        return any(self.modes[p] in SPENDING_MODES for p in self.paid_providers)

    def mode_text(self) -> str:
        if self.strict:
            return "replay (strict: every call must be cached, nothing is computed or sent)"
        paid = self.paid_providers
        if not paid and self.free_servers:
            servers = ", ".join(f"{p} {self.modes[p]}" for p in self.free_servers)
            return f"{servers} (declared free in the stack: $0)"
        if not paid:
            mode = next((self.modes[p] for p in self.modes if is_standin(p)), "live")
            # A stand-in "live" call is a local computation; saying "live" here would suggest a network.
            return f"{'local' if mode == 'live' else mode} (stand-ins only: $0, no network)"
        modes = {self.modes[p] for p in paid}
        if len(modes) == 1:
            return modes.pop()
        return ", ".join(f"{p} {self.modes[p]}" for p in paid)

    def roles_used(self) -> list[str]:
        """The stack roles this arm calls (its system's write roles, then answer, judge, count_tokens); every role
        when the system does not say."""
        used = None if self.arm_spec is None else roles_used(self.arm_spec.system, self.arm_spec.settings)
        if used is None:
            return sorted(self.stack.models)
        return [r for r in used if r in self.stack.models]

    def banner(self, estimate: SpendEstimate | None) -> str:
        """A few short lines: what runs where, the models of the roles this arm uses (one line per model), the
        budget, where results go and where the system's store is built."""
        by_model: dict[str, list[str]] = {}
        for role in self.roles_used():
            by_model.setdefault(self.stack.models[role], []).append(role)
        models = [f"  {', '.join(roles)}: {model}" for model, roles in by_model.items()]
        return "\n".join(
            (
                f"run {self.arm} on {self.slice_name} | stack {self.stack.name} ({self.stack.label})",
                f"  mode {self.mode_text()}",
                *models,
                f"  budget {usd(self.run_limit_usd)} per run, {usd(self.total_limit_usd)} total "
                f"({usd(self.spent_usd)} spent so far) | estimate: "
                f"{estimate.describe() if estimate else 'none made (no plan for this run)'}",
                f"  results -> {_shown(self.destination)}",
                *([f"  store -> {_shown(self.store)}"] if self.store is not None else []),
            )
        )


def modes_for(stack: Stack, provider_mode: Callable[[str], str]) -> dict[str, str]:
    """The gateway mode of each provider the stack's models use."""
    return {provider: provider_mode(provider) for provider in sorted({provider_of(m) for m in stack.models.values()})}


def announce_and_confirm(
    preflight: Preflight,
    *,
    assume_yes: bool,
    say: Callable[[str], None] | None = None,
    stdin: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Print the banner; if the run may spend, get a yes (terminal prompt, --yes, or ENGRAM_ASSUME_YES=1)."""
    say = say or _to_stdout
    estimate = _estimator(preflight)
    say(preflight.banner(estimate))
    if not preflight.may_spend or (estimate is not None and estimate.calls_to_send == 0):
        return
    # the installed settings (the CLI's reading of ENGRAM_ASSUME_YES), or the reading of an environment passed in
    told = settings.current() if environ is None else settings.Settings.from_env(environ)
    if assume_yes or told.assume_yes:
        return
    stdin = stdin or sys.stdin
    providers = ", ".join(preflight.paid_providers)
    limit = f"up to {usd(preflight.run_limit_usd)} this run"
    if not stdin.isatty():
        raise SpendNotConfirmed(
            f"stack {preflight.stack.name}: this run may send paid calls to {providers} ({limit}) and stdin is not "
            f"a terminal; pass --yes or set {ASSUME_YES_ENV}=1 to allow it; nothing was sent"
        )
    sys.stderr.write(f"This run may send paid calls to {providers} ({limit}). Proceed? [y/N] ")
    sys.stderr.flush()
    if stdin.readline().strip().lower() not in ("y", "yes"):
        raise SpendNotConfirmed(f"stack {preflight.stack.name}: paid calls not confirmed; nothing was sent")


def _to_stdout(line: str) -> None:
    # stdout: stderr stays for the one-line error a refused run ends with.
    print(line, flush=True)


def _shown(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
