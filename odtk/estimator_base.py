"""What the scikit-learn estimators of :mod:`odtk.estimators` share: fit and predict plumbing,
scikit-learn's names for the solve settings, and scikit-learn's tree surface.

Beyond ``fit``/``predict``/``score`` every estimator offers:

* ``predict_proba`` — the class frequencies of the training samples that left the model
  through the same exit as the sample: the arc from the last test into the leaf (in a tree,
  the leaf itself) or into the class terminal (in a diagram, whose terminals gather samples of
  every path and so each predict one class with certainty). Frequencies are weighted by
  ``sample_weight`` and ``class_weight``; an exit no training sample took gives probability 1
  to its predicted class. At an optimum every exit predicts a (weighted) majority class of its
  samples, so ``predict`` and the argmax of ``predict_proba`` agree up to ties.
* ``apply`` — the node id (in ``graph_``) of the leaf or class terminal each sample reaches.
* ``decision_path`` — scikit-learn's node indicator: a sparse CSR matrix of shape
  ``(n_samples, n_nodes)`` whose row i has a 1 in column k when sample i passes through node k;
  column k is node ``graph_.router.ids[k]`` (nodes in topological order, the root first).
* ``feature_importances_`` — the weighted Gini impurity decrease of the training samples at each
  test, shared among the input features the test reads (a hyperplane's share of feature j is
  ``|a_j| / Σ|a|`` on the [0, 1] scale), summed per input feature and normalised to sum to 1
  (all zeros when no test decreases impurity).
* ``get_depth`` (longest root-to-leaf path) and ``get_n_leaves`` (leaves, or class terminals).

The solve settings take scikit-learn's names: ``random_state`` (the solver's and heuristics'
seed: an int, a ``numpy.random.RandomState`` to draw it from, or None for the solvers' own
default seed, so that a fit is reproducible either way), ``n_jobs`` (the solver's threads: None
for the solver's own default, -1 for every CPU, -k for all but k - 1, as in joblib) and
``verbose``. :func:`odtk.solve` and the ``odtk`` command line call them ``seed`` / ``--seed``
and ``threads`` / ``--threads``.
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import Tags
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from odtk.datasets import inputs
from odtk.exceptions import ConfigError
from odtk.models import DecisionGraph
from odtk.results import SolveResult
from odtk.solvers.options import MAX_SEED

Exit = tuple[Any, Any]  # (last test node, or None when the root is a leaf; leaf or terminal)


def seed_of(random_state: Any) -> int | None:
    """The solver seed for scikit-learn's ``random_state`` (None: the solvers' default seed)."""
    if random_state is None:
        return None
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if not 0 <= random_state <= MAX_SEED:
            raise ConfigError(f"random_state must be None, a RandomState or a whole number from 0 to {MAX_SEED}; "
                              f"got {random_state!r}.")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(MAX_SEED))
    raise ConfigError(f"random_state must be None, a RandomState or a whole number from 0 to {MAX_SEED}; "
                      f"got {random_state!r}.")


def threads_of(n_jobs: Any) -> int | None:
    """The solver threads for scikit-learn's ``n_jobs`` (None: the solver's own default)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ConfigError(f"n_jobs must be None, a positive number of threads or -1 (every CPU); got {n_jobs!r}.")
    if n_jobs > 0:
        return int(n_jobs)
    from joblib import cpu_count

    return max(cpu_count() + 1 + int(n_jobs), 1)


class SolvedClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: subclasses say which ``odtk.solve`` call to make."""

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None) -> SolveResult:
        raise NotImplementedError

    def _settings(self) -> dict[str, Any]:
        """The solve settings every estimator takes, under :func:`odtk.solve`'s names."""
        return {"time_limit": self.time_limit, "mip_gap": self.mip_gap, "threads": threads_of(self.n_jobs),
                "seed": seed_of(self.random_state), "verbose": bool(self.verbose)}

    def _class_weight(self, y: np.ndarray) -> np.ndarray:
        """The weight of each class of ``classes_`` (scikit-learn's ``class_weight``)."""
        if not (self.class_weight is None or self.class_weight == "balanced" or isinstance(self.class_weight, dict)):
            raise ConfigError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}; "
                              f"got {self.class_weight!r}.")
        return compute_class_weight(self.class_weight, classes=self.classes_, y=y)

    def _row_weight(self, class_weight: np.ndarray, y_index: np.ndarray,
                    sample_weight: np.ndarray | None) -> np.ndarray | None:
        """Each row's weight in the objective: its sample weight times its class's weight (None: all 1)."""
        if sample_weight is None and np.all(class_weight == 1):
            return None
        return (1.0 if sample_weight is None else sample_weight) * class_weight[y_index]

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = True  # made dense (odtk.datasets.inputs.dense)
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> SolvedClassifier:
        """Learn the model on ``(X, y)``, each row weighted by ``sample_weight`` times its class's
        ``class_weight`` in the objective.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            The training rows (numeric, binary or categorical columns).
        y : array-like of shape (n_samples,)
            The class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights (None: 1 each).

        Returns
        -------
        self
            The fitted estimator.
        """
        X = inputs.features(X)
        checked, y = validate_data(self, X, y if y is None else inputs.labels(y), dtype=None)
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}.")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, checked, ensure_non_negative=True)
        class_weight = self._class_weight(y)
        frame = self._frame(X, checked)
        self.result_ = self._solve(frame, y, self._row_weight(class_weight, y_index, sample_weight))
        self.model_ = self.result_.model
        self.graph_ = self.model_.graph
        self._position = pd.Index(self.classes_).get_indexer(self.model_.classes)  # model's → classes_
        mass = (np.ones(len(y)) if sample_weight is None else sample_weight) * class_weight[y_index]
        self._summarise(self.model_.encoder.transform(frame), y_index, mass)
        return self

    def _summarise(self, encoded: np.ndarray, y_index: np.ndarray, mass: np.ndarray) -> None:
        """Keep what the training rows say about the model: exit weights, importances, counts."""
        reached, arcs = _routes(self.graph_, encoded)
        self._exit_weights = self._exit_masses(encoded, y_index, mass)
        self.feature_importances_ = self._importances(reached, arcs, y_index, mass)
        self._node_counts = {node: np.bincount(y_index[rows], minlength=len(self.classes_))
                             for node, rows in reached.items()}  # training samples per class (plot_tree)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels (the model routes the rows on arrays, reading only the
        columns it tests)."""
        rows = self._rows(X)
        return self.classes_[self._position[self.model_.predict_index(rows)]]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class frequencies of the training samples that took the same exit (columns: ``classes_``)."""
        encoded = self._encoded(X)
        proba = np.empty((len(encoded), len(self.classes_)))
        for key, rows in _exits(self.graph_, encoded).items():
            weights = self._exit_weights[key]
            if weights.sum() <= 0:  # no training weight: the exit's own class
                weights = np.eye(len(self.classes_))[self._position[self.graph_.graph.nodes[key[1]]["label"]]]
            proba[rows] = weights / weights.sum()
        return proba

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def apply(self, X: Any) -> np.ndarray:
        """The node id in ``graph_`` of the leaf or class terminal each sample reaches."""
        encoded = self._encoded(X)
        leaves = np.empty(len(encoded), dtype=np.intp)
        for (_, leaf), rows in _exits(self.graph_, encoded).items():
            leaves[rows] = leaf
        return leaves

    def decision_path(self, X: Any) -> sparse.csr_matrix:
        """The nodes each sample passes through, as scikit-learn's trees return them.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            The rows.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            1 where sample i passes through node k: column k is node ``graph_.router.ids[k]``
            (topological order, the root first); the last node of a row's path is the leaf (or
            class terminal) whose class :meth:`predict` gives.
        """
        encoded = self._encoded(X)
        reached = self.graph_.node_rows(encoded)
        nodes = list(self.graph_.router.ids)
        columns = np.concatenate([np.full(len(reached[node]), k) for k, node in enumerate(nodes)])
        rows = np.concatenate([reached[node] for node in nodes])
        indicator = sparse.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, columns)),
                                      shape=(len(encoded), len(nodes)))
        indicator.sort_indices()
        return indicator

    def get_depth(self) -> int:
        """The number of tests on the longest path from the root to a leaf or terminal."""
        check_is_fitted(self)
        return self.graph_.depth

    def get_n_leaves(self) -> int:
        """The number of leaves (of class terminals in a diagram)."""
        check_is_fitted(self)
        return sum(1 for _, attrs in self.graph_.graph.nodes(data=True) if "label" in attrs)

    def exit_weights(self, exit: Exit) -> np.ndarray:
        """The weighted training samples per class (``classes_``) that left through ``exit``, an
        arc ``(last test, leaf)`` (``(None, root)`` when the root is a leaf)."""
        check_is_fitted(self)
        return self._exit_weights[exit]

    def _encoded(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        X = inputs.features(X)
        checked = validate_data(self, X, dtype=None, reset=False)
        return self.model_.encoder.transform(self._frame(X, checked))

    def _rows(self, X: Any) -> Any:
        """The validated rows: a DataFrame named as in training (dtypes kept), else the array."""
        check_is_fitted(self)
        X = inputs.features(X)
        checked = validate_data(self, X, dtype=None, reset=False)
        if isinstance(X, pd.DataFrame):
            names = self._frame_columns()
            return X if list(X.columns) == names else X.set_axis(names, axis=1)
        return checked

    def _frame(self, X: Any, checked: np.ndarray) -> pd.DataFrame:
        """The validated rows as a DataFrame named as in training (keeping a DataFrame's dtypes)."""
        frame = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else pd.DataFrame(checked)
        return frame.set_axis(self._frame_columns(), axis=1).infer_objects()

    def _exit_masses(self, encoded: np.ndarray, y_index: np.ndarray, mass: np.ndarray) -> dict[Exit, np.ndarray]:
        """Weighted class counts per exit."""
        return {key: np.bincount(y_index[rows], weights=mass[rows], minlength=len(self.classes_))
                for key, rows in _exits(self.graph_, encoded).items()}

    def _importances(self, reached: dict, arcs: dict, y_index: np.ndarray, mass: np.ndarray) -> np.ndarray:
        """Weighted Gini decrease per test, shared among its input features, normalised."""
        owner = np.zeros(len(self.model_.encoder.columns_), dtype=np.intp)  # encoded column → input feature
        for k, name in enumerate(self._frame_columns()):
            owner[self.model_.encoder.groups_[name]] = k

        def impurity(rows: np.ndarray) -> float:  # weight × Gini impurity
            counts = np.bincount(y_index[rows], weights=mass[rows], minlength=len(self.classes_))
            total = counts.sum()
            return float(total - (counts**2).sum() / total) if total > 0 else 0.0

        importances = np.zeros(self.n_features_in_)
        for node, attrs in self.graph_.graph.nodes(data=True):
            if "label" in attrs:
                continue
            decrease = impurity(reached[node]) - sum(
                impurity(arcs[node, child]) for child in self.graph_.graph.successors(node))
            columns, shares = _shares(attrs)
            np.add.at(importances, owner[columns], decrease * shares)
        total = importances.sum()
        return importances / total if total > 0 else importances

    def _frame_columns(self) -> list[str]:
        """The input features' names (``x0``, ``x1``, … without ``feature_names_in_``)."""
        names = getattr(self, "feature_names_in_", None)
        return [f"x{j}" for j in range(self.n_features_in_)] if names is None else list(names)


def _shares(attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """The encoded columns a test reads and each one's share of it."""
    if "feature" in attrs:
        return np.array([attrs["feature"]]), np.ones(1)
    if "subset" in attrs:
        return np.asarray(attrs["subset"]), np.full(len(attrs["subset"]), 1 / len(attrs["subset"]))
    weights = np.abs(np.asarray(attrs["weights"], dtype=float))
    columns = np.flatnonzero(weights)
    return columns, weights[columns] / max(weights.sum(), 1e-300)


def _routes(graph: DecisionGraph, encoded: np.ndarray) -> tuple[dict, dict]:
    """The rows of ``encoded`` through each node and along each arc of ``graph``.

    A row's path visits nodes in topological order, so the node after ``u`` on its path is
    the first node after ``u`` in that order that the row reaches.
    """
    reached = graph.node_rows(encoded)
    order = list(nx.topological_sort(graph.graph))
    position = {node: k for k, node in enumerate(order)}
    following = np.full(len(encoded), -1)
    arcs = {}
    for node in reversed(order):
        rows = reached[node]
        for child in graph.graph.successors(node):
            arcs[node, child] = rows[following[rows] == position[child]]
        following[rows] = position[node]
    return reached, arcs


def _exits(graph: DecisionGraph, encoded: np.ndarray) -> dict[Exit, np.ndarray]:
    """The rows leaving through each arc into a leaf or terminal (or the root, if a leaf)."""
    reached, arcs = _routes(graph, encoded)
    labelled = nx.get_node_attributes(graph.graph, "label")
    if graph.root in labelled:
        return {(None, graph.root): reached[graph.root]}
    return {arc: rows for arc, rows in arcs.items() if arc[1] in labelled}
