# recourse-study: `make run` starts the platform, `make test` runs lint + tests.
# Both are self-sufficient on a fresh clone: they create .venv and install what is needed.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export RECOURSE_STUDY_HOME ?= $(CURDIR)/.recourse-study

.PHONY: install run test lint browser clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH (or make PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, from the local CPU wheel: asking for plain torch would pull CUDA builds.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test,fast]"
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/recourse-study train --scenario loan

lint: install
	$(BIN)/ruff check .

browser:
	bash scripts/install_chromium.sh

test: install lint browser
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
