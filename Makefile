# Two commands on a fresh machine (only Python 3.10+ needed):
#   make run    virtual environment + odtk + a real solve with HiGHS on a bundled dataset
#   make test   the same environment with every solver and the test tools, then the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: run test clean

$(VENV)/.odtk-core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.odtk-test: $(VENV)/.odtk-core
	$(PIP) install --quiet -e ".[test,cbc,gurobi,cplex,sat,experiments]"
	touch $@

run: $(VENV)/.odtk-core
	$(BIN)/odtk solve --model flowoct --dataset flowoct/monk1 --depth 2 --solver highs

test: $(VENV)/.odtk-test
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
