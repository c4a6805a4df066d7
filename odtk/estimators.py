"""scikit-learn estimators over ``odtk.solve``."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from odtk import api
from odtk.datasets import from_dataframe
from odtk.exceptions import ConfigError
from odtk.results import SolveResult


class _SolvedClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: subclasses say which ``odtk.solve`` call to make."""

    def _solve(self, frame: pd.DataFrame, y: np.ndarray) -> SolveResult:
        raise NotImplementedError

    def fit(self, X: Any, y: Any) -> "_SolvedClassifier":
        """Solve the formulation on ``(X, y)`` and keep the verified model."""
        self.result_ = self._solve(self._frame(X, fitting=True), np.asarray(y))
        self.model_ = self.result_.model
        self.graph_ = self.model_.graph
        self.classes_ = np.asarray(self.model_.classes)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels."""
        check_is_fitted(self, "model_")
        labels = self.model_.predict(self._frame(X, fitting=False))
        return labels.astype(self.classes_.dtype)

    def _frame(self, X: Any, fitting: bool) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            frame = X.reset_index(drop=True)
            if fitting:
                self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        else:
            array = np.asarray(X)
            if array.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got shape {array.shape}.")
            frame = pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])])
        if fitting:
            self.n_features_in_ = frame.shape[1]
        elif frame.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {frame.shape[1]} features, but this model was fitted "
                             f"with {self.n_features_in_}.")
        return frame


class OptimalTreeClassifier(_SolvedClassifier):
    """An optimal decision tree learned by a MILP formulation (FlowOCT by default) or by the
    CP paper's search (``model="cp"``, with ``min_support``).

    Parameters mirror :func:`odtk.solve`. Numeric features are binarised at
    thresholds fitted on the training data; categorical (non-numeric) columns
    are one-hot encoded.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``feature_names_in_``
    (for DataFrames), ``result_`` (:class:`odtk.SolveResult`), ``graph_`` (also ``tree_``,
    :class:`odtk.models.DecisionGraph`), ``model_`` (the trained model).
    """

    _defaults = {"lam": 0.0, "min_support": 1}  # options only some models take

    def __init__(self, model: str = "flowoct", depth: int = 2, solver: str | None = None,
                 lam: float = 0.0, min_support: int = 1, time_limit: float | None = None,
                 mip_gap: float | None = None, threads: int | None = None, seed: int | None = None,
                 thresholds: str = "midpoints", max_thresholds: int | None = None):
        self.model = model
        self.depth = depth
        self.solver = solver
        self.lam = lam
        self.min_support = min_support
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds

    @property
    def tree_(self):
        """The learned tree (the same object as ``graph_``)."""
        return self.graph_

    def _solve(self, frame: pd.DataFrame, y: np.ndarray) -> SolveResult:
        known = api.model_options(self.model)
        options = {name: value for name, value in (("lam", self.lam), ("min_support", self.min_support))
                   if name in known or value != self._defaults[name]}  # unknown + set: a clear error
        return api.solve(
            self.model, (frame, y), depth=self.depth, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads,
            seed=self.seed, thresholds=self.thresholds, max_thresholds=self.max_thresholds,
            **options)


class OptimalDiagramClassifier(_SolvedClassifier):
    """An optimal decision diagram (Florio et al.) on a layered skeleton such as ``1-2-4-8``.

    Numeric features are min-max scaled to [0, 1] on the training data; splits are
    hyperplanes ``a·x >= b`` (one feature each with ``univariate=True``). ``strategy``
    chooses the heuristic, the MILP, or both (heuristic warm start and cutoff).
    ``groups`` names the column of ``X`` holding two protected groups for ``fairness``.
    Fitted attributes as for :class:`OptimalTreeClassifier`; ``graph_`` is the diagram.
    """

    def __init__(self, skeleton: str = "1-2-4-8", solver: str | None = None, alpha: float = 0.01,
                 epsilon: float = 1e-4, univariate: bool = False, strategy: str = "both",
                 heuristic_time: float = 5.0, time_limit: float | None = None,
                 mip_gap: float | None = None, threads: int | None = None, seed: int | None = None,
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
        self.fairness = fairness
        self.xi = xi
        self.groups = groups
        self.max_nodes = max_nodes
        self.min_samples = min_samples

    def _solve(self, frame: pd.DataFrame, y: np.ndarray) -> SolveResult:
        return api.solve(
            "odd", (frame, y), skeleton=self.skeleton, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads, seed=self.seed,
            strategy=self.strategy, heuristic_time=self.heuristic_time, groups=self.groups,
            alpha=self.alpha, epsilon=self.epsilon, univariate=self.univariate,
            fairness=self.fairness, xi=self.xi, max_nodes=self.max_nodes,
            min_samples=self.min_samples)


class CategoricalTreeClassifier(_SolvedClassifier):
    """An optimal binary classification tree whose tests are "feature in a subset of its
    values" (Günlük et al.), on a fixed ``topology``: ``depth-2``, ``depth-2.5``,
    ``depth-3``, ``imbalanced`` or a ``networkx.DiGraph``.

    Non-numeric columns and the columns named in ``categorical`` are categorical; numeric
    columns are cut into ``bins`` quantile bins, kept ordered unless ``numeric="categorical"``.
    ``rate`` ("sensitivity" or "specificity") with ``min_rate`` maximises one training rate
    subject to a minimum of the other. ``improvements`` passes further model options: the
    paper's switches (``{"anchors": "off"}``), one of its named configurations
    (``{"configuration": "no-relax"}``: ``"all"``, ``"nothing"``, ``"no-anchor"``,
    ``"no-relax"``, ``"no-strength"``), ``max_card_ordinal``, and ``min_groups`` and
    ``selection_share`` of ``feature_selection="cart"``. Fitted attributes as for
    :class:`OptimalTreeClassifier`.
    """

    def __init__(self, topology: Any = "depth-2", solver: str | None = None,
                 positive_class: Any = None, class_weight: float = 1.0, max_card: int | None = None,
                 rate: str = "accuracy", min_rate: float | None = None, numeric: str = "ordinal",
                 bins: int = 10, categorical: list[str] | None = None,
                 feature_selection: str = "all", improvements: dict[str, str] | None = None,
                 time_limit: float | None = None, mip_gap: float | None = None,
                 threads: int | None = None, seed: int | None = None):
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

    def _solve(self, frame: pd.DataFrame, y: np.ndarray) -> SolveResult:
        if isinstance(self.bins, bool) or not isinstance(self.bins, int) or self.bins < 2:
            raise ConfigError(f"bins must be a whole number of at least 2, got {self.bins!r}.")
        data = from_dataframe(frame.assign(__target__=y), "__target__",
                              categorical=self.categorical, name="arrays")
        return api.solve(
            "categorical", data, skeleton=self.topology, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads, seed=self.seed,
            max_thresholds=self.bins - 1, positive_class=self.positive_class,
            class_weight=self.class_weight, max_card=self.max_card, rate=self.rate,
            min_rate=self.min_rate, numeric=self.numeric, feature_selection=self.feature_selection,
            **(self.improvements or {}))
