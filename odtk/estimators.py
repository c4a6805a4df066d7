"""scikit-learn estimators over ``odtk.solve``.

Beyond ``fit``/``predict``/``score`` they offer scikit-learn's tree surface:

* ``predict_proba`` — the class frequencies of the training samples that left the model
  through the same exit as the sample: the arc from the last test into the leaf (in a tree,
  the leaf itself) or into the class terminal (in a diagram, whose terminals gather samples of
  every path and so each predict one class with certainty). Frequencies are weighted by
  ``sample_weight`` and the class weights of the objective; an exit no training sample took
  gives probability 1 to its predicted class. At an optimum every exit predicts a (weighted)
  majority class of its samples, so ``predict`` and the argmax of ``predict_proba`` agree up to ties.
* ``apply`` — the node id (in ``graph_``) of the leaf or class terminal each sample reaches.
* ``feature_importances_`` — the weighted Gini impurity decrease of the training samples at each
  test, shared among the input features the test reads (a hyperplane's share of feature j is
  ``|a_j| / Σ|a|`` on the [0, 1] scale), summed per input feature and normalised to sum to 1
  (all zeros when no test decreases impurity).
* ``get_depth`` (longest root-to-leaf path) and ``get_n_leaves`` (leaves, or class terminals).

All three take ``sample_weight`` in ``fit`` and pass scikit-learn's ``check_estimator``; the
two tree estimators fail ``check_sample_weight_equivalence_on_dense_data`` (and
``_on_sparse_data``: sparse ``X`` is made dense) by design: integer weights and repeated rows
give the same optimal objective, but equally optimal trees tie and the solver may return another
one (and quantile thresholds or bins are fitted on the rows, unweighted, so repeated rows can move
them).
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import Tags
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from odtk import api
from odtk.budget import DEFAULT_TIME_LIMIT
from odtk.datasets import inputs
from odtk.exceptions import ConfigError
from odtk.models import DecisionGraph
from odtk.results import SolveResult

Exit = tuple[Any, Any]  # (last test node, or None when the root is a leaf; leaf or terminal)


class _SolvedClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: subclasses say which ``odtk.solve`` call to make."""

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None,
               class_weight: np.ndarray) -> SolveResult:
        raise NotImplementedError

    def _class_weight(self, y: np.ndarray) -> np.ndarray:
        """The weight of each class of ``classes_`` in the objective."""
        return np.ones(len(self.classes_))

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = True  # made dense (odtk.datasets.inputs.dense)
        return tags

    def _fit(self, X: Any, y: Any, sample_weight: Any = None) -> "_SolvedClassifier":
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
        self.result_ = self._solve(frame, y, sample_weight, class_weight)
        self.model_ = self.result_.model
        self.graph_ = self.model_.graph
        self._position = pd.Index(self.classes_).get_indexer(self.model_.classes)  # model's → classes_
        mass = (1.0 if sample_weight is None else sample_weight) * class_weight[y_index]
        self._summarise(self.model_.encoder.transform(frame), y_index, mass)
        return self

    def _summarise(self, encoded: np.ndarray, y_index: np.ndarray, mass: np.ndarray) -> None:
        """Keep what the training rows say about the model: exit frequencies, importances, counts."""
        reached, arcs = _routes(self.graph_, encoded)
        self._exit_proba = self._frequencies(encoded, y_index, mass)
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
            proba[rows] = self._exit_proba[key]
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

    def get_depth(self) -> int:
        """The number of tests on the longest path from the root to a leaf or terminal."""
        check_is_fitted(self)
        return self.graph_.depth

    def get_n_leaves(self) -> int:
        """The number of leaves (of class terminals in a diagram)."""
        check_is_fitted(self)
        return sum(1 for _, attrs in self.graph_.graph.nodes(data=True) if "label" in attrs)

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

    def _frequencies(self, encoded: np.ndarray, y_index: np.ndarray,
                     mass: np.ndarray) -> dict[Exit, np.ndarray]:
        """Weighted class frequencies per exit; an exit no weight took: its own class."""
        table = {}
        for key, rows in _exits(self.graph_, encoded).items():
            counts = np.bincount(y_index[rows], weights=mass[rows], minlength=len(self.classes_))
            if counts.sum() <= 0:
                counts = np.eye(len(self.classes_))[self._position[self.graph_.graph.nodes[key[1]]["label"]]]
            table[key] = counts / counts.sum()
        return table

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


