# Two commands do everything on a fresh machine:
#   make serve   - install into .venv (once), install OpenFn's runtime for test runs and the
#                  web page's npm libraries (once) and run the service on embedded defaults
#   make test    - install into .venv (once), ensure Redis, Postgres, Chromium and the
#                  npm @openfn/project and @openfn/runtime (scripts/ensure-test-services.sh), then run lint,
#                  types and the whole test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test services lint schema catalogue bench adaptor-docs

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The pinned @openfn/runtime + adaptors for test runs and the web page's libraries (npm ci
# once, then a stamp check); without node/npm it says so and the service still starts
# (runs answer 503; the page cannot load).
serve: $(STAMP)
	-$(BIN)/python -m agents.testrun.install
	-$(BIN)/python -m app.web.assets
	$(BIN)/planwright serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

services: $(STAMP)
	PYTHON=$(BIN)/python scripts/ensure-test-services.sh

test: services
	$(MAKE) --no-print-directory lint
	$(BIN)/pytest -q

schema: $(STAMP)
	$(BIN)/planwright schema --write

# Regenerate tools/catalogue/data/adaptors.json from adaptors.facts.json + descriptions.json
catalogue: $(STAMP)
	$(BIN)/python scripts/generate_catalogue.py

bench: $(STAMP)
	$(BIN)/python bench/edit_latency.py

adaptor-docs: $(STAMP)
	$(BIN)/planwright adaptor-docs install
