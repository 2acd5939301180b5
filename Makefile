# Two commands do everything on a fresh machine:
#   make serve   - install into .venv (once) and run the service on embedded defaults
#   make test    - install into .venv (once) and run lint, types and the whole test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint schema bench adaptor-docs

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/planwright serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

schema: $(STAMP)
	$(BIN)/planwright schema --write

bench: $(STAMP)
	$(BIN)/python bench/edit_latency.py

adaptor-docs: $(STAMP)
	$(BIN)/planwright adaptor-docs install
