"""OCT (:mod:`odtk.formulations.oct`) compiled from arrays: the rows of (24.2)–(24.15), the
routing rows of either ``branching`` form and the objective (24.1), block by block, in the
model's own terms."""
from __future__ import annotations

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder, positions
from odtk.compiled.instance import ArrayInstance

# peak build memory per row × node × (column + class), at most (measured: 32 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 60


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
                     lam: float = 0.0, min_leaf: int = 1, branching: str = "aggregated",
                     sample_weight: np.ndarray | None = None) -> ArrayInstance:
    """The OCT instance of ``make_data``'s arguments (and its ``data``), compiled."""
    sets = data[None]
    splitting, leaves, features = sets["B"][None], sets["L"][None], sets["F"][None]
    classes = sets["K"][None]
    n_samples = np.shape(X)[0]
    labels = np.asarray(y).astype(int)
    weight = np.ones(n_samples) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    n = float(weight.sum())
    form = FormBuilder(maximize=True)
    a = form.variables("a", splitting, features, integer=True)
    d = form.variables("d", splitting, integer=True)
    z = form.variables("z", range(n_samples), leaves, integer=True)
    l = form.variables("l", leaves, integer=True)  # noqa: E741 -- the model's name
    c = form.variables("c", leaves, classes, integer=True)
    Nk = form.variables("Nk", leaves, classes, upper=np.inf)
    Nt = form.variables("Nt", leaves, upper=np.inf)
    Lt = form.variables("Lt", leaves, upper=np.inf)
    n_leaves = len(leaves)

    # L_t − N_t + N_kt − n c_kt, at least −n (24.2) and at most 0 (24.3)
    loss = np.stack([np.repeat(Lt, n_classes), np.repeat(Nt, n_classes), Nk.ravel(), c.ravel()], axis=-1)
    form.dense_rows(loss, [1.0, -1.0, 1.0, -n], lower=-n)  # (24.2)
    form.dense_rows(loss, [1.0, -1.0, 1.0, -n], upper=0.0)  # (24.3)
    weighted = -np.repeat(weight, n_leaves)  # −ω_i for each z[i, t]
    class_row = np.arange(Nk.size).reshape(Nk.shape)  # (24.5): N_kt − Σ_{i: y_i = k} ω_i z_it = 0
    form.rows(np.r_[class_row.ravel(), class_row[:, labels].T.ravel()], np.r_[Nk.ravel(), z.ravel()],
              np.r_[np.ones(Nk.size), weighted], 0.0, 0.0, count=Nk.size)
    leaf_row = np.arange(n_leaves)  # (24.6): N_t − Σ_i ω_i z_it = 0
    form.rows(np.r_[leaf_row, np.broadcast_to(leaf_row, z.shape).ravel()], np.r_[Nt, z.ravel()],
              np.r_[np.ones(n_leaves), weighted], 0.0, 0.0, count=n_leaves)
    form.dense_rows(np.column_stack([c, l]), np.r_[np.ones(n_classes), -1.0], 0.0, 0.0)  # (24.7)
    _routing(form, a, d, z, sets, leaves, splitting, np.asarray(X) <= 0.5, branching)
    form.dense_rows(z, 1.0, 1.0, 1.0)  # (24.10)
    form.dense_rows(np.stack([z, np.broadcast_to(l, z.shape)], axis=-1).reshape(-1, 2), [1.0, -1.0],
                    upper=0.0)  # (24.11)
    if int(min_leaf) != 0:  # (24.12)
        form.dense_rows(np.column_stack([z.T, l]), np.r_[np.ones(n_samples), -float(min_leaf)], lower=0.0)
    form.dense_rows(np.column_stack([a, d]), np.r_[np.ones(len(features)), -1.0], 0.0, 0.0)  # (24.13)
    children = sets["BP"][None]
    parents = [sets["parent"][t] for t in children]
    form.dense_rows(np.column_stack([d[positions(splitting, children)], d[positions(splitting, parents)]]),
                    [1.0, -1.0], upper=0.0)  # (24.15)
    form.objective(np.r_[Nt, Lt], np.r_[np.full(n_leaves, 1 - lam), np.full(n_leaves, lam - 1)])  # (24.1)
    form.objective(d, -lam)
    return form.instance(data, {"weight": dict(enumerate(weight.tolist())), "n": n})


def _routing(form: FormBuilder, a: np.ndarray, d: np.ndarray, z: np.ndarray, sets: dict, leaves: list,
             splitting: list, zeros: np.ndarray, branching: str) -> None:
    """The routing rows: (24.8)–(24.9) aggregated, or (3) per feature with (24.8) for a_m = 0."""
    left, right = sets["AL"][None], sets["AR"][None]
    leaf_left, node_left = positions(leaves, [t for t, _ in left]), positions(splitting, [m for _, m in left])
    leaf_right, node_right = positions(leaves, [t for t, _ in right]), positions(splitting, [m for _, m in right])
    if branching == "aggregated":
        form.capacity_rows(z[:, leaf_left], a[node_left], zeros, -1.0, 0.0)  # (24.8)
        form.capacity_rows(z[:, leaf_right], a[node_right], zeros, 1.0, 1.0)  # (24.9)
        return
    form.dense_rows(np.stack([z[:, leaf_left], np.broadcast_to(d[node_left], (len(z), len(left)))],
                             axis=-1).reshape(-1, 2), [1.0, -1.0], upper=0.0)  # (24.8) with a_m = 0
    _disaggregated(form, z[:, leaf_left], a[node_left], ~zeros)  # (3)
    _disaggregated(form, z[:, leaf_right], a[node_right], zeros)  # (3) mirrored


def _disaggregated(form: FormBuilder, flow: np.ndarray, split: np.ndarray, wrong: np.ndarray) -> None:
    """Rows flow[i, p] + split[p, j] ≤ 1 for every sample i, pair p and feature j with wrong[i, j]."""
    sample, feature = np.nonzero(wrong)
    form.dense_rows(np.stack([flow[sample], split.T[feature]], axis=-1).reshape(-1, 2), 1.0, upper=1.0)