class OptimalTreeClassifier(_SolvedClassifier):
    """An optimal decision tree learned by a MILP formulation (FlowOCT by default) or by the
    CP paper's search (``model="cp"``, with ``min_support``).

    Parameters mirror :func:`odtk.solve`: ``time_limit`` (60 s unless told; None for no limit)
    covers the whole fit, which returns the best model found at the limit or on Ctrl-C;
    ``verbose=True`` prints odtk's training steps and the solver's log (incumbent, bound, gap,
    elapsed time), silent by default. Numeric features are binarised at
    thresholds fitted on the training data — by default (``thresholds="auto"``) about ten
    quantile midpoints per feature plus every threshold of scikit-learn's CART of the same
    depth, so the optimum is at least as accurate on the training data as that CART
    (``"midpoints"``: every midpoint, exact but often too large to solve); categorical
    (non-numeric) columns are one-hot encoded. The MILP models start from the better of CART's
    tree and the CP search's (``initial_tree="best"``; ``"cart"``, or ``None`` for no start), so a
    fit stopped by ``time_limit`` returns at least that tree; the searches (``"cp"``,
    ``"sat-*"``) take no start and ignore it. ``fit`` takes ``sample_weight`` (a weight per sample in
    the objective) for the MILP models (``"flowoct"``, ``"benders"``, ``"binoct"``, ``"oct"``;
    OCT's ``min_leaf`` still counts rows) and whole-number weights for ``"cp"`` (a row of weight
    w counts as w rows, in ``min_support`` too); the SAT models raise ConfigError.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``feature_names_in_`` (for DataFrames
    with string column names), ``feature_importances_``, ``result_`` (:class:`odtk.SolveResult`),
    ``model_`` (:class:`odtk.models.TrainedModel`: encoder, labels, ``to_text``, ``save``) and
    ``graph_`` (its :class:`odtk.models.DecisionGraph`). See :mod:`odtk.estimators` for
    ``predict_proba``, ``apply`` and ``feature_importances_``.

    Of scikit-learn's ``check_estimator``, ``check_sample_weight_equivalence_on_dense_data`` (and
    ``_on_sparse_data``) fails by design: weighted and repeated rows reach the same optimum on the
    same binarisation, not always the same one of several optimal trees, and the thresholds are
    fitted on the rows (unweighted quantiles), which repeated rows can move. ``depth`` ≤ 1 sets the ``poor_score``
    tag (two leaves).
    """

    _defaults = {"lam": 0.0, "min_support": 1}  # options only some models take

    def __init__(self, model: str = "flowoct", depth: int = 2, solver: str | None = None,
                 lam: float = 0.0, min_support: int = 1, time_limit: float | None = DEFAULT_TIME_LIMIT,
                 mip_gap: float | None = None, threads: int | None = None, seed: int | None = None,
                 verbose: bool = False,
                 thresholds: str = "auto", max_thresholds: int | None = None,
                 initial_tree: str | None = "best"):
        self.model = model
        self.depth = depth
        self.solver = solver
        self.lam = lam
        self.min_support = min_support
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.initial_tree = initial_tree

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = self.depth is not None and self.depth < 2  # ≤ 2 leaves
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "OptimalTreeClassifier":
        """Solve the formulation on ``(X, y)`` (rows weighted by ``sample_weight``)."""
        return self._fit(X, y, sample_weight)

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None,
               class_weight: np.ndarray) -> SolveResult:
        known = api.model_options(self.model)
        options = {name: value for name, value in (("lam", self.lam), ("min_support", self.min_support))
                   if name in known or value != self._defaults[name]}  # unknown + set: a clear error
        return api.solve(
            self.model, (frame, y), depth=self.depth, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads,
            seed=self.seed, log=bool(self.verbose), thresholds=self.thresholds,
            max_thresholds=self.max_thresholds,
            warm_start=self.initial_tree if api.takes_warm_start(self.model) else None,
            sample_weight=sample_weight, **options)


