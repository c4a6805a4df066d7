"""Warm start: every variable of a categorical instance set from a given tree.

The tree's tests are checked against the topology and the instance, mirrored where symmetry
breaking ((13) or ``anchors="w"``) forbids them, and each row's leaf sets its c^i_b.
"""
from __future__ import annotations

from collections.abc import Set

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from . import POSITIVE


def warm_start(instance, graph: nx.DiGraph, X: np.ndarray) -> None:
    """Set every variable of ``instance`` to the tree ``graph`` routing the rows of ``X``.

    ``graph`` follows :func:`decode`'s convention: the topology's node ids, a test's ``subset``
    (the columns that go left, all of one group) on its ``outcome=True`` arc, a leaf's ``label``
    the class the topology gives that leaf; a test absent from ``graph`` sends every row right
    (the first allowed group, no value left). Where symmetry breaking forbids a test — (13) at a
    node of K_mirror whose anchor goes right, or ``anchors="w"`` with w^k_g = 0 there — its
    mirror image is loaded instead (the complement goes left, the two subtrees swap): the same
    tree. c^i_b = 1 at the leaf b row i reaches, where the pair exists. Side constraints (§4.5,
    (9)–(10), (15)) are not enforced: a tree breaking one loads an infeasible point.

    Raises ValueError when ``graph`` does not fit the topology (a node off its position, a leaf
    of the other class, a test on several groups, on a group feature selection left out, or on
    an ordered group's bins that are neither a prefix nor a suffix) or ``X`` the instance.
    """
    X = np.asarray(X) > 0.5
    if X.shape != (len(instance.I), len(instance.J)):
        raise ValueError(f"X has shape {X.shape}; the instance was built from {len(instance.I)} rows "
                         f"and {len(instance.J)} one-hot columns.")
    tests = _tests_of(instance, graph)
    _break_symmetry(instance, tests)
    for var in instance.component_data_objects(pyo.Var):
        var.set_value(0)
    for k, (group, subset) in tests.items():
        instance.v[k, group].set_value(1)
        for j in subset:
            instance.z[k, j].set_value(1)
        for g in instance.G_w:
            instance.w[k, g].set_value(_w_of(instance, g, subset) if g == group else 1)
    for b, rows in _leaf_rows(instance, tests, X).items():
        for i in rows.tolist():
            if (i, b) in instance.CI:
                instance.c[i, b].set_value(1)


def _tests_of(instance, graph: nx.DiGraph) -> dict:
    """Every decision node of the topology → (group, the columns that go left), from ``graph``."""
    roots = [n for n in graph if graph.in_degree(n) == 0]
    if len(roots) != 1:
        raise ValueError(f"The tree needs one root; it has {len(roots)}.")
    tests: dict = {}
    placed, stack = set(), [(instance.K.first(), roots[0])]
    while stack:
        k, n = stack.pop()
        if k in instance.B:
            if n is not None:
                _check_leaf(instance, graph, k, n)
                placed.add(n)
            continue
        left, right = instance.child[k, "left"], instance.child[k, "right"]
        if n is None or n != k:  # a test decode dropped: every row goes right
            tests[k] = (next(iter(instance.G_allowed)), frozenset())
            stack += [(left, None), (right, n)]
            continue
        arcs = {bool(outcome): c for _, c, outcome in graph.out_edges(k, data="outcome")}
        if not graph.nodes[k].get("subset") or graph.out_degree(k) != 2 or set(arcs) != {True, False}:
            raise ValueError(f"Node {k!r} is a test of the topology: the tree needs a subset there and "
                             "one outcome=True and one outcome=False arc.")
        tests[k] = _test_at(instance, k, graph.nodes[k]["subset"])
        placed.add(k)
        stack += [(left, arcs[True]), (right, arcs[False])]
    if placed != set(graph):
        raise ValueError(f"Nodes {sorted(map(str, set(graph) - placed))} of the tree are off the "
                         "topology's positions (a test dropped from the tree sends every row right).")
    return tests


