"""Input as scikit-learn accepts it, through ``odtk.solve``, every estimator and the command line:
``y`` as one column, sparse ``X``, messages that name ``X`` and ``y``, columns of dates (refused
with the fix) and numbers written with thousands separators in a CSV file."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning

import odtk
from odtk import CategoricalTreeClassifier, OptimalDiagramClassifier, OptimalTreeClassifier
from odtk.cli import main
from odtk.datasets import from_csv, read_table
from odtk.exceptions import DataError, OdtkWarning

ESTIMATORS = [
    OptimalTreeClassifier(max_depth=1, initial_tree="cart", time_limit=30),
    OptimalDiagramClassifier(skeleton="1-2", univariate=True, strategy="heuristic", heuristic_time=0.5),
    CategoricalTreeClassifier(topology="depth-2", bins=2, time_limit=30),
]
ENTRIES = ["solve", *ESTIMATORS]  # odtk.solve((X, y)) and each estimator's fit
NAMES = ["solve", "tree", "diagram", "categorical"]
SOLVE = ["solve", "--model", "flowoct", "--depth", "1", "--time-limit", "30", "--quiet"]


@pytest.fixture
def data() -> tuple[pd.DataFrame, np.ndarray]:
    """Column ``a`` separates the classes (no: 1–3, yes: 7–9); ``b`` is mostly zeros."""
    a = np.tile([1, 2, 3, 7, 8, 9], 7)
    b = np.where(np.arange(len(a)) % 5 == 0, np.arange(len(a)) % 3 + 1, 0)
    return pd.DataFrame({"a": a, "b": b}), np.where(a > 5, "yes", "no")


def fit(entry, X, y) -> float:
    """The training accuracy of ``entry`` fitted on ``(X, y)``."""
    if entry == "solve":
        return odtk.solve("flowoct", (X, y), depth=1, time_limit=30).train_accuracy
    estimator = clone(entry).fit(X, y)
    return float(np.mean(estimator.predict(X) == np.ravel(np.asarray(y))))


def odtk_cli(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args], prog_name="odtk")


def assert_one_error_line(run, *words: str) -> None:
    """Exit code 1, and stderr one line ``odtk: error: ...`` holding every word."""
    assert run.exit_code == 1, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odtk: error: "), run.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
@pytest.mark.parametrize("column", [lambda y: pd.DataFrame({"label": y}), lambda y: y.reshape(-1, 1)],
                         ids=["one-column DataFrame", "(n, 1) array"])
def test_a_column_y_is_accepted_with_scikit_learns_warning(data, entry, column):
    X, y = data
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed when a 1d array was expected"):
        assert fit(entry, X, column(y)) == 1.0


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
@pytest.mark.parametrize("container", [sparse.csr_matrix, sparse.csc_array, sparse.coo_matrix])
def test_sparse_X_is_made_dense(data, entry, container):
    X, y = data
    X_sparse = container(X.to_numpy())
    assert fit(entry, X_sparse, y) == 1.0
    if entry != "solve":  # predict takes sparse rows too, as the dense ones
        estimator = clone(entry).fit(X.to_numpy(), y)
        assert np.array_equal(estimator.predict(X_sparse), estimator.predict(X.to_numpy()))
        assert np.array_equal(estimator.predict_proba(X_sparse), estimator.predict_proba(X.to_numpy()))


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_sparse_X_too_large_to_make_dense_is_refused_in_one_line(data, entry, monkeypatch):
    X, y = data
    monkeypatch.setattr("odtk.pipeline.encode.free_memory", lambda: 1000)  # bytes
    with pytest.raises(DataError) as error:
        fit(entry, sparse.csr_matrix(X.to_numpy()), y)
    message = str(error.value)
    assert "\n" not in message and "sparse matrix of 42 × 2 values" in message
    assert "more than half the" in message and "pass a sample of the rows or fewer columns" in message


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
@pytest.mark.parametrize("missing", [np.nan, None])
def test_a_missing_label_is_named_in_y(data, entry, missing):
    X, y = data
    y = y.astype(object)
    y[3] = missing
    with pytest.raises(DataError, match=r"^y has missing labels in 1 row \(first: row 3\); drop those rows"):
        fit(entry, X, y)


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
@pytest.mark.parametrize("empty", [lambda X: X[[]], lambda X: np.empty((len(X), 0))], ids=["DataFrame", "array"])
def test_X_without_columns_is_named_X(data, entry, empty):
    X, y = data
    with pytest.raises(DataError, match=r"^X has no columns: .*; pass at least one feature column\.$"):
        fit(entry, empty(X), y)


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_y_of_several_columns_or_X_of_one_dimension_are_named(data, entry):
    X, y = data
    with pytest.raises(ValueError, match=r"y must hold one class label per row; got shape \(42, 2\)|"
                                         r"y should be a 1d array"):
        fit(entry, X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match=r"X must be 2-D|Reshape your data"):
        fit(entry, X["a"].to_numpy(), y)


DATES = {
    "datetime64": lambda a: pd.Timestamp("2024-01-01") + pd.to_timedelta(a, unit="D"),
    "datetime64 with a time zone": lambda a: pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(a, unit="h"),
    "timedelta64": lambda a: pd.to_timedelta(a, unit="D"),
    "date objects": lambda a: (pd.Timestamp("2024-01-01") + pd.to_timedelta(a, unit="D")).dt.date,
}


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
@pytest.mark.parametrize("kind", DATES)
def test_a_column_of_dates_is_refused_with_the_fix(data, entry, kind):
    """Dates were one-hot encoded as categories, and then every training row reported as an unseen
    category: now the column is refused, naming it and the fix."""
    X, y = data
    X = X.assign(when=DATES[kind](X["a"]))
    with pytest.raises(DataError, match=r"^Column 'when' of X holds dates or times .*; convert it to numbers "
                                        r"\(e\.g\. days since a start date\) or drop it\.$"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", OdtkWarning)  # no training row reported unseen
            fit(entry, X, y)


def test_dates_as_text_are_refused_unless_declared_categorical(data):
    X, y = data
    frame = X.assign(when=(pd.Timestamp("2024-01-01") + pd.to_timedelta(X["a"], unit="D")).astype(str), y=y)
    with pytest.raises(DataError, match=r"^Column 'when' of 'dataframe' holds dates as text \(e\.g\. '2024-01-02'\)"
                                        r".*declare it categorical"):
        odtk.solve("flowoct", frame, target="y", depth=1, time_limit=30)
    with pytest.raises(DataError, match="^Column 'when' of X holds dates as text"):
        odtk.solve("flowoct", (frame.drop(columns="y"), y), depth=1, time_limit=30)
    declared = CategoricalTreeClassifier(topology="depth-2", bins=2, categorical=["when"], time_limit=30)
    assert declared.fit(frame.drop(columns="y"), y).score(frame.drop(columns="y"), y) == 1.0


@pytest.fixture
def dates_csv(tmp_path: Path, data) -> Path:
    X, y = data
    path = tmp_path / "dates.csv"
    when = (pd.Timestamp("2024-01-01") + pd.to_timedelta(X["a"], unit="D")).dt.strftime("%Y-%m-%d")
    X.assign(when=when, y=y).to_csv(path, index=False)
    return path


def test_a_csv_column_of_iso_dates_is_refused_on_the_command_line(tmp_path, dates_csv):
    run = odtk_cli(*SOLVE, "--csv", dates_csv, "--target", "y", "--output", tmp_path / "m.json")
    assert_one_error_line(run, "Column 'when' of 'dates' holds dates as text (e.g. '2024-01-02')",
                          "convert it to numbers", "or drop it", "--categorical when")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dates.csv"]
    run = odtk_cli(*SOLVE, "--csv", dates_csv, "--target", "y", "--categorical", "when")
    assert run.exit_code == 0 and "accuracy    1.0000 on 42 training samples" in run.stdout, run.output


def _thousands_csv(path: Path, data, decimals: bool) -> Path:
    """Column ``amount`` separates the classes and is written with thousands separators
    (``"2,002"`` … ``"9,009"``, and plain numbers below 1000); with ``decimals``, column
    ``weight`` writes decimals with a point."""
    X, y = data
    amount = [f"{value:,}" for value in X["a"] * 1001 - np.where(X["a"] == 1, 500, 0)]
    frame = pd.DataFrame({"amount": amount, "y": y})
    if decimals:
        frame.insert(1, "weight", (X["b"] + 0.5).round(1))
    frame.to_csv(path, index=False)
    assert '"2,002"' in path.read_text() and "\n501," in path.read_text()
    return path


def test_thousands_separators_are_read_as_numbers_with_a_notice(tmp_path, data):
    """The file writes decimals with a point, so ``"1,001"`` is 1001: the column is numeric and its
    threshold separates the classes (read as categories, the depth-1 tree scored 0.67)."""
    path = _thousands_csv(tmp_path / "amounts.csv", data, decimals=True)
    run = odtk_cli(*SOLVE, "--csv", path, "--target", "y", "--output", tmp_path / "m.json")
    assert run.exit_code == 0, run.output
    assert run.stderr.splitlines() == [f"odtk: warning: Column 'amount' of CSV file '{path}' is read as numbers "
                                       "written with thousands separators ('2,002' as 2002)."]
    assert "amount<=" in run.stdout and "accuracy    1.0000 on 42 training samples" in run.stdout
    predicted = tmp_path / "p.csv"
    run = odtk_cli("predict", "--model-file", tmp_path / "m.json", "--csv", path, "--output", predicted)
    assert run.exit_code == 0, run.output
    assert (pd.read_csv(predicted)["prediction"] == data[1]).all()


def test_ambiguous_thousands_separators_stay_text_with_a_hint(tmp_path, data):
    """Without a decimal point in the file, ``"2,002"`` may be 2.002 written with a decimal comma:
    the column stays text, and a warning names it and says how to write it as numbers."""
    path = _thousands_csv(tmp_path / "amounts.csv", data, decimals=False)
    with pytest.warns(OdtkWarning, match=r"^Column 'amount' of CSV file '.*amounts\.csv' is read as text "
                                         r"\(categories\): its values, such as '2,002', may be numbers with "
                                         r"thousands separators or with decimal commas; write them without"):
        dataset = from_csv(path, "y")
    assert dataset.kinds["amount"] == "categorical"


@pytest.mark.parametrize(("text", "values"), [
    ('n,m\n"1,234,567",1\n12,2\n', [1234567, 12]),  # several groups: no decimal comma
    ('n,m\n"1,234.5",1\n"-2,000",2\n', [1234.5, -2000.0]),  # a decimal point in the column
    ('n,m\n"1,500",1.5\n7,2.5\n', [1500, 7]),  # a decimal point in another column
    ('n;m\n1,500;1.5\n7;2.5\n', [1500, 7]),  # unquoted, with another separator
])
def test_numbers_with_thousands_separators_read_as_numbers(tmp_path, text, values):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.warns(OdtkWarning, match="read as numbers written with thousands separators"):
        column = read_table(path).columns["n"]
    assert column.dtype.kind in "if" and column.tolist() == values


@pytest.mark.parametrize("text", [
    'n,m\n"1,500",1\n7,2\n',  # 1,500 may be 1.5
    'n,m\n"1,5",1.5\n7,2.5\n',  # not a thousands pattern: a decimal comma
    'n,m\n"1,500",1.5\n1500,2.5\n',  # 1500 written both ways: not one format
    'n,m\n"1,500",1.5\nabc,2.5\n',  # text
])
def test_other_commas_in_numbers_stay_text(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OdtkWarning)
        assert read_table(path).columns["n"].dtype.kind == "O"