class OptimalDiagramClassifier(_SolvedClassifier):
    """An optimal decision diagram (Florio et al.) on a layered skeleton such as ``1-2-4-8``.

    Numeric features are min-max scaled to [0, 1] on the training data; splits are
    hyperplanes ``a·x >= b`` (one feature each with ``univariate=True``). ``strategy``
    chooses the heuristic, the MILP, or both (heuristic warm start and cutoff);
    ``verbose=True`` prints the steps and the solver's log. ``groups`` names the column of
    ``X`` holding two protected groups for ``fairness``. ``fit`` takes ``sample_weight``: the
    heuristic and the MILP minimise the weighted error rate (fairness and stability still count
    rows).
    Fitted attributes as for :class:`OptimalTreeClassifier`; ``graph_`` is the diagram, whose
    class terminals each predict one class: ``predict_proba`` takes the class frequencies of
    the training samples entering the terminal through the same arc.
    """

    def __init__(self, skeleton: str = "1-2-4-8", solver: str | None = None, alpha: float = 0.01,
                 epsilon: float = 1e-4, univariate: bool = False, strategy: str = "both",
                 heuristic_time: float = 5.0, time_limit: float | None = DEFAULT_TIME_LIMIT,
                 mip_gap: float | None = None, threads: int | None = None, seed: int | None = None,
                 verbose: bool = False,
                 fairness: str | None = None, xi: float | None = None, groups: str | None = None,
                 max_nodes: int | None = None, min_samples: int | None = None):
        self.skeleton = skeleton
        self.solver = solver
        self.alpha = alpha
        self.epsilon = epsilon
        self.univariate = univariate
        self.strategy = strategy
        self.heuristic_time = heuristic_time
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose
        self.fairness = fairness
        self.xi = xi
        self.groups = groups
        self.max_nodes = max_nodes
        self.min_samples = min_samples

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "OptimalDiagramClassifier":
        """Learn the diagram on ``(X, y)`` (rows weighted by ``sample_weight``)."""
        return self._fit(X, y, sample_weight)

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None,
               class_weight: np.ndarray) -> SolveResult:
        return api.solve(
            "odd", (frame, y), skeleton=self.skeleton, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads, seed=self.seed,
            log=bool(self.verbose),
            strategy=self.strategy, heuristic_time=self.heuristic_time, groups=self.groups,
            alpha=self.alpha, epsilon=self.epsilon, univariate=self.univariate,
            fairness=self.fairness, xi=self.xi, max_nodes=self.max_nodes,
            min_samples=self.min_samples, sample_weight=sample_weight)


