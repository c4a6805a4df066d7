"""Günlük et al.'s categorical trees (:mod:`odtk.formulations.categorical`) compiled from
arrays: the tree rows (1), (2), (13) and §5.1's removed groups, the path rows (11)–(12) or
(5)–(7), §4.4's ordered groups, §4.5's cardinality, (9)–(10), the rate (15), odtk's ``min_leaf`` rows and the
objective (8a) or (16), block by block, in the model's own terms."""
from __future__ import annotations

import networkx as nx
import numpy as np

from odtk.compiled.builder import FormBuilder, positions
from odtk.compiled.instance import ArrayInstance, OrderedSet

# peak build memory per row × node × (column + class), at most (measured: 24 at 1,000 rows,
# benchmarks/build.py); odtk.pipeline.encode.check_model_size reads it
BYTES_PER_CELL = 60


def compile_instance(data: dict, X: np.ndarray, y: np.ndarray, skeleton: nx.DiGraph, n_classes: int,
                     **_options: object) -> ArrayInstance:
    """The categorical instance of ``make_data``'s arguments (and its ``data``), compiled.

    Every switch, derived set and parameter is read from ``data`` (``make_data`` applied the
    options to it); ``X`` gives each row's values {j: x^i_j = 1}.
    """
    sets = data[None]
    switch, relaxed = sets["switch"], bool(sets["relaxed"][None])
    nodes, internal = sets["K"][None], set(sets["K_internal"][None])
    values, groups = sets["J"][None], sets["G"][None]
    members = {g: list(sets["J_g"][g]) for g in groups}
    allowed = sets["G_allowed"][None]
    with_w = sets["G_ordinal"][None] + sets["G_card"][None]
    form = FormBuilder(maximize=True)
    v = form.variables("v", nodes, groups, integer=not relaxed)
    z = form.variables("z", nodes, values,
                       integer=np.repeat([not relaxed or k in internal for k in nodes], len(values)))
    w = form.variables("w", nodes, with_w, integer=True)
    c = form.keyed_variables("c", sets["CI"][None], integer=switch["integrality"] == "full")
    positive_rows = np.isin(sets["I"][None], sets["I_pos"][None])
    positive_leaves = np.isin(sets["B"][None], sets["B_pos"][None])
    pair = (positive_rows[:, None] == positive_leaves[None, :] if switch["projection"] == "on"
            else np.ones((len(positive_rows), len(positive_leaves)), dtype=bool))
    leaf_c = np.full(pair.shape, -1, dtype=np.int64)  # c^i_b's column, −1 where (14) drops it
    leaf_c[pair] = c
    _tree_rows(form, sets, v, z, members)
    _path_rows(form, sets, z, leaf_c, np.asarray(X) > 0.5)
    w_of = {g: k for k, g in enumerate(with_w)}
    _ordered_rows(form, sets["steps"][None], z, w, w_of)
    if switch["anchors"] == "w":  # w^k_g = 1 at K_mirror for the symmetric groups with a w
        symmetric = [w_of[g] for g in sets["G_symmetric"][None] if g in w_of]
        mirror = positions(nodes, sets["K_mirror"][None])
        form.dense_rows(w[np.ix_(mirror, np.array(symmetric, dtype=np.int64))].reshape(-1, 1), 1.0, 1.0, 1.0)
    _side_rows(form, sets, v, z, w, w_of, members)
    _leaf_size_rows(form, sets, z, leaf_c, np.asarray(X) > 0.5)
    weight = (np.ones(len(positive_rows)) if "weight" not in sets
              else np.array([sets["weight"][i] for i in sets["I"][None]], dtype=float))
    _objective_and_rate(form, switch, sets, leaf_c, positive_rows, positive_leaves, weight)
    return form.instance(data, _derived(sets, members, allowed, with_w))


def _tree_rows(form: FormBuilder, sets: dict, v: np.ndarray, z: np.ndarray, members: dict) -> None:
    """(1) Σ_g v^k_g = 1; (2) z^k_j ≤ v^k_g(j) but at anchors; (13) z^k_a(g) = v^k_g;
    §5.1's v^k_g = 0 for the groups feature selection leaves out."""
    nodes, groups = sets["K"][None], sets["G"][None]
    form.dense_rows(v, 1.0, 1.0, 1.0)  # (1)
    group_of = np.empty(z.shape[1], dtype=np.int64)
    for g in groups:
        group_of[members[g]] = g
    bound = np.ones(z.shape, dtype=bool)
    if sets["switch"]["anchors"] == "on":
        mirror = positions(nodes, sets["K_mirror"][None])
        symmetric = np.asarray(sets["G_symmetric"][None], dtype=np.int64)
        anchors = np.array([members[g][0] for g in symmetric.tolist()], dtype=np.int64)
        bound[np.ix_(mirror, anchors)] = False  # (13) holds them at equality instead of (2)
        form.dense_rows(np.stack([z[np.ix_(mirror, anchors)], v[np.ix_(mirror, symmetric)]], axis=-1).reshape(-1, 2),
                        [1.0, -1.0], 0.0, 0.0)  # (13)
    form.dense_rows(np.stack([z[bound], v[:, group_of][bound]], axis=-1), [1.0, -1.0], upper=0.0)  # (2)
    removed = [g for g in groups if g not in set(sets["G_allowed"][None])]
    form.dense_rows(v[:, removed].reshape(-1, 1), 1.0, 0.0, 0.0)  # §5.1