def _check_leaf(instance, graph: nx.DiGraph, k, n) -> None:
    expected = POSITIVE if k in instance.B_pos else 1 - POSITIVE
    if n != k:
        raise ValueError(f"Node {n!r} of the tree sits where the topology has leaf {k!r}.")
    if graph.nodes[n].get("label") != expected:
        raise ValueError(f"Leaf {k!r} predicts {graph.nodes[n].get('label')!r} but the topology's leaf "
                         f"{k!r} predicts class {expected} (left leaves negative, right leaves positive).")


def _test_at(instance, k, subset) -> tuple:
    """(group, columns) of the test ``subset`` at node ``k``, checked to be one the model has."""
    columns = set(subset)
    if not columns <= set(instance.J):
        raise ValueError(f"Node {k!r} tests columns the instance lacks: {sorted(map(str, columns - set(instance.J)))}.")
    groups = {instance.group_of[j] for j in columns}
    if len(groups) != 1:
        raise ValueError(f"Node {k!r} tests columns of {len(groups)} groups; a test takes values of one group.")
    (group,) = groups
    values = list(instance.J_g[group])
    if group not in instance.G_allowed:
        raise ValueError(f"Node {k!r} tests group {group}, which feature selection left out.")
    if group in instance.G_ordinal and not (_is_end(values, columns) or _is_end(values[::-1], columns)):
        raise ValueError(f"Node {k!r} sends bins {sorted(columns)} of ordered group {group} left: neither a "
                         "prefix nor a suffix of its bins (§4.4).")
    return group, frozenset(int(j) for j in columns)


def _is_end(values: list, columns: Set) -> bool:
    """True when ``columns`` are the first ``len(columns)`` of ``values``."""
    return set(values[:len(columns)]) == columns


def _w_of(instance, group, subset: frozenset) -> int:
    """w^k_g of the group tested: §4.4's 1 for a suffix of the bins ('≥'), 0 for a prefix;
    §4.5's 1 when at most max.card values go left, 0 when at most max.card go right."""
    if group in instance.G_ordinal:
        return int(_is_end(list(instance.J_g[group])[::-1], subset))
    return int(len(subset) <= pyo.value(instance.max_card))


def _break_symmetry(instance, tests: dict) -> None:
    """Mirror, top down, every test that (13) or ``anchors="w"`` forbids at a node of K_mirror."""
    anchors = instance.switch["anchors"]
    for k in instance.K_internal:  # topological order: a node before its descendants
        group, subset = tests[k]
        if k not in instance.K_mirror or group not in instance.G_symmetric:
            continue
        if ((anchors == "on" and instance.J_g[group].first() not in subset)
                or (anchors == "w" and group in instance.G_w and not _w_of(instance, group, subset))):
            tests[k] = (group, frozenset(instance.J_g[group]) - subset)
            _swap(instance, tests, instance.child[k, "left"], instance.child[k, "right"])


def _swap(instance, tests: dict, a, b) -> None:
    """Exchange the tests of two subtrees of the same shape, node by corresponding node."""
    if a in instance.B:
        return
    tests[a], tests[b] = tests[b], tests[a]
    for side in ("left", "right"):
        _swap(instance, tests, instance.child[a, side], instance.child[b, side])


def _leaf_rows(instance, tests: dict, X: np.ndarray) -> dict:
    """Leaf → the rows of ``X`` (booleans) that reach it."""
    reach = {instance.K.first(): np.arange(len(X))}
    found: dict = {}
    for k in instance.K:  # internal nodes, then last-level ones: parents before children
        rows = reach.pop(k)
        left = X[np.ix_(rows, sorted(tests[k][1]))].any(axis=1)
        for side, part in (("left", rows[left]), ("right", rows[~left])):
            child = instance.child[k, side]
            (found if child in instance.B else reach)[child] = part
    return found
