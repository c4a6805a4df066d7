"""BendersOCT's master (:mod:`odtk.formulations.benders`) compiled from arrays: FlowOCT's tree
part, the variables g (8.5) and the objective (8.1). The cuts (8.2) come later, as rows."""
from __future__ import annotations

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder
from odtk.compiled.flowoct import tree_part
from odtk.compiled.instance import ArrayInstance, Linear, OrderedSet
from odtk.solvers.standard_form import LazyRow

# peak build memory per row × node × (column + class), at most (measured: 5 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 60


class CutRows(list):
    """The compiled instance's cuts (8.2): the rows ``(columns, coefficients, rhs)`` added to its
    master, kept as Pyomo's ConstraintList ``cuts`` keeps its constraints (``add``, ``len``).
    The instance's ``form`` stays the master without them."""

    def add(self, row: LazyRow) -> None:
        self.append(row)


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
                     lam: float = 0.0, cuts: str = "off", sample_weight: np.ndarray | None = None) -> ArrayInstance:
    """The BendersOCT master of ``make_data``'s arguments (and its ``data``), compiled, with no
    cut yet; its ``objective`` is (8.1) over its values, its ``cuts`` a :class:`CutRows`."""
    sets = data[None]
    branching, leaves = sets["B"][None], sets["L"][None]
    nodes = branching + leaves
    n_rows = np.shape(X)[0]
    form = FormBuilder(maximize=True)
    b, _, _ = tree_part(form, branching, nodes, sets["F"][None], list(range(n_classes)), sets["A"])
    g = form.variables("g", range(n_rows))  # (8.5), continuous
    weight = np.ones(n_rows) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    form.objective(g, (1 - lam) * weight)  # (8.1)
    form.objective(b, -lam)
    instance = form.instance(data, {"N": OrderedSet(nodes), "cuts": CutRows()})
    cost = instance.form.c
    instance.objective = Linear(dict(zip(np.flatnonzero(cost).tolist(), cost[cost != 0].tolist())),
                                instance.form.offset, instance.values)
    return instance
