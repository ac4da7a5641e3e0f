# The two set-up commands of the README: `make demo` and `make test`.
# Both create .venv and install what they need on a fresh machine, and write the
# sample inputs the README's examples read (out/demo).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8000

.PHONY: demo demo-scoring test vendor test-postgres bench bench-platform bench-systems mutate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Browser components from npm (package-lock.json pins them), copied where Django's static
# finders and collectstatic find them; node_modules/ and vendor/ stay out of git.
VENDOR := src/shareval/platform/workbench/static/workbench/vendor
$(VENDOR)/.stamp: package.json package-lock.json
	@command -v npm >/dev/null || { echo "make: npm is needed for the browser components (apt-get install npm)" >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(VENDOR)
	cp node_modules/@recogito/text-annotator/dist/text-annotator.umd.js \
	   node_modules/@recogito/text-annotator/dist/text-annotator.css $(VENDOR)/
	touch $@
vendor: $(VENDOR)/.stamp

# The competition server on http://127.0.0.1:$(PORT) (make demo PORT=8001) with a demo competition built
# from ../shared/data, demo accounts printed, baselines scored (SQLite, in-process).
demo: $(STAMP) vendor
	$(BIN)/shareval examples --out out/demo
	$(BIN)/shareval server --home out/demo-server demo --host 127.0.0.1 --port $(PORT)

# Scoring only: perturbed gold through every scorer, tables printed.
demo-scoring: $(STAMP)
	$(BIN)/shareval demo

test: $(STAMP) vendor
	$(BIN)/shareval examples --out out/demo
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

# The server tests again on PostgreSQL + Redis + Celery workers (.ci/services.sh
# installs and starts the servers on 127.0.0.1).
test-postgres: $(STAMP) vendor
	eval "$$(bash .ci/services.sh)" && \
	SHAREVAL_DATABASE_URL=$$SHAREVAL_TEST_PG/shareval \
	SHAREVAL_TEST_DATABASE_URL=$$SHAREVAL_TEST_PG/postgres \
	SHAREVAL_TEST_BROKER_URL=$$SHAREVAL_TEST_REDIS/0 \
	SHAREVAL_EXPECT_MODE=postgres+celery \
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider tests/platform

bench: $(STAMP)
	$(BIN)/python bench/ranking.py

bench-platform: $(STAMP)
	$(BIN)/python bench/server.py

bench-systems: $(STAMP)
	$(BIN)/python bench/quality.py
	$(BIN)/python bench/throughput.py

# Mutation testing (mutmut): each module's mutants against that module's own tests;
# prints the score per module and every survivor (see docs/dev/testing.md).
# One module: make mutate MODULE=metrics/ranking.py
mutate: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,mutate]'
	$(BIN)/python bench/mutate.py $(if $(MODULE),--module $(MODULE))

clean:
	rm -rf $(VENV) build src/*.egg-info node_modules $(VENDOR)
