# Two commands on a fresh machine (only Python 3.10+ needed):
#   make run    virtual environment + odtk + a real solve with HiGHS on a bundled dataset
#   make test   the same environment with every solver and the test tools, then the test suite
# Both install the exact versions of constraints.txt (what CI tests). Outside CI:
#   make test-latest   the solver and agreement tests against the newest releases (no upper bounds)
#   make lock          rewrite constraints.txt from the ranges in pyproject.toml
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
EXTRAS := test,cbc,gurobi,cplex,scip,sat,experiments
LATEST ?= .venv-latest
LOCK_VENV ?= .venv-lock

.PHONY: run test test-latest lock clean

$(VENV)/.odtk-core: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c constraints.txt --upgrade pip
	$(PIP) install --quiet -c constraints.txt -e .
	touch $@

$(VENV)/.odtk-test: $(VENV)/.odtk-core
	$(PIP) install --quiet -c constraints.txt -e ".[$(EXTRAS)]"
	touch $@

run: $(VENV)/.odtk-core
	$(BIN)/odtk solve --model flowoct --dataset flowoct/monk1 --depth 2 --solver highs

test: $(VENV)/.odtk-test
	$(BIN)/python -m pytest -q

# The newest release of every dependency, upper bounds dropped (lower bounds kept), then the
# tests that run every solver and the agreement harness. Not part of CI.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --no-deps -e .
	$(LATEST)/bin/python -m pip install --quiet --upgrade $$($(LATEST)/bin/python tests/latest_requirements.py $(EXTRAS))
	$(LATEST)/bin/python -m pip list 2>/dev/null | grep -i -E "^(highspy|pyomo|cbcbox|gurobipy|cplex|pyscipopt|python-sat|numpy|pandas|scipy|scikit-learn) "
	$(LATEST)/bin/python -m pytest -q tests/test_solvers.py tests/test_agreement.py \
		tests/test_benders.py tests/test_flowoct.py tests/test_oct.py tests/test_binoct.py \
		tests/test_odd.py tests/test_categorical.py tests/test_sat_inference.py \
		tests/test_warm_start.py tests/test_solver_faults.py tests/test_numerical_safety.py

# constraints.txt from a fresh resolution of pyproject.toml's ranges (with every extra).
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet ".[$(EXTRAS)]"
	{ echo "# The exact versions CI tests: make run / make test install with -c constraints.txt."; \
	  echo "# Written by 'make lock' from the ranges in pyproject.toml; see README.md, Dependencies."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --all | grep -v -i -E "^(odtk|setuptools|wheel)[= @]"; } > constraints.txt
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) $(LATEST) $(LOCK_VENV) build *.egg-info
