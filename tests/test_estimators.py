"""The scikit-learn estimator."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import odtk
from odtk import CategoricalTreeClassifier, OptimalDiagramClassifier, OptimalTreeClassifier

from brute_force import best_objective
from odtk.exceptions import ConfigError


@pytest.fixture
def mixed_frame():
    rng = np.random.default_rng(3)
    n = 40
    frame = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "colour": rng.choice(["red", "green", "blue"], n),
        "member": rng.integers(0, 2, n),
    })
    label = np.where((frame["age"] > 40) & (frame["colour"] != "red"), "yes", "no")
    return frame, label


def test_fit_predict_score_on_mixed_columns(mixed_frame):
    X, y = mixed_frame
    clf = OptimalTreeClassifier(depth=2, max_thresholds=6, thresholds="quantiles").fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.n_features_in_ == 3 and list(clf.feature_names_in_) == ["age", "colour", "member"]
    predicted = clf.predict(X)
    assert set(predicted) <= {"no", "yes"}
    assert clf.score(X, y) == pytest.approx(clf.result_.train_accuracy)
    assert clf.result_.objective == pytest.approx((predicted == y).sum())
    assert clf.tree_ is clf.graph_ and clf.tree_.depth <= 2


def test_estimator_optimum_matches_enumeration_on_binary_arrays():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, (30, 5))
    y = (X[:, 0] & X[:, 2]) | (rng.random(30) < 0.15)
    clf = OptimalTreeClassifier(depth=2, lam=0.1).fit(X, y)
    assert clf.result_.objective == pytest.approx(best_objective(X, y, 2, 2, 0.1))
    assert clf.predict(X).dtype == y.dtype


def test_clone_and_params():
    clf = OptimalTreeClassifier(depth=3, solver="cbc", lam=0.2)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()
    assert copy.get_params()["depth"] == 3


def test_predict_before_fit_and_wrong_width(mixed_frame):
    X, y = mixed_frame
    with pytest.raises(NotFittedError):
        OptimalTreeClassifier().predict(X)
    clf = OptimalTreeClassifier(depth=1).fit(X.to_numpy()[:, [0, 2]].astype(int), y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.zeros((2, 5)))


def test_diagram_classifier_on_raw_units_predicts_new_rows():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"height": rng.uniform(150, 200, 14), "weight": rng.uniform(50, 110, 14)})
    y = np.where(X["weight"] / (X["height"] / 100) ** 2 > 25, "high", "low")
    clf = OptimalDiagramClassifier(skeleton="1-2", alpha=0.01, heuristic_time=0.2, time_limit=60)
    clf.fit(X, y)
    assert clf.result_.termination == "optimal"
    assert clf.score(X, y) == pytest.approx(clf.result_.train_accuracy)
    reference = odtk.solve("odd", (X, y), skeleton="1-2", alpha=0.01, strategy="milp")
    assert clf.result_.objective == pytest.approx(reference.objective, abs=1e-6)
    shifted = X.iloc[:3] + 0.001  # new rows in original units go through the fitted scaler
    assert list(clf.predict(shifted)) == list(clf.predict(X.iloc[:3]))
    assert clone(clf).get_params() == clf.get_params()
    assert clf.graph_ is clf.model_.graph and not hasattr(clf, "tree_")


def test_categorical_tree_classifier_on_raw_strings_and_integer_codes(mixed_frame):
    X, y = mixed_frame
    clf = CategoricalTreeClassifier(topology="depth-2", positive_class="yes", bins=5,
                                    categorical=["member"], improvements={"anchors": "off"})
    clf.fit(X, y)
    assert list(clf.classes_) == ["no", "yes"] and clf.result_.optimal
    predicted = clf.predict(X)
    correct_positives = ((predicted == y) & (y == "yes")).sum()
    assert clf.result_.objective == pytest.approx(correct_positives + ((predicted == y) & (y == "no")).sum())
    assert clf.score(X, y) == pytest.approx(clf.result_.train_accuracy)
    assert clf.result_.hyperparameters["anchors"] == "off"
    assert clf.model_.encoder.kinds_ == {"age": "numeric", "colour": "categorical", "member": "categorical"}
    assert len(clf.model_.encoder.groups_["age"]) == 5  # five quantile bins
    assert clone(clf).get_params()["improvements"] == {"anchors": "off"}
    with pytest.raises(ConfigError, match="bins"):
        CategoricalTreeClassifier(bins=1).fit(X, y)