class CategoricalTreeClassifier(_SolvedClassifier):
    """An optimal binary classification tree whose tests are "feature in a subset of its
    values" (Günlük et al.), on a fixed ``topology``: ``depth-2``, ``depth-2.5``,
    ``depth-3``, ``imbalanced`` or a ``networkx.DiGraph``; ``verbose=True`` prints the
    solver's log.

    Non-numeric columns and the columns named in ``categorical`` are categorical; numeric
    columns are cut into ``bins`` quantile bins, kept ordered unless ``numeric="categorical"``.
    ``class_weight`` follows scikit-learn (``None``, ``"balanced"`` or ``{label: weight}``);
    the objective counts correct positives plus C times correct negatives, with C the
    negative class's weight over the positive class's. ``fit`` takes ``sample_weight``, which
    multiplies each row's term in the objective (with ``class_weight``, as in scikit-learn).
    ``rate`` ("sensitivity" or "specificity") with ``min_rate`` maximises one training rate
    subject to a minimum of the other. ``improvements`` passes further model options: the
    paper's switches (``{"anchors": "off"}``), one of its named configurations
    (``{"configuration": "no-relax"}``: ``"all"``, ``"nothing"``, ``"no-anchor"``,
    ``"no-relax"``, ``"no-strength"``), ``max_card_ordinal``, and ``min_groups`` and
    ``selection_share`` of ``feature_selection="cart"``. Binary targets only.
    Fitted attributes as for :class:`OptimalTreeClassifier`.
    """

    def __init__(self, topology: Any = "depth-2", solver: str | None = None,
                 positive_class: Any = None, class_weight: dict | str | None = None,
                 max_card: int | None = None, rate: str = "accuracy", min_rate: float | None = None,
                 numeric: str = "ordinal", bins: int = 10, categorical: list[str] | None = None,
                 feature_selection: str = "all", improvements: dict[str, str] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None,
                 threads: int | None = None, seed: int | None = None, verbose: bool = False):
        self.topology = topology
        self.solver = solver
        self.positive_class = positive_class
        self.class_weight = class_weight
        self.max_card = max_card
        self.rate = rate
        self.min_rate = min_rate
        self.numeric = numeric
        self.bins = bins
        self.categorical = categorical
        self.feature_selection = feature_selection
        self.improvements = improvements
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.verbose = verbose

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "CategoricalTreeClassifier":
        """Learn the tree on ``(X, y)`` (rows weighted by ``sample_weight``); ``y`` holds two classes."""
        return self._fit(X, y, sample_weight)

    def _class_weight(self, y: np.ndarray) -> np.ndarray:
        target = type_of_target(y, input_name="y", raise_unknown=True)
        if target != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {target}.")
        if not (self.class_weight is None or self.class_weight == "balanced"
                or isinstance(self.class_weight, dict)):
            raise ConfigError(f"class_weight must be None, 'balanced' or a dict {{label: weight}}; "
                              f"got {self.class_weight!r}.")
        return compute_class_weight(self.class_weight, classes=self.classes_, y=y)

    def _negative_weight(self, y: np.ndarray, class_weight: np.ndarray,
                         sample_weight: np.ndarray | None) -> float:
        """The objective's C: the negative class's weight over the positive class's."""
        positive = next((k for k, c in enumerate(self.classes_) if self.positive_class is not None
                         and str(c) == str(self.positive_class)), 1)  # else odtk.solve says why
        if class_weight[positive] <= 0:
            raise ConfigError("class_weight must give the positive class a positive weight.")
        ratio = class_weight[1 - positive] / class_weight[positive]
        return float(min(ratio, _lexicographic_bound(y == self.classes_[positive], sample_weight)))

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None,
               class_weight: np.ndarray) -> SolveResult:
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or self.bins < 2:
            raise ConfigError(f"bins must be a whole number of at least 2, got {self.bins!r}.")
        data = inputs.from_arrays(frame, y, categorical=self.categorical)
        return api.solve(
            "categorical", data, skeleton=self.topology, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads, seed=self.seed,
            log=bool(self.verbose),
            max_thresholds=self.bins - 1, positive_class=self.positive_class,
            class_weight=self._negative_weight(y, class_weight, sample_weight), sample_weight=sample_weight,
            max_card=self.max_card, rate=self.rate, min_rate=self.min_rate, numeric=self.numeric,
            feature_selection=self.feature_selection, **(self.improvements or {}))


def _lexicographic_bound(positive: np.ndarray, sample_weight: np.ndarray | None) -> float:
    """A C beyond which every C ranks trees alike (correct negatives first): the weight of the
    positives over the least positive weight of a negative, plus 1 (unweighted: positives + 1)."""
    mass = np.ones(len(positive)) if sample_weight is None else sample_weight
    negatives = mass[~positive & (mass > 0)]
    return float(mass[positive].sum() / (negatives.min() if len(negatives) else 1.0) + 1)
