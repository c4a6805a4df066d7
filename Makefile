# Two commands on a fresh machine (only Python 3.10+ needed):
#   make run    virtual environment + odtk + a real solve with HiGHS on a bundled dataset
#   make test   the same environment with every solver and the test tools, then every test not
#               marked slow (minutes; a dot per test and the share done at the end of each line)
# Both install the exact versions of the lock of $(PYTHON)'s version, constraints-py3XX.txt
# (one per Python: 3.10 to 3.13). PYTHON=python3.10 picks another Python; .venv is then made anew.
# Also in CI:
#   make test-slow     the tests marked slow: the Dask campaigns, the paper scripts' runs, the
#                      agreement harness
# While editing:
#   make check         quick feedback (under 2 minutes): the core tests, the first failure stops
# Outside CI:
#   make test-fuzz     the differential check's long run (tests/test_differential.py): about
#                      FUZZ_SOLVES solves (3000) from the seed FUZZ_SEED (default: a fresh one, printed)
#                      on FUZZ_WORKERS workers (1), every model × solver × route against a brute
#                      force (FUZZ_SELECT="scip-oct-": the cells pytest -k selects), a table and
#                      each disagreement's reproducer at the end (make test runs its fixed few hundred)
#   make test-latest   the solver and agreement tests against the newest releases (no upper bounds)
#   make lock          rewrite every lock from the ranges in pyproject.toml, on each of its
#                      Pythons that is installed (PYTHON=python3.12: that Python's lock only)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
EXTRAS := test,cbc,gurobi,cplex,scip,sat,experiments
LATEST ?= .venv-latest
LOCK_VENV ?= .venv-lock

# $(PYTHON)'s version ("3.10"; empty when it does not run) and its lock.
VERSION_OF = -c 'import sys; print("%d.%d" % sys.version_info[:2])'
PY_VERSION := $(shell $(PYTHON) $(VERSION_OF) 2>/dev/null)
LOCK := constraints-py$(subst .,,$(PY_VERSION)).txt
CONSTRAIN := $(if $(wildcard $(LOCK)),-c $(LOCK))
LOCKED_VERSIONS := $(patsubst constraints-py3%.txt,3.%,$(wildcard constraints-py3*.txt))

.PHONY: run test test-slow check test-fuzz test-latest lock lock-one clean

# The environment of $(PYTHON)'s version: one made with another Python is removed first.
$(VENV)/.python-$(PY_VERSION):
	@test -n "$(PY_VERSION)" || { echo "odtk: '$(PYTHON)' does not run: name a Python 3.10+ as PYTHON=..." >&2; exit 1; }
	if [ -x $(BIN)/python ] && [ "$$($(BIN)/python $(VERSION_OF))" != "$(PY_VERSION)" ]; then rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	touch $@

$(VENV)/.odtk-core: $(VENV)/.python-$(PY_VERSION) pyproject.toml $(wildcard $(LOCK))
	$(if $(CONSTRAIN),,@echo "odtk: no $(LOCK) for Python $(PY_VERSION): installing the newest releases in pyproject.toml's ranges, untested ('make lock PYTHON=$(PYTHON)' writes one)" >&2)
	$(PIP) install --quiet $(CONSTRAIN) --upgrade pip
	$(PIP) install --quiet $(CONSTRAIN) -e .
	touch $@

$(VENV)/.odtk-test: $(VENV)/.odtk-core
	$(PIP) install --quiet $(CONSTRAIN) -e ".[$(EXTRAS)]"
	touch $@

run: $(VENV)/.odtk-core
	$(BIN)/odtk solve --model flowoct --dataset flowoct/monk1 --depth 2 --solver highs

# A worker per core; a test file stays on one worker (its module fixtures are made once).
# The slowest tests of each run are listed at its end.
PYTEST := $(BIN)/python -m pytest -n auto --dist loadfile --durations=15

test: $(VENV)/.odtk-test
	$(PYTEST) -m "not slow"

test-slow: $(VENV)/.odtk-test
	$(PYTEST) -m slow

# Quick feedback: the public API, the estimators (without scikit-learn's check_estimator, a
# few minutes on its own: make test runs it), the command line, the models, the solvers and the
# datasets; -x: the first failure ends the run.
CHECK_TESTS := $(addprefix tests/test_,api.py estimators.py cli.py models.py solvers.py datasets.py)

