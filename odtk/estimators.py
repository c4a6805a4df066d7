"""scikit-learn estimators over ``odtk.solve``."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from odtk import api


class OptimalTreeClassifier(ClassifierMixin, BaseEstimator):
    """An optimal decision tree learned by a MILP formulation (FlowOCT by default).

    Parameters mirror :func:`odtk.solve`. Numeric features are binarised at
    thresholds fitted on the training data; categorical (non-numeric) columns
    are one-hot encoded.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``feature_names_in_``
    (for DataFrames), ``result_`` (:class:`odtk.SolveResult`), ``tree_``
    (:class:`odtk.models.DecisionGraph`), ``model_`` (the trained model).
    """

    def __init__(self, model: str = "flowoct", depth: int = 2, solver: str = "highs",
                 lam: float = 0.0, time_limit: float | None = None, mip_gap: float | None = None,
                 threads: int | None = None, seed: int | None = None,
                 thresholds: str = "midpoints", max_thresholds: int | None = None):
        self.model = model
        self.depth = depth
        self.solver = solver
        self.lam = lam
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds

    def fit(self, X: Any, y: Any) -> "OptimalTreeClassifier":
        """Solve the formulation on ``(X, y)`` and keep the verified tree."""
        frame = self._frame(X, fitting=True)
        self.result_ = api.solve(
            self.model, (frame, np.asarray(y)), depth=self.depth, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, threads=self.threads,
            seed=self.seed, thresholds=self.thresholds, max_thresholds=self.max_thresholds,
            lam=self.lam)
        self.model_ = self.result_.model
        self.tree_ = self.model_.graph
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
