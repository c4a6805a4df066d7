"""Rows alike in encoded features, class and group merged into one weighted row: the same
optimum and the same model as on every row, counted right, and kept apart where a constraint
counts rows. The oracle is the same solve with merging switched off, and exhaustive enumeration."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import odtk
from odtk import api
from odtk.pipeline.aggregate import merge_keys

from brute_force import all_trees

FAST = {"solver": "highs", "time_limit": 60}
# model → its options for a depth-2 tree maximising (or, ODD, minimising the rate of) errors alone
MODELS = {"flowoct": {}, "benders": {}, "oct": {}, "binoct": {},
          "categorical": {}, "odd": {"univariate": True, "alpha": 0.0, "heuristic_time": 0.3}}


def _repeated(seed: int = 3, distinct: int = 14, features: int = 5, total: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """``total`` rows drawn from ``distinct`` 0/1 rows (every one at least once), labelled by
    (x0 and x1) or x2 with a fifth of the labels flipped."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, size=(distinct, features))
    y = ((base[:, 0] & base[:, 1]) | base[:, 2]).astype(int)
    y = np.where(rng.random(distinct) < 0.2, 1 - y, y)
    rows = np.concatenate([np.arange(distinct), rng.integers(0, distinct, total - distinct)])
    rng.shuffle(rows)
    return base[rows], y[rows]


def _distinct(*columns: np.ndarray) -> int:
    """The number of distinct rows of the columns side by side."""
    return len({tuple(row) for row in np.column_stack(columns).tolist()})


def _unmerged(monkeypatch) -> None:
    monkeypatch.setattr(api, "distinct_rows", lambda problem, hyper: problem)


def _best_predictions(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The predictions of the depth-2 tree classifying most rows right, checked to be the only
    optimal predictions (so that every optimal model must make them)."""
    trees = all_trees(X, 2, 2)
    correct = np.array([(predicted == y).sum() for predicted, _, _ in trees])
    optimal = {tuple(trees[k][0]) for k in np.flatnonzero(correct == correct.max())}
    assert len(optimal) == 1, "the instance must have one optimal classification"
    return np.array(optimal.pop())


def _objective(model: str, correct: int, n: int) -> float:
    return 1 - correct / n if model == "odd" else correct


@pytest.mark.parametrize("model", MODELS)
def test_merged_rows_give_the_optimum_and_model_of_every_row(model, monkeypatch):
    X, y = _repeated()
    best = _best_predictions(X, y)
    merged = odtk.solve(model, (X, y), depth=2, **MODELS[model], **FAST)
    _unmerged(monkeypatch)
    every_row = odtk.solve(model, (X, y), depth=2, **MODELS[model], **FAST)
    expected = _objective(model, int((best == y).sum()), len(y))
    for result in (merged, every_row):
        assert result.termination == "optimal"
        assert result.objective == pytest.approx(expected, abs=1e-6)
        assert np.array_equal(result.model.predict_index(X), best)  # both models classify every training row alike
        assert result.train_accuracy == pytest.approx(np.mean(best == y))
    assert merged.n_samples == every_row.n_samples == len(y)
    assert merged.n_distinct == _distinct(X, y) < len(y)
    assert every_row.n_distinct is None
    assert merged.size.constraints < every_row.size.constraints


def test_sample_weights_of_merged_rows_are_summed(monkeypatch):
    X, y = _repeated(seed=4)
    weight = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    merged = odtk.solve("flowoct", (X, y), depth=2, sample_weight=weight, **FAST)
    expected = max(float(np.dot(predicted == y, weight)) for predicted, _, _ in all_trees(X, 2, 2))
    _unmerged(monkeypatch)
    every_row = odtk.solve("flowoct", (X, y), depth=2, sample_weight=weight, **FAST)
    assert merged.objective == pytest.approx(expected, abs=1e-6)
    assert every_row.objective == pytest.approx(expected, abs=1e-6)
    assert merged.n_distinct == _distinct(X, y)


def test_rows_apart_in_a_group_stay_apart():
    X = np.array([[0, 1], [0, 1], [0, 1], [1, 0], [1, 0]])
    y = np.array([1, 1, 1, 0, 0])
    first, inverse = merge_keys(X, y, np.array([0, 1, 0, 1, 1]))
    assert first.tolist() == [0, 1, 3]  # row 1 differs from row 0 in its group alone
    assert inverse.tolist() == [0, 1, 0, 2, 2]
    first, inverse = merge_keys(X, y)
    assert first.tolist() == [0, 3] and inverse.tolist() == [0, 0, 0, 1, 1]


def test_a_group_column_keeps_odds_rows_apart():
    X, y = _repeated(seed=4, total=40)
    group = np.arange(len(y)) % 2
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(g=group, y=y)
    result = odtk.solve("odd", frame, target="y", groups="g", depth=1, univariate=True, **FAST)
    assert result.termination == "optimal"
    assert result.n_distinct == _distinct(frame.drop(columns="y").to_numpy(), y) > _distinct(X, y)


@pytest.mark.parametrize("model,options", [
    ("oct", {"min_leaf": 6}),
    ("odd", {"min_samples": 10, "univariate": True, "alpha": 0.0}),
    ("categorical", {"rate": "sensitivity", "min_rate": 0.5}),
    ("categorical", {"feature_selection": "cart", "min_groups": 2}),
])
def test_constraints_counting_rows_keep_every_row(model, options):
    X, y = _repeated()
    result = odtk.solve(model, (X, y), depth=2, **options, **FAST)
    assert result.n_distinct is None
    assert result.termination == "optimal"
    if model == "oct":  # enumeration knows the rows of leaves, not those through ODD's internal nodes
        assert result.objective == pytest.approx(max(int((predicted == y).sum()) for predicted, _, smallest
                                                     in all_trees(X, 2, 2) if smallest >= options["min_leaf"]))


def test_fairness_keeps_every_row():
    X, y = _repeated(seed=4, total=40)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(g=np.arange(len(y)) % 2, y=y)
    result = odtk.solve("odd", frame, target="y", groups="g", fairness="demographic_parity", xi=0.8, depth=1,
                        univariate=True, **FAST)
    assert result.n_distinct is None


def test_summary_and_dict_report_the_rows():
    X, y = _repeated()
    result = odtk.solve("flowoct", (X, y), depth=1, **FAST)
    assert f"rows        {len(y)} → {_distinct(X, y)} distinct (weighted)" in result.summary()
    assert result.to_dict()["n_distinct"] == _distinct(X, y)
    unmerged = odtk.solve("cp", (X, y), depth=1)
    assert unmerged.n_distinct is None and "distinct" not in unmerged.summary()