check: $(VENV)/.odtk-test
	$(BIN)/python -m pytest -q -n auto -x -m "not slow" -k "not check_estimator" $(CHECK_TESTS)

# The differential check at length; a cell (model × solver × route) per test, cells spread over the workers.
FUZZ_SOLVES ?= 3000
FUZZ_SEED ?=
FUZZ_WORKERS ?= 1
FUZZ_SELECT ?=

test-fuzz: $(VENV)/.odtk-test
	$(BIN)/python -m pytest -n $(FUZZ_WORKERS) --dist load tests/test_differential.py \
		--fuzz-solves $(FUZZ_SOLVES) $(if $(FUZZ_SEED),--fuzz-seed $(FUZZ_SEED)) $(if $(FUZZ_SELECT),-k "$(FUZZ_SELECT)")

# The newest release of every dependency, upper bounds dropped (lower bounds kept), then the
# tests that run every solver and the agreement harness, a worker per core. Not part of CI.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --no-deps -e .
	$(LATEST)/bin/python tests/latest_requirements.py $(EXTRAS) > $(LATEST)/requirements.txt
	$(LATEST)/bin/python -m pip install --quiet --upgrade -r $(LATEST)/requirements.txt
	$(LATEST)/bin/python -m pip list 2>/dev/null | grep -i -E "^(highspy|pyomo|cbcbox|gurobipy|cplex|pyscipopt|python-sat|numpy|pandas|scipy|networkx|scikit-learn|numba|llvmlite|tqdm|click|pyyaml|matplotlib|dask) "
	$(LATEST)/bin/python -m pytest -q -n auto --dist loadfile tests/test_solvers.py tests/test_agreement.py \
		tests/test_benders.py tests/test_flowoct.py tests/test_oct.py tests/test_binoct.py \
		tests/test_odd.py tests/test_categorical.py tests/test_sat_inference.py \
		tests/test_warm_start.py tests/test_solver_faults.py tests/test_numerical_safety.py tests/test_version.py

# Each lock from a fresh resolution of pyproject.toml's ranges (with every extra) on its Python.
lock:
ifneq ($(filter command line environment,$(origin PYTHON)),)
	$(MAKE) --no-print-directory lock-one
else
	@for v in $(LOCKED_VERSIONS); do \
	  if python$$v -c "" 2>/dev/null; then $(MAKE) --no-print-directory lock-one PYTHON=python$$v || exit 1; \
	  else echo "odtk: python$$v does not run here: constraints-py$$(echo $$v | tr -d .).txt left as it is"; fi; \
	done
endif

lock-one:
	@test -n "$(PY_VERSION)" || { echo "odtk: '$(PYTHON)' does not run: name a Python 3.10+ as PYTHON=..." >&2; exit 1; }
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet ".[$(EXTRAS)]"
	{ echo "# The exact versions make run / make test install on Python $(PY_VERSION) (pip install -c $(LOCK))."; \
	  echo "# Written by 'make lock' from the ranges in pyproject.toml; see docs/developer/dependencies.md."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --all | grep -v -i -E "^(odtk|setuptools|wheel)[= @]"; } > $(LOCK)
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) $(LATEST) $(LOCK_VENV) build *.egg-info

# The documentation site, docs/_build/html, with every warning an error: the tools of
# docs/requirements.txt (Python 3.11+) in the test environment, where every solver module imports.
.PHONY: docs
docs: $(VENV)/.odtk-test docs/requirements.txt
	@$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "odtk: make docs needs Python 3.11+ (Sphinx 9): name one as PYTHON=..." >&2; exit 1; }
	$(PIP) install --quiet $(CONSTRAIN) -r docs/requirements.txt
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html

# ruff on the whole tree and mypy on odtk and formulations, configured in pyproject.toml. The
# tools and stubs are pinned exactly (a new release may find new issues) and installed into
# $(VENV), beside every extra, for mypy to read the dependencies; the stubs need Python 3.11+.
LINT_TOOLS := ruff==0.17.6 mypy==2.4.1 pandas-stubs==3.1.0.261029 types-PyYAML==6.0.12.20261122 \
	types-tqdm==4.70.0.20261106

.PHONY: lint

$(VENV)/.odtk-lint: $(VENV)/.odtk-test Makefile
	$(PIP) install --quiet $(CONSTRAIN) $(LINT_TOOLS)
	touch $@

lint: $(VENV)/.odtk-lint
	$(BIN)/ruff check .
	$(BIN)/mypy
