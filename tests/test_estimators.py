"""The scikit-learn estimators."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import odtk
from odtk import CategoricalTreeClassifier, OptimalDiagramClassifier, OptimalTreeClassifier

from brute_force import all_trees, best_objective
from odtk.exceptions import ConfigError, OdtkWarning

# check_estimator's data are small blobs: few thresholds, a tiny model, the ODD heuristic alone
CHECKED = [
    OptimalTreeClassifier(model="binoct", max_depth=1, thresholds="quantiles", max_thresholds=2, time_limit=30),
    OptimalDiagramClassifier(skeleton="1-2", univariate=True, strategy="heuristic", heuristic_time=0.1),
    CategoricalTreeClassifier(topology="depth-2", bins=2, time_limit=30),
]
TIES = ("equally optimal trees tie, and which one the solver returns depends on the rows it is given: "
        "weights and repeated rows give the same optimal objective, not always the same tree")
BINS = (f"{TIES}; and the quantile thresholds (bins) are fitted on the rows, unweighted, so repeated "
        "rows can move them")
SPLIT_IS_FREE = ("with class_weight {0: 1000, others: 1e-4} the diagram optimal on the training rows still "
                 "splits (ODD's alpha charges nothing for the first decision node, and the check regularises "
                 "scikit-learn's own trees with min_weight_fraction_leaf, which a diagram has no counterpart "
                 "for): it predicts class 0 on 90-92% of the training rows but 78-84% of the test rows, "
                 "below the check's 87%")
EXPECTED_FAILED_CHECKS = {
    OptimalDiagramClassifier: {"check_class_weight_classifiers": SPLIT_IS_FREE},
    OptimalTreeClassifier: {"check_sample_weight_equivalence_on_dense_data": BINS,
                            "check_sample_weight_equivalence_on_sparse_data": BINS},  # made dense: the same
    CategoricalTreeClassifier: {"check_sample_weight_equivalence_on_dense_data": BINS,
                                "check_sample_weight_equivalence_on_sparse_data": BINS},
}


@parametrize_with_checks(CHECKED, expected_failed_checks=lambda e: EXPECTED_FAILED_CHECKS.get(type(e), {}))
def test_scikit_learn_check_estimator(estimator, check):
    check(estimator)


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
    clf = OptimalTreeClassifier(max_depth=2, max_thresholds=6, thresholds="quantiles").fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.n_features_in_ == 3 and list(clf.feature_names_in_) == ["age", "colour", "member"]
    predicted = clf.predict(X)
    assert set(predicted) <= {"no", "yes"}
    assert clf.score(X, y) == pytest.approx(clf.result_.train_accuracy)
    assert clf.result_.objective == pytest.approx((predicted == y).sum())
    assert clf.graph_ is clf.model_.graph and clf.get_depth() == clf.graph_.depth <= 2
    assert not hasattr(clf, "tree_")  # scikit-learn's tree_ is its array structure


def test_estimator_optimum_matches_enumeration_on_binary_arrays():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, (30, 5))
    y = (X[:, 0] & X[:, 2]) | (rng.random(30) < 0.15)
    clf = OptimalTreeClassifier(max_depth=2, lam=0.1).fit(X, y)
    assert clf.result_.objective == pytest.approx(best_objective(X, y, 2, 2, 0.1))
    assert clf.predict(X).dtype == y.dtype


def test_clone_and_params():
    clf = OptimalTreeClassifier(max_depth=3, solver="cbc", lam=0.2)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()
    assert copy.get_params()["max_depth"] == 3


def test_predict_before_fit_and_wrong_width(mixed_frame):
    X, y = mixed_frame
    with pytest.raises(NotFittedError):
        OptimalTreeClassifier().predict(X)
    clf = OptimalTreeClassifier(max_depth=1).fit(X.to_numpy()[:, [0, 2]].astype(int), y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.zeros((2, 5)))


def test_diagram_classifier_on_raw_units_predicts_new_rows():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"height": rng.uniform(150, 200, 14), "weight": rng.uniform(50, 110, 14)})
    y = np.where(X["weight"] / (X["height"] / 100) ** 2 > 25, "high", "low")
    clf = OptimalDiagramClassifier(skeleton="1-2", alpha=0.01, heuristic_time=0.2, time_limit=600)
    clf.fit(X, y)
    assert clf.result_.termination == "optimal"
    assert clf.score(X, y) == pytest.approx(clf.result_.train_accuracy)
    reference = odtk.solve("odd", (X, y), skeleton="1-2", alpha=0.01, strategy="milp")
    assert clf.result_.objective == pytest.approx(reference.objective, abs=1e-6)
    shifted = X.iloc[:3] + 0.001  # new rows in original units go through the fitted scaler
    assert list(clf.predict(shifted)) == list(clf.predict(X.iloc[:3]))
    assert clone(clf).get_params() == clf.get_params()
    assert clf.graph_ is clf.model_.graph and not hasattr(clf, "tree_")
    proba = clf.predict_proba(X)
    assert proba.shape == (14, 2) and np.allclose(proba.sum(axis=1), 1)
    terminals = {n for n, a in clf.graph_.graph.nodes(data=True) if "label" in a}
    assert set(clf.apply(X)) <= terminals and clf.get_n_leaves() == len(terminals)


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
    with pytest.raises(ValueError, match="Only binary classification"):
        CategoricalTreeClassifier().fit(X, np.arange(len(y)) % 3)


def _leaf_frequencies(clf, X, y) -> dict:
    leaves = clf.apply(X)
    return {leaf: np.array([(y[leaves == leaf] == c).mean() for c in clf.classes_]) for leaf in set(leaves)}


def test_tree_surface_matches_the_learned_tree(mixed_frame):
    X, y = mixed_frame
    clf = OptimalTreeClassifier(max_depth=2, max_thresholds=4, thresholds="quantiles").fit(X, y)
    leaves = clf.apply(X)
    proba = clf.predict_proba(X)
    for leaf, frequencies in _leaf_frequencies(clf, X, y).items():
        assert np.allclose(proba[leaves == leaf], frequencies)
        assert "label" in clf.graph_.graph.nodes[leaf]
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))  # no ties here
    assert np.allclose(np.exp(clf.predict_log_proba(X)), proba)
    assert clf.get_n_leaves() >= len(set(leaves))
    importances = clf.feature_importances_
    assert importances.shape == (3,) and importances.sum() == pytest.approx(1) and (importances >= 0).all()
    tested = {a["feature"] for _, a in clf.graph_.graph.nodes(data=True) if "feature" in a}
    for k, name in enumerate(X.columns):
        if not tested & set(clf.model_.encoder.groups_[name]):
            assert importances[k] == 0


def test_predict_proba_of_an_empty_leaf_is_its_class():
    X = np.array([[0], [0], [1], [1]])
    clf = OptimalTreeClassifier(max_depth=1).fit(X, ["a", "a", "b", "b"])
    assert np.array_equal(clf.predict_proba([[0], [1]]), [[1, 0], [0, 1]])
    assert clf.get_depth() == 1 and clf.get_n_leaves() == 2 and clf.feature_importances_.tolist() == [1.0]


@pytest.mark.parametrize("model", ["flowoct", "benders", "binoct", "oct"])
def test_sample_weight_is_optimal_by_enumeration(model):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, (24, 4))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(24) < 0.2)
    weight = rng.uniform(0, 3, 24)
    clf = OptimalTreeClassifier(model=model, max_depth=2).fit(X, y, sample_weight=weight)
    truth = y.astype(int)
    best = max(float(weight @ (predicted == truth)) for predicted, _, _ in all_trees(X, 2, 2))
    assert clf.result_.objective == pytest.approx(best)
    assert clf.result_.objective == pytest.approx(weight @ (clf.predict(X) == y))


def test_integer_weights_equal_repeated_rows_and_other_models_refuse_weights():
    rng = np.random.default_rng(4)
    X, y = rng.integers(0, 2, (20, 3)), rng.integers(0, 2, 20)
    counts = rng.integers(0, 3, 20)
    weighted = OptimalTreeClassifier(max_depth=2).fit(X, y, sample_weight=counts)
    repeated = OptimalTreeClassifier(max_depth=2).fit(np.repeat(X, counts, 0), np.repeat(y, counts))
    assert weighted.result_.objective == pytest.approx(repeated.result_.objective)
    with pytest.raises(ConfigError, match="Model 'sat' takes no sample_weight; models that do: "
                                          "benders, binoct, categorical, cp, flowoct, oct, odd"):
        OptimalTreeClassifier(model="sat-depth", max_depth=1).fit(X, y, sample_weight=counts)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        OptimalTreeClassifier(max_depth=1).fit(X, y, sample_weight=-np.ones(20))


def test_diagram_integer_weights_reach_the_optimum_of_repeated_rows():
    rng = np.random.default_rng(8)
    X, y = rng.integers(0, 5, (12, 2)) / 4, rng.integers(0, 2, 12)
    counts = rng.integers(0, 4, 12)
    clf = OptimalDiagramClassifier(skeleton="1-2", univariate=True, heuristic_time=0.1, time_limit=60)
    weighted = clf.fit(X, y, sample_weight=counts).result_
    internal = sum("label" not in attrs for _, attrs in clf.graph_.graph.nodes(data=True))
    error = counts @ (clf.predict(X) != y) / counts.sum()
    assert weighted.objective == pytest.approx(error + 0.01 * (internal - 1) / 2)
    repeated = clone(clf).fit(np.repeat(X, counts, 0), np.repeat(y, counts)).result_
    assert weighted.termination == repeated.termination == "optimal"
    assert weighted.objective == pytest.approx(repeated.objective, abs=1e-6)


def test_categorical_integer_weights_reach_the_optimum_of_repeated_rows(mixed_frame):
    X, y = mixed_frame
    X = X.assign(age=X["age"] // 15)  # four values, a bin each: repeated rows keep the bins
    counts = np.random.default_rng(9).integers(1, 4, len(y))
    clf = CategoricalTreeClassifier(positive_class="yes", class_weight={"no": 2, "yes": 1}, bins=3)
    weighted = clf.fit(X, y, sample_weight=counts).result_
    correct = (clf.predict(X) == y) * counts
    assert weighted.objective == pytest.approx(correct[y == "yes"].sum() + 2 * correct[y == "no"].sum())
    repeated = clone(clf).fit(X.loc[X.index.repeat(counts)], np.repeat(y, counts)).result_
    assert weighted.objective == pytest.approx(repeated.objective)


def test_categorical_class_weight_follows_scikit_learn(mixed_frame):
    X, y = mixed_frame
    balanced = CategoricalTreeClassifier(class_weight="balanced", positive_class="yes", bins=3).fit(X, y)
    counts = pd.Series(y).value_counts()
    assert balanced.result_.hyperparameters["class_weight"] == pytest.approx(counts["yes"] / counts["no"])
    negatives = CategoricalTreeClassifier(class_weight={"no": 1e9, "yes": 1}, bins=3).fit(X, y)
    assert negatives.result_.hyperparameters["class_weight"] == counts["yes"] + 1  # lexicographic
    assert (negatives.predict(X)[y == "no"] == "no").all()
    weight = np.random.default_rng(1).uniform(0.5, 2, len(y))  # lexicographic from Σ_+ ω / min_− ω + 1
    weighted = CategoricalTreeClassifier(class_weight={"no": 1e9, "yes": 1}, bins=3)
    weighted.fit(X, y, sample_weight=weight)
    assert weighted.result_.hyperparameters["class_weight"] == pytest.approx(
        weight[y == "yes"].sum() / weight[y == "no"].min() + 1)
    assert (weighted.predict(X)[y == "no"] == "no").all()
    with pytest.raises(ConfigError, match="class_weight must be None, 'balanced' or a dict"):
        CategoricalTreeClassifier(class_weight=2.0).fit(X, y)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_scikit_learn_input_messages(mixed_frame):
    X, y = mixed_frame
    clf = OptimalTreeClassifier(max_depth=1, max_thresholds=2, thresholds="quantiles")
    with pytest.raises(ValueError, match="requires y to be passed"):
        clf.fit(X, None)
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="only one class"):
        clf.fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="contains NaN"):
        clf.fit(X.assign(age=np.nan), y)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        clf.fit(X, y.reshape(-1, 1))
    with pytest.raises(ValueError, match="Reshape your data"):
        clf.predict(X.to_numpy()[0])
    with pytest.raises(ValueError, match="X has 2 features, but OptimalTreeClassifier is expecting 3"):
        clf.predict(X.iloc[:, :2].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clf.predict(X).shape == (len(y),)


def test_verbose_shows_the_steps_and_the_solvers_progress_and_is_silent_by_default(capfd):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    OptimalTreeClassifier(max_depth=1, time_limit=30).fit(X, y)
    quiet = capfd.readouterr()
    assert quiet.out == "" and quiet.err == ""
    OptimalTreeClassifier(max_depth=1, time_limit=30, verbose=True).fit(X, y)
    shown = capfd.readouterr()
    assert "odtk: 150 rows encoded as" in shown.err and "odtk: warm start: objective" in shown.err
    assert re.search(r"highs solving for at most (29\.\d|30\.0)s", shown.err)
    assert "Solving report" in shown.out + shown.err  # HiGHS's own log: incumbent, bound, gap


@pytest.mark.parametrize("load", ["load_iris", "load_wine"])
def test_defaults_finish_at_least_as_accurate_as_cart_on_the_training_data(load):
    import sklearn.datasets
    from sklearn.tree import DecisionTreeClassifier

    X, y = getattr(sklearn.datasets, load)(return_X_y=True)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    for model in ("flowoct", "cp"):
        fitted = OptimalTreeClassifier(model=model, time_limit=10).fit(X, y)
        assert fitted.score(X, y) >= cart.score(X, y)


def _leaf_sizes(clf, X) -> np.ndarray:
    return np.unique(clf.apply(X), return_counts=True)[1]


def test_diagram_min_samples_leaf_leaves_enough_rows_on_both_sides_of_every_split(mixed_frame):
    X, y = mixed_frame
    diagram = OptimalDiagramClassifier(max_depth=3, random_state=0, min_samples_leaf=5, class_weight="balanced",
                                       heuristic_time=0.2, time_limit=60).fit(X, y)
    assert diagram.result_.hyperparameters["min_leaf"] == 5 and diagram.result_.optimal
    graph = diagram.graph_
    sides = graph.arc_rows(diagram.model_.encoder.transform(X))
    tests = [node for node in graph.graph if "label" not in graph.graph.nodes[node]]
    assert tests and all(len(sides[arc]) >= 5 for node in tests for arc in graph.graph.out_edges(node))
    unbounded = clone(diagram).set_params(min_samples_leaf=1).fit(X, y)
    assert diagram.result_.objective >= unbounded.result_.objective - 1e-9
    with pytest.raises(ConfigError, match="min_samples_leaf must be a whole number of at least 1"):
        clone(diagram).set_params(min_samples_leaf=0).fit(X, y)


def test_every_estimator_takes_scikit_learns_names(mixed_frame):
    X, y = mixed_frame
    tree = OptimalTreeClassifier(max_depth=3, random_state=0, min_samples_leaf=5, class_weight="balanced",
                                 thresholds="quantiles", max_thresholds=4, time_limit=60)
    tree.fit(X, y)  # model="auto": OCT, which counts a leaf's rows
    assert tree.get_depth() <= 3 and _leaf_sizes(tree, X).min() >= 5
    assert tree.result_.hyperparameters["min_leaf"] == 5 and tree.result_.options["random_seed"] == 0
    search = OptimalTreeClassifier(model="cp", max_depth=3, random_state=0, min_samples_leaf=5,
                                   class_weight={"no": 1, "yes": 2}).fit(X, y)
    leaves, weight = search.apply(X), np.where(y == "yes", 2, 1)  # the CP search counts weighted rows
    assert search.result_.optimal and min(weight[leaves == leaf].sum() for leaf in set(leaves)) >= 5
    diagram = OptimalDiagramClassifier(max_depth=2, random_state=0, class_weight="balanced", min_samples_split=5,
                                       univariate=True, heuristic_time=0.2, time_limit=60).fit(X, y)
    assert diagram.result_.hyperparameters["skeleton"] == "1-2" and diagram.get_depth() <= 2
    assert diagram.result_.hyperparameters["min_samples"] == 5
    categorical = CategoricalTreeClassifier(max_depth=3, random_state=0, class_weight="balanced", bins=3,
                                            n_jobs=1, time_limit=60).fit(X, y)
    assert categorical.result_.hyperparameters["skeleton"] == "depth-3"
    with pytest.raises(ConfigError, match="min_samples_leaf=5 needs model='cp', 'oct' or 'auto'"):
        OptimalTreeClassifier(model="flowoct", max_depth=3, min_samples_leaf=5).fit(X, y)
    with pytest.raises(ConfigError, match="min_samples_leaf must be a whole number of at least 1"):
        OptimalTreeClassifier(model="cp", min_samples_leaf=0).fit(X, y)
    with pytest.raises(TypeError, match="depth"):
        OptimalTreeClassifier(depth=2)  # the names before scikit-learn's are gone


@pytest.mark.parametrize("model", ["flowoct", "cp"])
def test_class_weight_weighs_the_objective_as_its_sample_weights(model):
    rng = np.random.default_rng(12)
    X = rng.integers(0, 2, (24, 4))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(24) < 0.2)
    clf = OptimalTreeClassifier(model=model, max_depth=2, class_weight={0: 3, 1: 1}).fit(X, y)
    weight = np.where(y == 0, 3, 1)
    best = max(float(weight @ (predicted == y)) for predicted, _, _ in all_trees(X, 2, 2))
    if model == "flowoct":
        assert clf.result_.objective == pytest.approx(best)
    assert float(weight @ (clf.predict(X) == y)) == pytest.approx(best)
    balanced = OptimalTreeClassifier(max_depth=2, class_weight="balanced").fit(X, y)
    weight = len(y) / (2 * np.bincount(y.astype(int)))[y.astype(int)]
    best = max(float(weight @ (predicted == y)) for predicted, _, _ in all_trees(X, 2, 2))
    assert balanced.result_.objective == pytest.approx(best)
    with pytest.raises(ConfigError, match="class_weight must be None, 'balanced' or a dict"):
        OptimalTreeClassifier(class_weight="even").fit(X, y)


def test_diagram_class_weight_equals_the_same_sample_weights():
    rng = np.random.default_rng(8)
    X, y = rng.integers(0, 5, (12, 2)) / 4, rng.integers(0, 2, 12)
    clf = OptimalDiagramClassifier(skeleton="1-2", univariate=True, heuristic_time=0.1, time_limit=60)
    weighted = clone(clf).set_params(class_weight={0: 1, 1: 3}).fit(X, y).result_
    sampled = clone(clf).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0)).result_
    assert weighted.termination == sampled.termination == "optimal"
    assert weighted.objective == pytest.approx(sampled.objective, abs=1e-9)


def test_random_state_and_n_jobs_reach_the_solver():
    X, y = np.random.default_rng(2).integers(0, 2, (30, 3)), np.arange(30) % 2
    clf = OptimalTreeClassifier(max_depth=1, random_state=np.random.RandomState(5), n_jobs=-1).fit(X, y)
    again = OptimalTreeClassifier(max_depth=1, random_state=np.random.RandomState(5)).fit(X, y)
    assert clf.result_.options["random_seed"] == again.result_.options["random_seed"]
    import joblib

    assert clf.result_.options["threads"] == joblib.cpu_count()
    with pytest.raises(ConfigError, match="n_jobs must be None, a positive number of threads or -1"):
        OptimalTreeClassifier(max_depth=1, n_jobs=0).fit(X, y)
    with pytest.raises(ConfigError, match="random_state must be None, a RandomState or a whole number"):
        OptimalTreeClassifier(max_depth=1, random_state=-1).fit(X, y)


def _fitted_estimators(mixed_frame) -> list:
    X, y = mixed_frame
    return [OptimalTreeClassifier(max_depth=2, thresholds="quantiles", max_thresholds=4).fit(X, y),
            OptimalDiagramClassifier(skeleton="1-2", strategy="heuristic", heuristic_time=0.2).fit(X, y),
            CategoricalTreeClassifier(bins=3).fit(X, y)]


def test_decision_path_ends_at_the_leaf_that_predicts(mixed_frame):
    X, y = mixed_frame
    for clf in _fitted_estimators(mixed_frame):
        path = clf.decision_path(X)
        nodes = list(clf.graph_.router.ids)
        assert path.format == "csr" and path.shape == (len(y), len(nodes)) and set(path.data) == {1}
        assert path[:, 0].toarray().all() and nodes[0] == clf.graph_.root  # every path starts at the root
        labelled = np.array(["label" in clf.graph_.graph.nodes[node] for node in nodes])
        leaves = path[:, labelled].nonzero()
        assert np.array_equal(leaves[0], np.arange(len(y)))  # one leaf on each path
        reached = np.flatnonzero(labelled)[leaves[1]]
        assert np.array_equal(np.array(nodes)[reached], clf.apply(X))
        labels = [clf.graph_.graph.nodes[nodes[k]]["label"] for k in reached]
        assert np.array_equal(clf.classes_[clf._position[labels]], clf.predict(X))


def test_export_text_prints_as_scikit_learn_does():
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier, export_text

    X, y = load_iris(return_X_y=True)
    names = load_iris().feature_names
    ours = OptimalTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert ours.score(X, y) == cart.score(X, y)  # the same tree: petal width at 0.80 and 1.75
    assert odtk.export_text(ours) == export_text(cart)
    assert odtk.export_text(ours, feature_names=names, show_weights=True, decimals=3) == export_text(
        cart, feature_names=names, show_weights=True, decimals=3)
    assert odtk.export_text(ours, max_depth=0, spacing=2) == export_text(cart, max_depth=0, spacing=2)
    assert odtk.export_text(ours, class_names=["a", "b", "c"]) == export_text(cart, class_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="feature_names must contain 4 elements, got 2"):
        odtk.export_text(ours, feature_names=["a", "b"])
    with pytest.raises(TypeError, match="for scikit-learn's trees use sklearn.tree.export_text"):
        odtk.export_text(cart)


def test_export_text_of_categories_subsets_and_hyperplanes(mixed_frame):
    _, y = mixed_frame
    tree, diagram, categorical = _fitted_estimators(mixed_frame)
    for clf in (tree, diagram, categorical):
        text = odtk.export_text(clf, show_weights=True)
        leaves = re.findall(r"weights: \[([\d.]+), ([\d.]+)\] class: (no|yes)\n", text)
        assert text.startswith("|--- ") and len(leaves) >= clf.get_n_leaves()
        assert sum(float(a) + float(b) for a, b, _ in leaves) == len(y)  # every row in one leaf
    assert re.search(r"\|   \|--- colour != (red|green|blue)\n", odtk.export_text(tree))
    assert re.search(r"\|   \|--- colour != (red|green|blue)\n", odtk.export_text(diagram))  # a 0/1 hyperplane
    assert re.search(r"colour not in \{[a-z, ]+\}\n", odtk.export_text(categorical))
    heights = pd.DataFrame({"height": np.linspace(150, 200, 20), "weight": np.tile([60.0, 90.0], 10)})
    labels = np.where(heights["weight"] - 0.5 * heights["height"] > 0, "high", "low")
    hyperplane = OptimalDiagramClassifier(skeleton="1", heuristic_time=0.2, time_limit=60).fit(heights, labels)
    first, _, second, _ = odtk.export_text(hyperplane).splitlines()
    match = re.fullmatch(r"\|--- ([-\d.]+)\*height ([+-]) ([\d.]+)\*weight <  (-?[\d.]+)", first)
    assert match and second == first.replace("<  ", ">= ")
    a, sign, b, c = float(match[1]), match[2], float(match[3]), float(match[4])
    rule = a * heights["height"] + (b if sign == "+" else -b) * heights["weight"] < c
    left = first and odtk.export_text(hyperplane).splitlines()[1].split("class: ")[1]
    assert (hyperplane.predict(heights[rule]) == left).all()


def test_warnings_point_at_the_users_line(mixed_frame):
    X, y = mixed_frame
    clf = OptimalTreeClassifier(max_depth=1, thresholds="quantiles", max_thresholds=2).fit(X, y)
    with pytest.warns(OdtkWarning, match="categories not seen in training") as caught:
        clf.predict_proba(X.assign(colour="purple"))  # encodes every column
    assert [w.filename for w in caught] == [__file__]
    with pytest.warns(UserWarning, match="runs on one thread") as caught:
        OptimalTreeClassifier(model="cp", max_depth=1, n_jobs=2).fit(X, y)
    assert {w.filename for w in caught} == {__file__}
    with pytest.warns(UserWarning, match="runs on one thread") as caught:
        odtk.solve("cp", (X, y), depth=1, threads=2)
    assert {w.filename for w in caught} == {__file__}


def test_warnings_skip_the_formulations_wherever_they_live():
    import odtk.formulations.odd
    from odtk.warn import PREFIXES

    # in a wheel inside odtk's folder, in an editable checkout the top-level formulations/
    assert odtk.formulations.odd.__file__.startswith(PREFIXES)


@pytest.mark.parametrize("improvements, message", [
    ({"min_leaf": 2}, r"^improvements sets min_leaf, which the estimator sets from its own parameters"),
    (["anchors"], r"^improvements must be a dict of model options .* got list\.$"),
])
def test_improvements_that_clash_or_are_no_dict_are_one_line(improvements, message):
    X, y = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 3), np.array([0, 1, 1, 0] * 3)
    with pytest.raises(ConfigError, match=message) as info:
        CategoricalTreeClassifier(max_depth=1, improvements=improvements).fit(X, y)
    assert "\n" not in str(info.value)
