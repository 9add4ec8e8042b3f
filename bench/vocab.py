"""The harness's shared vocabulary: where things live in the repository, and the names every part agrees on.

One module owns each of these names; every other module imports them from here (stacks and roles live in
`bench.models.stacks`, the error types in `bench.errors`). A newcomer moving a folder or adding a held-out conversation
edits this file only.

Paths are absolute and computed from this file's location, so commands work from any working directory. Commands
that take a folder as an option use these as defaults; tests pass their own folders instead of patching these.
"""

from __future__ import annotations

from pathlib import Path

# ----------------------------------------------------------------------------------------------- repository layout

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "bench"

DATA_DIR = REPO_ROOT / "data"  # the datasets with their sha256 list (data/SOURCES.md); ENGRAM_DATA_DIR overrides
V1_DATA_DIR = DATA_DIR / "engram-eval-v1"  # the article's released results, which `import-v1` converts
ARMS_DIR = REPO_ROOT / "arms"  # one TOML file per arm
# One file per stack (which model serves each role). ENGRAM_STACKS_DIR names a folder of your own stack files, read
# beside the shipped ones (a file named like a shipped stack replaces it); see bench.models.stacks._stack_files.
SHIPPED_STACKS_DIR = REPO_ROOT / "stacks"
RESULTS_DIR = REPO_ROOT / "results"  # results/<stack>/<slice-dir>/<arm>[__k<k>].json
V1_RESULTS_DIR = RESULTS_DIR / "v1"  # the article's results, converted to the result schema
V3_RESULTS_DIR = RESULTS_DIR / "v3"  # the v3 paper's results, converted to the result schema
RUNS_DIR = REPO_ROOT / "runs"  # one folder per run (its store and, by default, its results); never committed
CACHE_DIR = REPO_ROOT / "cache"  # shipped call-cache subsets (cache/<subset>/) and the local cache
LOCAL_CACHE_NAME = "local"  # cache/local/: this machine's cache, git-ignored
DEV_CACHE_SUBSET = CACHE_DIR / "dev"  # the subset `reproduce-dev` replays
PAPER_DIR = REPO_ROOT / "paper"  # the rendered article: numbers.json, tables, figures
PAPER_TEMPLATES_DIR = PAPER_DIR / "templates"
APPENDIX_DIR = REPO_ROOT / "appendix_e"  # the article's appendix E files, rebuilt by `paper build`
PROMPTS_DIR = BENCH_DIR / "prompts"  # answer and judge prompts of the paper stack
DOCS_DIR = REPO_ROOT / "docs"

# Folders that runs write into: a git dirty check ignores them, so writing a result does not make the next run
# look as if it ran on modified code. cache/ is not one of them: a shipped cache subset decides what a replay
# answers, so changing one counts (the local cache, cache/local/, is git-ignored and never counts).
RUN_OUTPUT_DIRS = ("results", "runs")

# The paper build reads results/<this>/ unless told otherwise: the article's imported results.
DEFAULT_PAPER_STACK_DIR = "v1"

# ------------------------------------------------------------------------------------------------- held-out slices

HELDOUT_CONVERSATIONS = ("conv-30", "conv-41", "conv-42", "conv-43")
HELDOUT_GROUP = "heldout"  # slice names are "heldout:<conv>"; `[k_by_slice] heldout = ...` covers them all
HELDOUT_PREFIX = f"{HELDOUT_GROUP}:"


def heldout_slice(conversation: str) -> str:
    """The slice name of one held-out conversation: "conv-30" -> "heldout:conv-30"."""
    return f"{HELDOUT_PREFIX}{conversation}"


def is_heldout(slice_name: str) -> bool:
    return slice_name.startswith(HELDOUT_PREFIX)


def heldout_conversation(slice_name: str) -> str:
    """ "heldout:conv-30" -> "conv-30" (the slice name must be a held-out one)."""
    return slice_name.removeprefix(HELDOUT_PREFIX)


def heldout_slices() -> list[str]:
    """Every held-out slice name, in conversation order."""
    return [heldout_slice(conversation) for conversation in HELDOUT_CONVERSATIONS]


# ------------------------------------------------------------------------------------------ LoCoMo-wide slices
# (added by the benchmarks engineer, issue #11: every LoCoMo conversation, the ten pooled, held-out beyond the four)

DEV_CONVERSATION = "conv-26"  # the conversation the dev, stress and update slices come from
# The conversations the frozen configuration was tuned on: `heldout:<conv>` may name any other conversation.
TUNED_ON = (DEV_CONVERSATION,)
LOCOMO_GROUP = "locomo"
LOCOMO_PREFIX = f"{LOCOMO_GROUP}:"  # "locomo:conv-44": one whole conversation, as the field evaluates it
LOCOMO_POOLED = LOCOMO_GROUP  # "locomo": the ten conversations pooled, each part on a fresh store


def locomo_slice(conversation: str) -> str:
    """ "conv-44" -> "locomo:conv-44"."""
    return f"{LOCOMO_PREFIX}{conversation}"


def is_locomo_conversation(slice_name: str) -> bool:
    return slice_name.startswith(LOCOMO_PREFIX)


def locomo_conversation_of(slice_name: str) -> str:
    """ "locomo:conv-44" -> "conv-44"."""
    return slice_name.removeprefix(LOCOMO_PREFIX)


def ingested_data(slice_name: str) -> str:
    """What a slice ingests, whatever it is called: `heldout:conv-44` and `locomo:conv-44` are both conversation
    conv-44 whole (bench.data.slices builds both with the same rule; only the name and its tuning note differ), so
    both are "locomo:conv-44". Any other slice is its own data."""
    if is_heldout(slice_name):
        return locomo_slice(heldout_conversation(slice_name))
    return slice_name


# ----------------------------------------------------------------------------------------------------- metrics
# Each metric is a module of bench/analysis/scoring/metrics/ holding its own name; the two named per run are spelled
# here because the layers below analysis write those names (the judge's provider, the run's k). docs/metrics.md.

EVIDENCE_RECALL = "evidence-recall"  # named per budget: evidence-recall@<k>
JUDGE = "judge"  # named per judge: judge:<model>:<prompt id>


def judge_metric(model: str, prompt_id: str) -> str:
    """`judge:<model>:<prompt id>`: which model judged with which prompt (prompt id: the first 12 hex digits of the
    prompt text's SHA-256, or the rules revision of a rule-based stand-in judge)."""
    return f"{JUDGE}:{model}:{prompt_id}"


def evidence_recall_metric(k: int | None) -> str:
    """`evidence-recall@<k>` (`@all` when the system showed every line it had)."""
    return f"{EVIDENCE_RECALL}@{k if k is not None else 'all'}"