def _path_rows(form: FormBuilder, sets: dict, z: np.ndarray, leaf_c: np.ndarray, X: np.ndarray) -> None:
    """(11)–(12) with ``inequalities="strong"``, else (5)–(6), and (7) where it is kept."""
    strong = sets["switch"]["inequalities"] == "strong"
    leaves = sets["B"][None]
    row, value = np.nonzero(X)  # row i goes left at k by Σ_{j: x^i_j = 1} z^k_j
    for k, node in enumerate(sets["K"][None]):
        for side, reached in (("left", sets["L"][node]), ("right", sets["R"][node])):
            blocks = [reached] if strong else [[b] for b in reached]
            for block in blocks:
                _reach_rows(form, leaf_c[:, positions(leaves, block)], z[k], row, value, side == "left")
    if not strong and sets["switch"]["projection"] == "off":
        form.dense_rows(leaf_c, 1.0, 1.0, 1.0)  # (7)


def _reach_rows(form: FormBuilder, reach: np.ndarray, z_k: np.ndarray, row: np.ndarray, value: np.ndarray,
                left: bool) -> None:
    """Σ_b c^i_b ≤ L(i, k) (``left``) or ≤ 1 − L(i, k), over the columns ``reach`` (rows ×
    leaves, −1 where c^i_b is absent), for every row i with some c^i_b."""
    present = reach >= 0
    kept = np.any(present, axis=1)
    row_of = np.cumsum(kept) - 1
    pair_row, pair_leaf = np.nonzero(present)
    on_kept = kept[row]
    form.rows(np.concatenate([row_of[pair_row], row_of[row[on_kept]]]),
              np.concatenate([reach[pair_row, pair_leaf], z_k[value[on_kept]]]),
              np.concatenate([np.ones(len(pair_row)), np.full(int(on_kept.sum()), -1.0 if left else 1.0)]),
              upper=0.0 if left else 1.0, count=int(kept.sum()))


def _leaf_size_rows(form: FormBuilder, sets: dict, z: np.ndarray, leaf_c: np.ndarray, X: np.ndarray) -> None:
    """odtk's ``min_leaf``: r^i_b over CR, Σ_{b∈L(k)} r^i_b ≤ L(i, k) and Σ_{b∈R(k)} r^i_b ≤ R(i, k),
    and Σ_i c^i_b + Σ_i r^i_b ≥ min_leaf for every leaf b; nothing when min_leaf ≤ 1."""
    limit = sets["min_leaf"][None]
    if limit <= 1:
        return
    rows, leaves = sets["I"][None], sets["B"][None]
    unpaired = sets["CR"][None]
    leaf_r = np.full(leaf_c.shape, -1, dtype=np.int64)  # r^i_b's column, −1 where c^i_b stands
    if unpaired:
        row_index, leaf_index = (positions(rows, [i for i, _ in unpaired]),
                                 positions(leaves, [b for _, b in unpaired]))
        leaf_r[row_index, leaf_index] = form.keyed_variables("r", unpaired)
    row, value = np.nonzero(X)
    for k, node in enumerate(sets["K"][None]):
        for side, reached in (("left", sets["L"][node]), ("right", sets["R"][node])):
            _reach_rows(form, leaf_r[:, positions(leaves, reached)], z[k], row, value, side == "left")
    reach = np.where(leaf_c >= 0, leaf_c, leaf_r)
    leaf_of, row_of = np.nonzero((reach >= 0).T)
    form.rows(leaf_of, reach[row_of, leaf_of], 1.0, lower=float(limit), count=len(leaves))


def _ordered_rows(form: FormBuilder, steps: list, z: np.ndarray, w: np.ndarray, w_of: dict) -> None:
    """§4.4: z^k_j ≥ z^k_j+1 − w^k_g and z^k_j+1 ≥ z^k_j − (1 − w^k_g) for consecutive bins."""
    if not steps:
        return
    group, value, following = (np.asarray(part, dtype=np.int64) for part in zip(*steps))
    columns = np.stack([z[:, value], z[:, following], w[:, [w_of[g] for g in group.tolist()]]],
                       axis=-1).reshape(-1, 3)
    form.dense_rows(columns, [1.0, -1.0, 1.0], lower=0.0)
    form.dense_rows(columns, [-1.0, 1.0, -1.0], lower=-1.0)


