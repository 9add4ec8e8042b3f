# engram-bench: every target builds the environment it needs first.
# The environment is a virtualenv in .venv, installed from requirements.lock (exact versions).
# torch==2.13.0 is the CPU build that pip finds on this machine's disk; pinning it keeps pip
# from resolving a multi-GB CUDA build.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export MEM0_TELEMETRY := False
export TOKENIZERS_PARALLELISM := false

.PHONY: env test reproduce-dev paper paper-check bench clean-env

env: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	@echo "setting up $(VENV) from requirements.lock (first time: about 3 minutes)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c requirements.lock torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[test]'
	@touch $(STAMP)

# The whole suite, offline. pytest's exit code 5 ("no tests collected") is a failure here, said out loud.
test: $(STAMP)
	@$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5) -- failing"; exit 1; fi; \
	exit $$rc

# The README's main command: re-derive the dev-slice table with zero API keys.
reproduce-dev: $(STAMP)
	$(BIN)/engram-bench reproduce-dev

paper: $(STAMP)
	$(BIN)/engram-bench paper build

paper-check: $(STAMP)
	$(BIN)/engram-bench paper check

# Performance figures (printed, recorded in the README; never timed unit tests).
bench: $(STAMP)
	@for s in scripts/bench_*.py; do echo "== $$s"; $(BIN)/python $$s || exit 1; done

clean-env:
	rm -rf $(VENV)
