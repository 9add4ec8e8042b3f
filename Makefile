# engram-bench: every target builds the environment it needs first.
# The environment is a virtualenv in .venv, installed from requirements.lock (exact versions).
# torch is the CPU build everywhere: PyPI's Linux x86_64 torch wheel is the CUDA build (several GB of nvidia-*
# wheels this project never uses), so torch comes from PyTorch's CPU wheel index when that answers, with PyPI
# beside it for torch's own dependencies (2.13.0+cpu outranks 2.13.0). When the index does not answer, pip's
# configured index is used (this project's machines supply the CPU wheel from local disk) and the result is checked.

PYTHON ?= python3
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
PYPI_INDEX  ?= https://pypi.org/simple
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip install --quiet --disable-pip-version-check -c requirements.lock
STAMP  := $(VENV)/.installed
# The extras `make env` installs; .ci/run names more (browser, local) so that one pip resolution installs everything
# instead of a second `pip install` re-resolving the whole set after this one.
EXTRAS ?= test,run,hf,ray,mcp

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export MEM0_TELEMETRY := False
export TOKENIZERS_PARALLELISM := false

.PHONY: env analysis-env adapters lint test test-all reproduce-dev paper paper-check field bench heldout-tags clean-env

env: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	@echo "setting up $(VENV) from requirements.lock (first time: about 3 minutes)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@if $(BIN)/python -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=10)" >/dev/null 2>&1; then \
	  echo "torch: the CPU build from $(TORCH_INDEX)"; \
	  $(PIP) --index-url $(TORCH_INDEX) --extra-index-url $(PYPI_INDEX) torch==2.13.0; \
	else \
	  echo "torch: $(TORCH_INDEX) does not answer; installing torch==2.13.0 from pip's configured index"; \
	  $(PIP) torch==2.13.0; \
	fi
	@# -W ignore::UserWarning: numpy is not installed yet, and importing torch without it warns "Failed to
	@# initialize NumPy", which reads like a broken install; only torch's CUDA flag is read here.
	@$(BIN)/python -W ignore::UserWarning -c "import torch, sys; sys.exit(0 if torch.version.cuda is None else 1)" || \
	  echo "make env: WARNING: torch $$($(BIN)/python -W ignore::UserWarning -c 'import torch; print(torch.__version__)') is a CUDA build (several GB); this project needs only the CPU build (see README, Install)"
	$(PIP) -e '.[$(EXTRAS)]'
	@touch $(STAMP)

# The analysis-only install (compare, view, show, rescore, the importers, paper build/check; no run layer) in
# .venv-analysis: the base dependencies only, no pip inside (the interpreter's own pip, 22.3 or later, installs into
# it) and no bytecode compiled ahead of use. scripts/measure_analysis_venv.py measures it against pip's default.
ANALYSIS_VENV := .venv-analysis
analysis-env: $(ANALYSIS_VENV)/.installed

$(ANALYSIS_VENV)/.installed: pyproject.toml requirements.lock
	@test -x $(ANALYSIS_VENV)/bin/python || $(PYTHON) -m venv --without-pip $(ANALYSIS_VENV)
	$(PYTHON) -m pip --python $(ANALYSIS_VENV)/bin/python install --quiet --disable-pip-version-check --no-compile \
	  -c requirements.lock -e .
	@touch $@

# The shipped third-party adapters' own environments (.venvs/NAME/ from systems/NAME/requirements.txt; A-MEM's about 2.1
# GB with torch's CPU build, LangMem's about 260 MB, cognee's about 1.6 GB, Graphiti's about 260 MB on Python 3.12,
# Letta's client about 46 MB; the real MCP servers mcp-memory-service about 350 MB, basic-memory about 720 MB,
# server-memory about 29 MB of node_modules, mcp-server-qdrant about 380 MB), rebuilt when their pins change. With them,
# `make test` runs the adapters' tests (the contract against a schema-valid fake server, or for Letta a fake Letta
# server; the shipped SmolLM2 replay; with the `local` extra a record on the real server replayed with it stopped; the
# MCP servers' own runs) instead of skipping them. .ci/run builds them. The list is every systems/NAME/adapter.toml that
# asks for its own environment (environment = "venv" or "npm"): a new adapter folder is built without editing this file,
# and rebuilt when its pins change.
ADAPTERS := $(sort $(patsubst systems/%/adapter.toml,%,$(shell grep -lE '^environment *= *.(venv|npm).' systems/*/adapter.toml)))
adapters: export ENGRAM_TORCH_INDEX := $(TORCH_INDEX)
adapters: $(foreach a,$(ADAPTERS),.venvs/$(a)/.installed)

.SECONDEXPANSION:
.venvs/%/.installed: systems/%/adapter.toml $$(wildcard systems/$$*/requirements.txt systems/$$*/package-lock.json) $(STAMP)
	$(BIN)/engram-bench systems install $*
	@touch $@

# An npm adapter (server-memory) is pinned by its package-lock.json instead.
.venvs/%/.installed: systems/%/package-lock.json $(STAMP)
	$(BIN)/engram-bench systems install $*
	@touch $@

# Lint, format, type and import-contract checks (config in pyproject.toml); `make test` runs them first.
lint: $(STAMP)
	$(BIN)/ruff check bench engram tests scripts
	$(BIN)/ruff format --check bench engram tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite, offline, on every core (pytest-xdist; TEST_WORKERS=0 runs it in one process), tests handed out by work
# stealing so a few long ones do not leave a worker idle at the end. `make test` leaves out the tests marked slow
# (each takes more than a few seconds: environments built, real models, whole runs in a subprocess); `make test-all`,
# which .ci/run runs, adds them. pytest's exit code 5 ("no tests collected") is a failure here, said out loud.
TEST_WORKERS ?= auto
define pytest_suite
@$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(1); rc=$$?; \
if [ $$rc -eq 5 ]; then echo "make $@: pytest collected no tests (exit 5) -- failing"; exit 1; fi; \
exit $$rc
endef

test: $(STAMP) lint
	$(call pytest_suite,-m "not slow")

# test-all prints its 40 slowest tests, so every CI log says where the suite's time goes (issue 34's 15 minutes).
test-all: $(STAMP) lint
	$(call pytest_suite,--durations=40)

# The README's main command: re-derive the dev-slice table with zero API keys.
reproduce-dev: $(STAMP)
	$(BIN)/engram-bench reproduce-dev

paper: $(STAMP)
	$(BIN)/engram-bench paper build

paper-check: $(STAMP)
	$(BIN)/engram-bench paper check

# The field's table as shipped (docs/field.md, docs/field.html), from the published files in data/ and results/.
field: $(STAMP)
	$(BIN)/engram-bench field --build

# Performance figures (printed, recorded in the README; never timed unit tests).
bench: $(STAMP)
	@for s in scripts/bench_*.py; do echo "== $$s"; $(BIN)/python $$s || exit 1; done

# Restore the held-out tags from the stamps in the committed results, for a clone that came without tags.
heldout-tags:
	$(PYTHON) scripts/heldout_tags.py

clean-env:
	rm -rf $(VENV)