def _group_rows(form: FormBuilder, z: np.ndarray, members: dict, chosen: list, other: np.ndarray,
                factor: np.ndarray, lower: np.ndarray | float = -np.inf, upper: np.ndarray | float = np.inf) -> None:
    """Rows Σ_{j∈J(g)} z^k_j + factor_g · other[k, g] for every node k and group g of ``chosen``,
    within ``lower``/``upper`` (per group)."""
    if not chosen:
        return
    sizes = [len(members[g]) for g in chosen]
    value = np.concatenate([members[g] for g in chosen]).astype(np.int64)
    owner = np.repeat(np.arange(len(chosen)), sizes)
    n_nodes, n_chosen = z.shape[0], len(chosen)
    node_rows = np.arange(n_nodes)[:, None] * n_chosen
    form.rows(np.concatenate([(node_rows + owner).ravel(), np.arange(n_nodes * n_chosen)]),
              np.concatenate([z[:, value].ravel(), other.ravel()]),
              np.concatenate([np.ones(n_nodes * len(value)), np.tile(factor, n_nodes)]),
              np.tile(np.broadcast_to(lower, (n_chosen,)), n_nodes),
              np.tile(np.broadcast_to(upper, (n_chosen,)), n_nodes), count=n_nodes * n_chosen)


def _side_rows(form: FormBuilder, sets: dict, v: np.ndarray, z: np.ndarray, w: np.ndarray, w_of: dict,
               members: dict) -> None:
    """§4.5's bounds on |subset| (both sides on G_card, odtk's one-sided one on G_one_sided)
    and (9)–(10) with ``proper_subsets="on"``."""
    limit = sets["max_card"][None]
    bounded = sets["G_card"][None]
    spare = np.array([len(members[g]) - limit for g in bounded], dtype=float)
    w_bounded = w[:, [w_of[g] for g in bounded]]
    _group_rows(form, z, members, bounded, w_bounded, spare, upper=limit + spare)
    _group_rows(form, z, members, bounded, w_bounded, spare, lower=spare)
    one_sided = sets["G_one_sided"][None]
    _group_rows(form, z, members, one_sided, v[:, one_sided], np.full(len(one_sided), -float(limit)), upper=0.0)
    if sets["switch"]["proper_subsets"] == "on":
        allowed = sets["G_allowed"][None]
        _group_rows(form, z, members, allowed, v[:, allowed], np.full(len(allowed), -1.0), lower=0.0)  # (9)
        _group_rows(form, z, members, allowed, v[:, allowed],
                    -np.array([len(members[g]) - 1 for g in allowed], dtype=float), upper=0.0)  # (10)


def _objective_and_rate(form: FormBuilder, switch: dict, sets: dict, leaf_c: np.ndarray, positive_rows: np.ndarray,
                        positive_leaves: np.ndarray, weight: np.ndarray) -> None:
    """(8a) Σ_{N+} ω_i Σ_{B+} c^i_b + C Σ_{N−} ω_i Σ_{B−} c^i_b, or (16) one class's weighted
    rate with (15) the other class's correct rows, at least ``min_count``."""
    hits_positive = positive_rows[:, None] & positive_leaves[None, :] & (leaf_c >= 0)
    hits_negative = ~positive_rows[:, None] & ~positive_leaves[None, :] & (leaf_c >= 0)
    weights = np.broadcast_to(weight[:, None], leaf_c.shape)
    if switch["rate"] == "accuracy":
        form.objective(leaf_c[hits_positive], weights[hits_positive])
        form.objective(leaf_c[hits_negative], sets["class_weight"][None] * weights[hits_negative])
        return
    rated, counted = ((hits_positive, hits_negative) if switch["rate"] == "sensitivity"
                      else (hits_negative, hits_positive))
    rows = positive_rows if switch["rate"] == "sensitivity" else ~positive_rows
    total = weight[rows].sum()
    form.objective(leaf_c[rated], weights[rated] / (total if total > 0 else 1.0))  # (16)
    terms = leaf_c[counted]
    form.rows(np.zeros(len(terms)), terms, 1.0, lower=sets["min_count"][None], count=1)  # (15)


def _derived(sets: dict, members: dict, allowed: list, with_w: list) -> dict:
    """The model's derived sets and the default weights, which ``decode`` and ``warm_start``
    read: G_w, G_removed, KB_left, KB_right, J(g) as ordered sets, ω_i = 1 unless given."""
    nodes = sets["K"][None]
    extra = {"G_w": OrderedSet(with_w), "G_removed": OrderedSet(g for g in sets["G"][None] if g not in set(allowed)),
             "J_g": {g: OrderedSet(values) for g, values in members.items()},
             "KB_left": OrderedSet((k, b) for k in nodes for b in sets["L"][k]),
             "KB_right": OrderedSet((k, b) for k in nodes for b in sets["R"][k])}
    if "weight" not in sets:
        extra["weight"] = dict.fromkeys(sets["I"][None], 1.0)
    return extra
