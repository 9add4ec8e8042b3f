"""Every `ENGRAM_*` environment variable of the harness, read in one place into one frozen `Settings`.

The command line reads the environment once, at its edge (`bench.cli.program`), validates every variable there (a bad one
is one line naming it, exit 2, before anything is read, written or sent) and installs the result for the command's
duration; the code below reads `current()` instead of `os.environ`. Code run without the command line (a test
calling a function directly, a grid worker process) gets a fresh reading of its own environment from `current()`,
so a test that sets a variable and calls a function keeps working; a test may also build `Settings` directly and
`install` it.

`engram/` reads its own variables (ENGRAM_EMBED_THREADS): the library never imports the harness.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import ConfigError
from bench.vocab import CACHE_DIR, DATA_DIR, LOCAL_CACHE_NAME, REPO_ROOT, RUNS_DIR, SHIPPED_STACKS_DIR
from engram.config import EMBED_THREADS_ENV, MAX_EMBED_THREADS

# name of the variable -> what it sets (the README and `--help` texts name the variables, so they stay as they are)
ASSUME_YES = "ENGRAM_ASSUME_YES"
CHROMIUM = "ENGRAM_BENCH_CHROMIUM"
QUIET = "ENGRAM_BENCH_QUIET"
VERBOSE = "ENGRAM_BENCH_VERBOSE"
CACHE = "ENGRAM_CACHE_DIR"
DATA = "ENGRAM_DATA_DIR"
LEDGER = "ENGRAM_LEDGER"
LONGMEMEVAL = "ENGRAM_LONGMEMEVAL_DIR"
RUNS = "ENGRAM_RUNS_DIR"
RUN_BUDGET = "ENGRAM_RUN_BUDGET_USD"
TOTAL_BUDGET = "ENGRAM_TOTAL_BUDGET_USD"
STACKS = "ENGRAM_STACKS_DIR"
SYSTEMS = "ENGRAM_SYSTEMS_DIR"
VENVS = "ENGRAM_VENVS_DIR"
TORCH_THREADS = "ENGRAM_TORCH_THREADS"
TORCH_INDEX = "ENGRAM_TORCH_INDEX"
EMBED_THREADS = EMBED_THREADS_ENV  # read by engram itself; checked here by its rule, so a bad one is one line
VARIABLES = (
    ASSUME_YES,
    CHROMIUM,
    QUIET,
    VERBOSE,
    CACHE,
    DATA,
    LEDGER,
    LONGMEMEVAL,
    RUNS,
    RUN_BUDGET,
    TOTAL_BUDGET,
    STACKS,
    SYSTEMS,
    VENVS,
    TORCH_THREADS,
    TORCH_INDEX,
    EMBED_THREADS,
)

LEDGER_FILE = "spend_ledger.jsonl"  # the ledger's name beside the local cache
DEFAULT_RUN_LIMIT_USD = 20.0
DEFAULT_TOTAL_LIMIT_USD = 100.0
_SWITCH = {"": False, "0": False, "1": True}  # only "1" ever meant yes; anything but 0/1 is a mistake now named


@dataclass(frozen=True)
class Settings:
    """What the environment says, validated; the defaults are the checkout's own folders and the shipped limits."""

    assume_yes: bool = False  # ENGRAM_ASSUME_YES=1: a run that may spend goes ahead without asking
    chromium: str | None = None  # ENGRAM_BENCH_CHROMIUM: a browser binary other than `chromium` on PATH
    quiet: bool = False  # ENGRAM_BENCH_QUIET=1 (what --quiet sets, inherited by worker processes)
    verbose: bool = False  # ENGRAM_BENCH_VERBOSE=1 (what --verbose sets): third-party warnings and bars shown
    cache_dir: Path = CACHE_DIR / LOCAL_CACHE_NAME  # ENGRAM_CACHE_DIR: the local call cache
    data_dir: Path = DATA_DIR  # ENGRAM_DATA_DIR: the datasets with their sha256 list
    ledger: Path | None = None  # ENGRAM_LEDGER: the spend ledger (None: next to the local cache)
    longmemeval_dir: Path = DATA_DIR / "longmemeval"  # ENGRAM_LONGMEMEVAL_DIR
    runs_dir: Path = RUNS_DIR  # ENGRAM_RUNS_DIR: one folder per run
    run_budget_usd: float = DEFAULT_RUN_LIMIT_USD  # ENGRAM_RUN_BUDGET_USD
    total_budget_usd: float = DEFAULT_TOTAL_LIMIT_USD  # ENGRAM_TOTAL_BUDGET_USD
    stacks_dir: Path = SHIPPED_STACKS_DIR  # ENGRAM_STACKS_DIR: stack files of one's own
    systems_dir: Path = field(default_factory=lambda: REPO_ROOT / "systems")  # ENGRAM_SYSTEMS_DIR: adapters
    venvs_dir: Path = field(default_factory=lambda: REPO_ROOT / ".venvs")  # ENGRAM_VENVS_DIR: adapters' venvs
    torch_threads: int = 1  # ENGRAM_TORCH_THREADS: torch's intra-op threads for the shared MiniLM
    # ENGRAM_TORCH_INDEX: where an adapter's pinned CPU torch is looked for first (the Makefile's TORCH_INDEX)
    torch_index: str = "https://download.pytorch.org/whl/cpu"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every variable read and checked; the first bad one is a ConfigError naming it (an empty one is unset)."""
        env = os.environ if environ is None else environ
        default = cls()

        def text(name: str) -> str | None:
            value = env.get(name, "")
            return value if value != "" else None

        def folder(name: str, fallback: Path) -> Path:
            value = text(name)
            if value is None:
                return fallback
            path = Path(value)
            if path.exists() and not path.is_dir():
                raise ConfigError(f"environment {name}: expected a folder, found the file {value!r}")
            return path

        _threads(env, EMBED_THREADS, None)  # engram reads it; checked here first (a traceback, or a crash, there)
        ledger = text(LEDGER)
        if ledger is not None and Path(ledger).is_dir():
            raise ConfigError(f"environment {LEDGER}: expected a ledger file, found the folder {ledger!r}")
        return cls(
            assume_yes=_switch(env, ASSUME_YES),
            chromium=text(CHROMIUM),
            quiet=_switch(env, QUIET),
            verbose=_switch(env, VERBOSE),
            cache_dir=folder(CACHE, default.cache_dir),
            data_dir=_existing(folder(DATA, default.data_dir), DATA, env),
            ledger=Path(ledger) if ledger is not None else None,
            longmemeval_dir=folder(LONGMEMEVAL, default.longmemeval_dir),
            runs_dir=folder(RUNS, default.runs_dir),
            run_budget_usd=_usd(env, RUN_BUDGET, DEFAULT_RUN_LIMIT_USD),
            total_budget_usd=_usd(env, TOTAL_BUDGET, DEFAULT_TOTAL_LIMIT_USD),
            # Read beside the shipped stacks; one that names no folder is a mistake, named before any work.
            stacks_dir=_existing(folder(STACKS, default.stacks_dir), STACKS, env),
            systems_dir=folder(SYSTEMS, default.systems_dir),
            venvs_dir=folder(VENVS, default.venvs_dir),
            torch_threads=_threads(env, TORCH_THREADS, default.torch_threads) or default.torch_threads,
            torch_index=text(TORCH_INDEX) or default.torch_index,
        )

    def ledger_for(self, cache_dir: Path | None = None) -> Path:
        """$ENGRAM_LEDGER, else the ledger next to the local cache (`cache_dir` when a command names one)."""
        return self.ledger or Path(cache_dir or self.cache_dir) / LEDGER_FILE


def _switch(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "")
    if value not in _SWITCH:
        raise ConfigError(f"environment {name}: expected 1 (on) or 0 (off), found {value!r}")
    return _SWITCH[value]


def _usd(env: Mapping[str, str], name: str, fallback: float) -> float:
    raw = env.get(name, "")
    if raw == "":
        return fallback
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"environment {name}: expected a number of USD, found {raw!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"environment {name}: expected a finite, non-negative USD amount, found {raw!r}")
    return value


def _threads(env: Mapping[str, str], name: str, fallback: int | None) -> int | None:
    """A torch thread count: torch sizes its OpenMP pool by it, and 999999 crashed the process (engram.config)."""
    raw = env.get(name, "").strip()
    if raw == "":
        return fallback
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_EMBED_THREADS:
        raise ConfigError(
            f"environment {name}: expected a whole number of threads from 1 to {MAX_EMBED_THREADS}, found {raw!r}"
        )
    return int(raw)


def _existing(path: Path, name: str, env: Mapping[str, str]) -> Path:
    """A folder the harness only reads (data, stacks) must be there when the variable names one."""
    if env.get(name) and not path.is_dir():
        raise ConfigError(f"environment {name}: expected an existing folder, found no folder at {str(path)!r}")
    return path


_installed: list[Settings] = []


def current() -> Settings:
    """The settings the command line installed; without one, this process's environment read now."""
    return _installed[-1] if _installed else Settings.from_env()


def install(settings: Settings) -> None:
    """Make `settings` what `current()` returns (the command line, once per command; undone by `uninstall`)."""
    _installed.append(settings)


def uninstall() -> None:
    if _installed:
        _installed.pop()


@contextmanager
def installed(settings: Settings) -> Iterator[Settings]:
    """`settings` for the duration of a block (a test, an embedding program)."""
    install(settings)
    try:
        yield settings
    finally:
        uninstall()


def stacks_dir_at_import() -> Path:
    """The stack folder the stack names are listed from when `bench.models.stacks` is imported (they become the CLI's
    choices, so they are fixed then). Never raises: the command line's edge validates the variable and reports a
    bad one in its one line."""
    value = os.environ.get(STACKS, "")
    return Path(value) if value else SHIPPED_STACKS_DIR
