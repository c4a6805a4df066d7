"""A clause set as a 0/1 feasibility model, so any MILP solver can answer a SAT query.

Used by the SAT paper's tree inference (Avellaneda, "Efficient Inference of Optimal Decision
Trees", AAAI 2020; ``odtk.engines.sat_inference``) when ``--solver`` names a MILP solver: each
query's instance is this model compiled from the clause arrays (``odtk.compiled.sat_clauses``;
``tests/test_compiled.py`` proves both routes give the same model). Each
clause ∨_{v∈P} v ∨ ∨_{v∈N} ¬v becomes the covering row ::

    Σ_{v∈P} x_v + Σ_{v∈N} (1 − x_v) ≥ 1,        x ∈ {0, 1},

and the objective is constant: every feasible point is a model of the clauses. The encoding's
own equation numbers (1)–(10) are listed in ``odtk.engines.sat_encoding``.

Symbols → Pyomo components: variables V, clauses C, positive / negative literals of clause c
P[c] / N[c], the assignment x[v].
"""
from __future__ import annotations

import pyomo.environ as pyo

KEY = "sat-clauses"
CITATION = "Avellaneda, Efficient Inference of Optimal Decision Trees, AAAI 2020"


def build_model() -> pyo.AbstractModel:
    """The abstract feasibility model of a clause set."""
    model = pyo.AbstractModel(name="SAT clauses")
    model.V = pyo.Set(doc="propositional variables (DIMACS numbers)")
    model.C = pyo.Set(doc="clauses")
    model.P = pyo.Set(model.C, within=model.V, doc="variables appearing positively in clause c")
    model.N = pyo.Set(model.C, within=model.V, doc="variables appearing negated in clause c")
    model.x = pyo.Var(model.V, domain=pyo.Binary, doc="truth value of variable v")
    model.feasibility = pyo.Objective(expr=0, doc="(0) any model of the clauses will do")
    model.clause = pyo.Constraint(model.C, rule=lambda m, c: (
        sum(m.x[v] for v in m.P[c]) + sum(1 - m.x[v] for v in m.N[c]) >= 1),
        doc="(1) to (10): every clause of the encoding holds")
    return model


def make_data(clauses: list[list[int]], n_variables: int) -> dict:
    """Pyomo data for DIMACS clauses over variables 1 … ``n_variables``."""
    ids = list(range(len(clauses)))
    return {None: {
        "V": {None: list(range(1, n_variables + 1))},
        "C": {None: ids},
        "P": {c: [v for v in clause if v > 0] for c, clause in zip(ids, clauses)},
        "N": {c: [-v for v in clause if v < 0] for c, clause in zip(ids, clauses)},
    }}

