"""BinOCT (:mod:`odtk.formulations.binoct`) compiled from arrays: the rows of (2)–(7) and the
objective (1), block by block, in the model's own terms."""
from __future__ import annotations

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder, positions
from odtk.compiled.instance import ArrayInstance

# peak build memory per row × node × (column + class), at most (measured: 48 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 60


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
                     sample_weight: np.ndarray | None = None, **_) -> ArrayInstance:
    """The BinOCT instance of ``make_data``'s arguments (and its ``data``), compiled."""
    sets = data[None]
    branching, leaves, features = sets["B"][None], sets["L"][None], sets["F"][None]
    classes = list(range(n_classes))
    ones = np.asarray(X) > 0.5
    y = np.asarray(y).astype(int)
    n_rows = ones.shape[0]
    weight = np.ones(n_rows) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    form = FormBuilder(maximize=True)
    f = form.variables("f", branching, features, integer=True)  # (8)
    p = form.variables("p", leaves, classes, integer=True)  # (9)
    l = form.variables("l", range(n_rows), leaves)  # (10)
    e = form.variables("e", leaves, classes, upper=np.inf)  # (11)
    form.dense_rows(f, 1.0, 1.0, 1.0)  # (2)
    form.dense_rows(l, 1.0, 1.0, 1.0)  # (3)
    for r, n in enumerate(branching):  # (4), (5)
        _path_rows(form, f[r], l, ones, positions(leaves, sets["LL"][n]))
        _path_rows(form, f[r], l, ~ones, positions(leaves, sets["RL"][n]))
    form.dense_rows(p, 1.0, 1.0, 1.0)  # (6)
    _leaf_error_rows(form, p, l, e, y, weight, n_classes)  # (7)
    form.objective(e, -1.0, offset=float(weight.sum()))  # (1)
    size1, size0 = ones.sum(axis=0), (~ones).sum(axis=0)
    in_class = y[:, None] == np.arange(n_classes)
    return form.instance(data, {
        "M0": dict(zip(features, size0.tolist())), "M1": dict(zip(features, size1.tolist())),
        "MK": dict(zip(classes, (weight @ in_class).tolist())),
        **({"weight": dict.fromkeys(range(n_rows), 1.0)} if sample_weight is None else {})})


def _path_rows(form: FormBuilder, f_node: np.ndarray, l: np.ndarray, group: np.ndarray, below: np.ndarray) -> None:
    """Rows M_j f[n, j] + Σ_{i: group[i, j]} Σ_{t ∈ below} l[i, t] ≤ M_j (M_j = |group_j|) of
    one branching node n, for every feature j whose group is not empty ((4) or (5))."""
    if not len(below):
        return
    size = group.sum(axis=0)
    kept = np.flatnonzero(size > 0)
    rank = np.full(len(size), -1, dtype=np.int64)
    rank[kept] = np.arange(len(kept))
    sample, feature = np.nonzero(group)
    inside = l[sample[:, None], below[None, :]]  # (entries, |below|)
    form.rows(np.concatenate([np.repeat(rank[feature], len(below)), np.arange(len(kept))]),
              np.concatenate([inside.ravel(), f_node[kept]]),
              np.concatenate([np.ones(inside.size), size[kept]]), upper=size[kept].astype(float))


def _leaf_error_rows(form: FormBuilder, p: np.ndarray, l: np.ndarray, e: np.ndarray, y: np.ndarray,
                     weight: np.ndarray, n_classes: int) -> None:
    """Rows Σ_{i ∈ I_c} ω_i l[i, t] − M_c p[t, c] − e[t, c] ≤ 0 for every leaf t and every class
    c with samples (7)."""
    n_leaves = l.shape[1]
    member = (y >= 0) & (y < n_classes)
    counts = np.bincount(y[member], minlength=n_classes)
    kept = np.flatnonzero(counts > 0)
    rank = np.full(n_classes, -1, dtype=np.int64)
    rank[kept] = np.arange(len(kept))
    big_m = np.bincount(y[member], weights=weight[member], minlength=n_classes)[kept]
    leaf = np.arange(n_leaves)
    row_of = leaf[:, None] * len(kept) + np.arange(len(kept))[None, :]  # (|L|, kept classes)
    sample_rows = leaf[None, :] * len(kept) + rank[y[member]][:, None]  # (members, |L|)
    form.rows(np.concatenate([sample_rows.ravel(), row_of.ravel(), row_of.ravel()]),
              np.concatenate([l[member].ravel(), p[:, kept].ravel(), e[:, kept].ravel()]),
              np.concatenate([np.repeat(weight[member], n_leaves), -np.tile(big_m, n_leaves),
                              -np.ones(row_of.size)]),
              upper=0.0, count=row_of.size)
