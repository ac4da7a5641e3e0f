# The two set-up commands of the README: `make demo` and `make test`.
# Both create .venv and install what they need on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/shareval demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python bench/ranking.py

clean:
	rm -rf $(VENV) build src/*.egg-info
