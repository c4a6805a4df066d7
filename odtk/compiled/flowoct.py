"""FlowOCT (:mod:`odtk.formulations.flowoct`) compiled from arrays: the rows of (1.2)–(1.9)
and the objective (1.1), block by block, in the model's own terms."""
from __future__ import annotations

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder
from odtk.compiled.instance import ArrayInstance, OrderedSet

# peak build memory per row × node × (column + class), at most (measured: 44–48 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 60


def tree_part(form: FormBuilder, branching: list, nodes: list, features: list, classes: list,
              ancestors: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tree's binaries ``b``, ``p``, ``w`` and rows (1.2), (1.3) with ``p`` and
    Σ_k w_nk = p_n (shared with BendersOCT); returns the column ids of b, p, w."""
    b = form.variables("b", branching, features, integer=True)
    p = form.variables("p", nodes, integer=True)
    w = form.variables("w", nodes, classes, integer=True)
    index = {n: k for k, n in enumerate(nodes)}
    for block, splits in ((branching, b), (nodes[len(branching):], None)):  # (1.2), (1.3) with p
        members = [np.r_[p[[index[n], *(index[a] for a in ancestors[n])]], [] if splits is None else splits[r]]
                   for r, n in enumerate(block)]
        if members:
            form.rows(np.repeat(np.arange(len(block)), [len(m) for m in members]), np.concatenate(members),
                      1.0, 1.0, 1.0, count=len(block))
    k = len(classes)
    form.rows(np.repeat(np.arange(len(nodes)), k + 1),  # Σ_k w_nk − p_n = 0
              np.column_stack([w, p]).ravel(), np.tile(np.r_[np.ones(k), -1.0], len(nodes)), 0.0, 0.0)
    return b, p, w


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
                     lam: float = 0.0, cuts: str = "off", sample_weight: np.ndarray | None = None) -> ArrayInstance:
    """The FlowOCT instance of ``make_data``'s arguments (and its ``data``), compiled."""
    sets = data[None]
    branching, leaves = sets["B"][None], sets["L"][None]
    nodes = branching + leaves
    n_rows, n_features = np.shape(X)
    ones = np.asarray(X) > 0.5
    form = FormBuilder(maximize=True)
    b, p, w = tree_part(form, branching, nodes, sets["F"][None], list(range(n_classes)), sets["A"])
    z = form.variables("z", range(n_rows), nodes)  # (1.12) relaxed
    z_sink = form.variables("z_sink", range(n_rows), nodes)  # (1.13) relaxed
    place = {n: k for k, n in enumerate(nodes)}
    inner = np.array([place[n] for n in branching], dtype=np.int64)
    outer = np.array([place[n] for n in leaves], dtype=np.int64)
    left = np.array([place[2 * n] for n in branching], dtype=np.int64)
    right = np.array([place[2 * n + 1] for n in branching], dtype=np.int64)
    form.dense_rows(np.stack([z[:, inner], z[:, left], z[:, right], z_sink[:, inner]], axis=-1).reshape(-1, 4),
                    [1.0, -1.0, -1.0, -1.0], 0.0, 0.0)  # (1.4)
    form.dense_rows(np.stack([z[:, outer], z_sink[:, outer]], axis=-1).reshape(-1, 2), [1.0, -1.0], 0.0, 0.0)  # (1.5)
    form.dense_rows(z[:, [place[nodes[0]]]], 1.0, upper=1.0)  # (1.6)
    for child, allowed in ((left, ~ones), (right, ones)):  # (1.7), (1.8)
        form.capacity_rows(z[:, child], b, allowed, -1.0, 0.0)
    form.dense_rows(np.stack([z_sink, w[:, np.asarray(y, dtype=np.int64)].T], axis=-1).reshape(-1, 2),
                    [1.0, -1.0], upper=0.0)  # (1.9)
    weight = np.ones(n_rows) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    form.objective(z_sink, np.repeat((1 - lam) * weight, len(nodes)))  # (1.1)
    form.objective(b, -lam)
    return form.instance(data, {"N": OrderedSet(nodes)})
