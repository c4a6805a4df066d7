"""The SAT inference's start: CART grown without a depth limit, watched while it grows.

The search (:mod:`odtk.engines.sat_inference`) starts from a consistent tree so that it is
anytime, and so that, as a MILP's starting tree does, it has a model to return however short
the time limit: CART grows past the deadline if need be. It grows in a worker thread
(scikit-learn grows trees without holding the interpreter) and cannot be stopped, but the
thread that waits for it looks every ``WATCH_SECONDS`` whether a signal came, and then waits
``START_GRACE`` seconds more (the tree is the only one the search has so far) before it leaves
the worker to finish on its own.
"""
from __future__ import annotations

import contextlib
import threading
import time
import numpy as np
from sklearn.tree import DecisionTreeClassifier  # here, not in the worker: importing it takes seconds

from odtk.budget import Budget
from odtk.engines.nested_trees import Tree, predict

WATCH_SECONDS = 0.1  # how often a thread waiting for a worker (CART, a SAT call) looks whether to stop
START_GRACE = 1.0  # seconds a stop waits for CART to finish growing: without it there is no tree


def grown_cart(X: np.ndarray, y: np.ndarray) -> Tree | None:
    """CART grown without a depth limit on the binary features (scikit-learn's
    ``DecisionTreeClassifier``): on data where no two equal rows disagree it classifies every row
    (None if it does not)."""
    cart = DecisionTreeClassifier(random_state=0).fit(X, y)
    nodes = cart.tree_

    def node(i: int) -> Tree:
        if nodes.children_left[i] < 0:
            return ("leaf", int(cart.classes_[nodes.value[i][0].argmax()]))
        return (int(nodes.feature[i]), node(nodes.children_left[i]), node(nodes.children_right[i]))
    tree = node(0)
    return tree if np.array_equal(predict(tree, X).astype(np.int64), y.astype(np.int64)) else None


def grown_watched(X: np.ndarray, y: np.ndarray, budget: Budget | None) -> Tree | None:
    """:func:`grown_cart` in a worker thread while this thread looks every ``WATCH_SECONDS``
    whether ``budget`` was stopped by a signal, and then waits ``START_GRACE`` seconds more: the
    tree, or None if there is none or it did not grow in time. A signal only marks the budget
    meanwhile (``Budget.waiting``)."""
    grown: list[Tree | None] = []
    failed: list[Exception] = []

    def grow() -> None:
        try:
            grown.append(grown_cart(X, y))
        except Exception as error:  # raised again in the calling thread
            failed.append(error)

    worker = threading.Thread(target=grow, name="odtk-cart", daemon=True)
    signalled_at = None
    with budget.waiting() if budget is not None else contextlib.nullcontext():
        worker.start()
        while worker.is_alive():
            worker.join(WATCH_SECONDS)
            if signalled_at is None and budget is not None and budget.stop_requested:
                signalled_at = time.monotonic()
            if signalled_at is not None and time.monotonic() - signalled_at >= START_GRACE:
                break
    if failed:
        raise failed[0]
    return grown[0] if grown else None
