"""Bundled datasets, DataFrame/CSV adapters, feature encoding and splits."""
from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtk.datasets import (Dataset, DatasetInfo, FeatureEncoder, from_csv, from_dataframe, list_datasets,
                           load_dataset, read_csv, read_table, train_val_test_split)
from odtk.datasets.catalog import _catalog, data_dir
from odtk.exceptions import DataError, OdtkWarning

# ---------------------------------------------------------------- catalog


def test_catalog_matches_loaded_data():
    infos = list_datasets()
    assert len({info.name for info in infos}) == len(infos) == 104
    for info in infos:
        ds = load_dataset(info.name)
        loaded = (ds.n_rows, ds.n_features, len(ds.classes), ds.kind, ds.name)
        assert loaded == (info.n_rows, info.n_features, info.n_classes, info.kind, info.name), info.name
        assert info.name.startswith(info.collection + "/")
        assert set(ds.kinds) == set(ds.features.columns)
        assert ds.target.name not in ds.features.columns


_opened: list[str] | None = None  # while recording: every file opened (the audit hook below)


def _record_open(event: str, args: tuple) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], (str, os.PathLike)):
        _opened.append(os.fspath(args[0]))


def data_files_opened_by(call) -> list[str]:
    """The files in the bundled data folder that ``call()`` opens, relative to it, in order."""
    global _opened
    if not getattr(data_files_opened_by, "hooked", False):
        sys.addaudithook(_record_open)  # hooks stay for the session: this one only acts while recording
        data_files_opened_by.hooked = True
    folder = Path(os.fspath(data_dir())).resolve()
    _opened = []
    try:
        call()
        opened = [Path(path).resolve() for path in _opened]
    finally:
        _opened = None
    return [path.relative_to(folder).as_posix() for path in opened if path.is_relative_to(folder)]


def test_collections_and_listing_opens_no_data_file():
    # listing stays fast on any machine because it reads the catalog alone, never a data file
    _catalog.cache_clear()  # read the catalog again, under watch
    assert data_files_opened_by(list_datasets) == ["catalog.csv"]
    # the watch does see a data file being read
    assert data_files_opened_by(lambda: load_dataset("flowoct/monk1")) == ["flowoct/monk1_enc.csv"]
    infos = list_datasets()
    assert isinstance(infos[0], DatasetInfo)
    counts = pd.Series([info.collection for info in infos]).value_counts().to_dict()
    assert counts == {"binary": 26, "flowoct": 16, "uci": 54, "consistent": 8}


@pytest.mark.parametrize("name, shape, n_classes, kind", [
    ("binary/anneal", (812, 93), 2, "binary"),
    ("binary/mushroom", (8124, 119), 2, "binary"),
    ("binary/compas", (7214, 27), 2, "binary"),
    ("flowoct/monk1", (124, 15), 2, "binary"),
    ("flowoct/car-evaluation", (1728, 19), 4, "binary"),
    ("flowoct/monk2-categorical", (169, 6), 2, "categorical"),
    ("uci/iris", (150, 4), 3, "numeric"),
    ("consistent/wine", (178, 13), 3, "numeric"),
    ("consistent/mouse", (70, 45), 2, "binary"),
    ("consistent/car", (1728, 6), 4, "numeric"),
])
def test_documented_shapes(name, shape, n_classes, kind):
    ds = load_dataset(name)
    assert (ds.n_rows, ds.n_features) == shape
    assert len(ds.classes) == n_classes
    assert ds.kind == kind
    assert ds.features.index.equals(pd.RangeIndex(ds.n_rows))


def test_headerless_names_and_integer_labels():
    anneal = load_dataset("binary/anneal")
    assert list(anneal.features.columns[:3]) == ["f0", "f1", "f2"]
    assert anneal.target.name == "class"
    iris = load_dataset("consistent/iris")  # labels stored as 0.0, 1.0, 2.0
    assert iris.classes == [0, 1, 2]
    assert iris.target.dtype == np.int64


def test_uci_monks_class_is_column_zero():
    ds = load_dataset("uci/monks1")
    assert ds.target.name == "class" and ds.classes == [-1, 0]  # the file's column 0: MONK's class 0/1 minus 1
    assert list(ds.features.columns) == ["a1_2", "a1_3", "a2_2", "a2_3", "a3_2", "a4_2", "a4_3", "a5_2", "a5_3",
                                         "a5_4", "a6_2"]  # the file's y is attribute a6 (a6 = 2)
    for k in (1, 2, 3):  # the names fit the problems' target concepts (MONK-3's training rows have 5 % noise)
        ds = load_dataset(f"uci/monks{k}")
        a = {i: 1 + sum(v * ds.features.get(f"a{i}_{v + 1}", 0) for v in (1, 2, 3)) for i in range(1, 7)}
        concept = {1: (a[1] == a[2]) | (a[5] == 1), 2: sum((a[i] == 1).astype(int) for i in a) == 2,
                   3: ((a[5] == 3) & (a[4] == 1)) | ((a[5] != 4) & (a[2] != 3))}[k]
        assert ((ds.target + 1) == concept).mean() >= (1.0 if k < 3 else 0.98)


_NAME = r"[A-Za-z][A-Za-z0-9_]*"


def test_uci_catalog_names_apply_to_the_files():
    """Every rename names an existing column (a prefix rule at least one), names are unique
    identifiers, and every class label has a name where the catalog names classes."""
    import re

    for name, entry in _catalog().items():
        if not (entry.rename or entry.class_names):
            continue
        with (data_dir() / entry.info.path).open("rb") as handle:
            header = list(pd.read_csv(handle, nrows=0).columns)
        for old in entry.rename:
            assert (any(c.startswith(old[:-1]) for c in header) if old.endswith("*") else old in header), (name, old)
        ds = load_dataset(name)
        columns = [*ds.features.columns, ds.target.name]
        assert len(set(columns)) == len(columns) == len(header), name
        new = [c for c in columns if c not in header]
        assert all(re.fullmatch(_NAME, c) for c in new), (name, new)
        if entry.class_names:
            assert set(ds.classes) <= set(entry.class_names.values()), name


def test_uci_names_and_class_names():
    iris = load_dataset("uci/iris")
    assert list(iris.features.columns) == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert iris.classes == ["setosa", "versicolor", "virginica"]
    assert iris.target.value_counts().to_dict() == {"setosa": 50, "versicolor": 50, "virginica": 50}
    assert iris.features.groupby(iris.target).petal_length.max()["setosa"] < 2
    wine = load_dataset("uci/wine")
    assert list(wine.features.columns) == [
        "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
        "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315", "proline"]
    assert wine.target.value_counts().to_dict() == {"class_2": 71, "class_1": 59, "class_3": 48}
    wdbc = load_dataset("uci/breast-cancer-diagnostic")
    assert (wdbc.features.columns[[0, 9, 10, 29]] == ["radius_mean", "fractal_dimension_mean", "radius_se",
                                                      "fractal_dimension_worst"]).all()
    assert wdbc.target.value_counts().to_dict() == {"benign": 357, "malignant": 212}
    car = load_dataset("uci/car-evaluation")
    assert car.target.value_counts().to_dict() == {"unacc": 1210, "acc": 384, "good": 69, "vgood": 65}
    assert "buying_vhigh" in car.features.columns and "lug_boot_small" in car.features.columns
    unnamed = load_dataset("uci/connectionist-vowel")  # no names in the UCI documentation: left numbered
    assert list(unnamed.features.columns) == [str(j) for j in range(10)] and unnamed.classes == list(range(11))


def test_uci_names_fit_the_data():
    """Relations that only hold if the columns carry the right names."""
    seeds = load_dataset("uci/seeds").features  # compactness = 4 pi area / perimeter^2
    assert np.allclose(seeds.compactness, 4 * np.pi * seeds.area / seeds.perimeter ** 2, atol=2e-3)
    balance = load_dataset("uci/balance-scale")  # weights and distances stored as 0-4
    x = balance.features + 1
    tips = np.sign(x.right_weight * x.right_distance - x.left_weight * x.left_distance)
    assert (balance.target == tips.map({-1: "L", 0: "B", 1: "R"})).all()
    voice = load_dataset("uci/parkinsons").features  # Jitter:DDP = 3 RAP, Shimmer:DDA = 3 APQ3
    assert np.allclose(voice.jitter_ddp, 3 * voice.mdvp_rap, atol=1e-4)
    assert np.allclose(voice.shimmer_dda, 3 * voice.shimmer_apq3, atol=1e-4)
    for name in ("uci/breast-cancer-diagnostic", "uci/breast-cancer-prognostic"):
        cells = load_dataset(name).features  # nuclei are roughly round; "worst" is the largest
        assert 6.2 < (cells.perimeter_mean / cells.radius_mean).median() < 6.8
        assert 0.9 < (cells.area_mean / (np.pi * cells.radius_mean ** 2)).median() < 1.1
        assert (cells.radius_worst >= cells.radius_mean).all() and (cells.area_worst >= cells.area_mean).all()
    ttt = load_dataset("uci/tic-tac-toe")  # positive: x has three in a row
    squares = ["top_left", "top_middle", "top_right", "middle_left", "middle_middle", "middle_right",
               "bottom_left", "bottom_middle", "bottom_right"]
    x = ttt.features[[f"{square}_x" for square in squares]].to_numpy()
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    wins = np.any([x[:, list(line)].all(axis=1) for line in lines], axis=0)
    assert ((ttt.target == "positive") == wins).all()
    thyroid = load_dataset("uci/thyroid-ann").features
    assert (thyroid.sex_male[thyroid.pregnant == 1] == 0).all()
    hormones = load_dataset("uci/thyroid-new")
    tsh = hormones.features.basal_tsh.groupby(hormones.target).median()
    assert tsh["hypo"] > tsh["normal"] >= tsh["hyper"]


def test_categorical_flowoct_files_read_with_bom():
    ds = load_dataset("flowoct/monk1-categorical")
    assert list(ds.features.columns) == [f"Feat_{j}" for j in range(6)]
    assert set(ds.kinds.values()) == {"categorical"}


def test_bare_name_resolution():
    assert load_dataset("anneal").name == "binary/anneal"
    assert load_dataset("Mushroom").name == "binary/mushroom"
    assert load_dataset("flowoct/car_evaluation").name == "flowoct/car-evaluation"
    with pytest.raises(DataError, match="ambiguous") as info:
        load_dataset("monk1")
    assert "flowoct/monk1," in str(info.value) or "flowoct/monk1." in str(info.value)
    assert "consistent/monk1" in str(info.value)


def test_ambiguous_name_lists_candidates():
    with pytest.raises(DataError) as info:
        load_dataset("iris")
    assert "uci/iris" in str(info.value) and "consistent/iris" in str(info.value)


def test_unknown_name_suggests_close_matches():
    with pytest.raises(DataError, match=r"Unknown dataset 'anneall'.*odtk datasets.*close matches: .*anneal"):
        load_dataset("anneall")
    with pytest.raises(DataError, match="no close matches"):
        load_dataset("zzzzzzzz")


# ---------------------------------------------------------------- adapters


def test_from_dataframe_kinds_and_properties():
    df = pd.DataFrame({"b": [0, 1, 1, 0], "x": [1.5, 2.0, 3.0, 4.0], "c": ["r", "g", "r", "b"],
                       "k": [1, 2, 1, 2], "y": ["no", "yes", "yes", "no"]})
    ds = from_dataframe(df, "y", categorical=["k"])
    assert ds.kinds == {"b": "binary", "x": "numeric", "c": "categorical", "k": "categorical"}
    assert ds.kind == "mixed" and ds.classes == ["no", "yes"]
    assert (ds.n_rows, ds.n_features) == (4, 4)
    sub = ds.subset(np.array([3, 1]))
    assert sub.target.tolist() == ["no", "yes"] and sub.features["x"].tolist() == [4.0, 2.0]
    assert list(sub.features.index) == [0, 1]


def test_from_dataframe_positional_target():
    df = pd.DataFrame({"a": [0, 1, 0], "b": [1.0, 2.0, 3.0], "t": [1, 2, 1]})
    assert from_dataframe(df, -1).target.name == "t"
    assert from_dataframe(df, 0).target.name == "a"
    numbered = pd.DataFrame([[5, 0, 1], [6, 1, 0]], columns=[2, 0, 1])
    assert from_dataframe(numbered, 0).target.tolist() == [0, 1]  # a column name wins over a position
    with pytest.raises(DataError, match="out of range"):
        from_dataframe(df, 7)


def test_kind_summary():
    df = pd.DataFrame({"a": [0, 1], "b": [0.5, 2.0], "t": [0, 1]})
    assert from_dataframe(df[["a", "t"]], "t").kind == "binary"
    assert from_dataframe(df, "t").kind == "numeric"
    assert from_dataframe(df, "t", categorical=["b"]).kind == "categorical"


@pytest.mark.parametrize("frame, target, message", [
    (pd.DataFrame({"a": [], "t": []}), "t", "no rows"),
    (pd.DataFrame({"t": [0, 1]}), "t", "no feature columns"),
    (pd.DataFrame({"a": [0, 1], "t": [0, 1]}), "label", r"'label' not found; available columns: 'a', 't'"),
    (pd.DataFrame({"a": [0, np.nan, np.nan], "t": [0, 1, 1]}), "t", r"'a'.*missing values in 2 rows.*drop"),
    (pd.DataFrame({"a": [0.0, np.inf], "t": [0, 1]}), "t", r"'a'.*infinite values in 1 row"),
    (pd.DataFrame({"a": [0, 1], "t": [3, 3]}), "t", "needs at least two classes"),
    (pd.DataFrame([[0, 1, 0], [1, 0, 1]], columns=["a", "a", "t"]), "t", "duplicate column names 'a'"),
])
def test_dataframe_validation(frame, target, message):
    with pytest.raises(DataError, match=message) as info:
        from_dataframe(frame, target)
    assert "\n" not in str(info.value)


def test_from_csv_sniffs_separator_and_bom(tmp_path):
    path = tmp_path / "shop.csv"
    path.write_text("\ufeffcolour;size;bought\nred;1.5;yes\nblue;2.5;no\nred;3;yes\n", encoding="utf-8")
    ds = from_csv(path, "bought")
    assert ds.name == "shop"
    assert list(ds.features.columns) == ["colour", "size"]
    assert ds.kinds == {"colour": "categorical", "size": "numeric"}
    assert from_csv(path, -1, sep=";", name="x").name == "x"


def test_a_separator_of_more_than_one_byte_is_one_line_naming_the_fix(tmp_path):
    path = tmp_path / "euro.csv"
    path.write_text("a€b\n1€0\n2€1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^The separator must be one ASCII character, got '€'; pass") as info:
        from_csv(path, "b", sep="€")
    assert "\n" not in str(info.value)


def test_from_csv_non_numeric_column_is_categorical(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("code,t\n1,0\n2,1\nA3,0\n", encoding="utf-8")
    assert from_csv(path, "t").kinds == {"code": "categorical"}


@pytest.mark.parametrize("content, target, message", [
    (None, "t", "not found"),
    ("", "t", "is empty"),
    ("a,b,t\n", "t", "no rows"),
    ("a,b,t\n1,2,0\n1,2,3,4\n", "t", "Cannot parse"),
    ("a,b,t\n1,,0\n3,4,1\n", "t", r"'b'.*missing values in 1 row"),
    ("a,b,t\n1,2,0\n3,4,0\n", "t", "needs at least two classes"),
    ("a,b,t\n1,2,0\n3,4,1\n", "y", r"'y' not found; available columns: 'a', 'b', 't'"),
    ("a,b,t\n1,inf,0\n3,4,1\n", "t", r"'b'.*infinite values in 1 row"),
])
def test_csv_validation(tmp_path, content, target, message):
    path = tmp_path / "data.csv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        from_csv(path, target)
    assert "\n" not in str(info.value)
    if message in ("not found", "is empty", "Cannot parse"):  # file-level errors name the file
        assert "data.csv" in str(info.value)


def test_csv_decoding_error(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,t\n\xe9t\xe9,0\n".encode("latin-1") + b"x,1\n")
    with pytest.raises(DataError, match="latin.csv"):
        from_csv(path, "t")


@pytest.mark.parametrize("text, lines", [
    ("a,b\n1,x\n2,y\n", [2, 3]),
    ("\n\na,b\r\n1,x\r\n\r\n  \r\n2,y\r\n", [4, 7]),  # blank lines before and between rows, CRLF
    ('a,b\n1,"x\n\ny"\n\n2,"say ""y"""\n', [2, 6]),  # a quoted value over three lines
    ("a,b\r1,x\r\r2,y\r", [2, 4]),  # old Mac line ends
])
def test_csv_rows_are_labelled_by_the_line_they_start_on(tmp_path, text, lines):
    path = tmp_path / "d.csv"
    path.write_bytes(text.encode())
    table = read_table(path)
    assert table.labels.tolist() == lines and table.label_name == "line"
    assert table.columns["a"].tolist() == [1, 2]


@pytest.mark.parametrize("text, words", [
    ('a,b\n1,"x\ny"\n2\n3,z\n', ["line 4 has 1 fields", "header has 2"]),  # short, after a quoted line break
    ('a,b\n1,"x\ny"\n2,z,9\n', ["line 4 has 3 fields", "header has 2"]),  # long, after a quoted line break
    ("a,b\n1,x\n2,y,\n", ["line 3 has 3 fields", "header has 2"]),
    ('a,b\n1,x\n2,5"11\n', ["line 3", "a quote inside a value", "double quotes"]),
    ('a,b\n1,x\n2,"y"z\n', ["line 3", "goes on after its closing quote", "double quotes"]),
    ('a,b\n1,x\n2,"y\n3,z\n', ["line 3", "a quoted value never ends", "double quotes"]),
    ("a|" * 10_000 + "b\n" + "1|" * 10_000 + "2\n", ["10,001 columns on line 1", "keep the columns that matter"]),
    ("a,b\n1,2\n" + "0," * 10_000 + "0\n", ["10,001 columns on line 3", "keep the columns that matter"]),
])
def test_csv_shape_and_quoting_errors_name_the_line(tmp_path, text, words):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        read_table(path)
    message = str(info.value)
    assert "\n" not in message and "d.csv" in message and all(word in message for word in words), message


def test_csv_numbers_keep_their_texts_apart_when_they_may_be_labels(tmp_path):
    """Up to 1,000 distinct numbers (labels, categories) ``1.0`` and ``1`` stay two values; a
    column of more distinct numbers is a numeric feature, read as pandas reads it."""
    few = [f"{k % 3}.0" if k % 2 else str(k % 3) for k in range(1200)]
    many = [f"{k}.0" if k == 7 else str(k) for k in range(1200)]
    path = tmp_path / "d.csv"
    pd.DataFrame({"few": few, "many": many}).to_csv(path, index=False)
    table = read_table(path)
    assert table.columns["few"].dtype == object and set(table.columns["few"]) == {"0", "1.0", "2", "0.0", "1", "2.0"}
    assert table.columns["many"].dtype == np.float64 and table.columns["many"].tolist() == list(range(1200))


def test_csv_values_equal_pandas_reading(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((3000, 4)).round(3), columns=list("abcd")).assign(
        n=rng.integers(-5, 5, 3000), flag=rng.random(3000) < 0.5, y=rng.choice(["no", "yes"], 3000))
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False, lineterminator="\r\n")
    read = read_csv(path)
    pd.testing.assert_frame_equal(read.reset_index(drop=True), pd.read_csv(path), check_dtype=False)
    assert read.index.tolist() == list(range(2, 3002))


# ---------------------------------------------------------------- encoder


def test_midpoint_thresholds_exact():
    df = pd.DataFrame({"age": [20, 30, 31, 30, 50]})
    enc = FeatureEncoder().fit(df, {"age": "numeric"})
    assert enc.columns_ == ["age<=25", "age<=30.5", "age<=40.5"]
    assert enc.groups_ == {"age": [0, 1, 2]}
    X = enc.transform(df)
    assert X.dtype == np.int8
    assert X.tolist() == [[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 1, 1], [0, 0, 0]]


def test_value_thresholds_exact():
    """``x > v`` for every distinct value but the largest; integer-coded categories are ordered."""
    df = pd.DataFrame({"age": [20, 30, 31, 30, 50], "grade": [2, 1, 3, 1, 2], "colour": list("rgrgb")})
    kinds = {"age": "numeric", "grade": "categorical", "colour": "categorical"}
    enc = FeatureEncoder(thresholds="values").fit(df, kinds)
    assert enc.columns_ == ["age>20", "age>30", "age>31", "grade>1", "grade>2", "colour=b", "colour=g",
                            "colour=r"]
    assert enc.kinds_ == {"age": "numeric", "grade": "numeric", "colour": "categorical"}
    assert enc.transform(df).tolist() == [[0, 0, 0, 1, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 1, 0],
                                          [1, 1, 0, 1, 1, 0, 0, 1], [1, 0, 0, 0, 0, 0, 1, 0],
                                          [1, 1, 1, 1, 0, 1, 0, 0]]
    assert enc.transform(pd.DataFrame({"age": [25, 99], "grade": [0, 9], "colour": ["r", "r"]}))[:, :5].tolist() \
        == [[1, 0, 0, 0, 0], [1, 1, 1, 1, 1]]
    assert FeatureEncoder(thresholds="values", max_thresholds=1).fit(df, kinds).columns_[:2] == ["age>30", "grade>2"]
    midpoints = FeatureEncoder().fit(df, kinds)  # the same cuts of the training rows, other names
    assert np.array_equal(1 - midpoints.transform(df)[:, :3], enc.transform(df)[:, :3])


def test_threshold_caps():
    df = pd.DataFrame({"x": np.arange(100.0)})
    assert len(FeatureEncoder().fit(df, {"x": "numeric"}).columns_) == 99
    capped = FeatureEncoder(max_thresholds=3).fit(df, {"x": "numeric"})
    assert capped.params_["x"] == [24.5, 49.5, 74.5]
    quant = FeatureEncoder(thresholds="quantiles", max_thresholds=4).fit(df, {"x": "numeric"})
    assert 1 <= len(quant.columns_) <= 4
    assert quant.params_["x"] == [19.5, 39.5, 59.5, 79.5]
    assert len(FeatureEncoder(thresholds="quantiles").fit(df, {"x": "numeric"}).columns_) == 10
    skewed = pd.DataFrame({"x": [0.0] * 90 + list(range(1, 11))})
    assert len(FeatureEncoder(thresholds="quantiles", max_thresholds=5).fit(skewed, {"x": "numeric"}).columns_) < 5


def test_groups_for_dataset_with_all_kinds():
    df = pd.DataFrame({"b": [0, 1, 1], "c": ["red", "blue", "red"], "x": [1.0, 2.0, 4.0], "t": [0, 1, 0]})
    enc = FeatureEncoder().fit(from_dataframe(df, "t"))
    assert enc.columns_ == ["b", "c=blue", "c=red", "x<=1.5", "x<=3"]
    assert enc.groups_ == {"b": [0], "c": [1, 2], "x": [3, 4]}
    assert enc.kinds_ == {"b": "binary", "c": "categorical", "x": "numeric"}
    assert enc.transform(df).tolist() == [[0, 0, 1, 1, 1], [1, 1, 0, 0, 1], [1, 0, 1, 0, 0]]


def test_scaled_mode():
    train = pd.DataFrame({"x": [2.0, 4.0, 6.0], "b": [0, 1, 0], "c": ["u", "v", "u"], "k": [7, 7, 7]})
    enc = FeatureEncoder(mode="scaled").fit(train)
    assert enc.columns_ == ["x", "b", "c=u", "c=v", "k"]
    X = enc.transform(train)
    assert X.dtype == np.float64
    assert X[:, 0].tolist() == [0.0, 0.5, 1.0]
    assert X[:, 4].tolist() == [0.0, 0.0, 0.0]  # constant column maps to 0
    new = pd.DataFrame({"x": [0.0, 5.0, 10.0], "b": [1, 1, 0], "c": ["v", "u", "v"], "k": [1, 7, 9]})
    Y = enc.transform(new)
    assert Y[:, 0].tolist() == [0.0, 0.75, 1.0]
    assert ((Y >= 0) & (Y <= 1)).all()


def test_unseen_category_gives_zero_row_with_a_warning_naming_it():
    enc = FeatureEncoder().fit(pd.DataFrame({"c": ["a", "b"]}), {"c": "categorical"})
    with pytest.warns(OdtkWarning, match=r"Column 'c' has 1 row\(s\) with categories not seen in training \(\['zzz'\]"):
        assert enc.transform(pd.DataFrame({"c": ["b", "zzz"]})).tolist() == [[0, 1], [0, 0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.transform(pd.DataFrame({"c": ["b", "a"]}))  # known categories: silent


def test_transform_errors():
    enc = FeatureEncoder().fit(pd.DataFrame({"x": [1.0, 2.0], "b": [0, 1]}))
    with pytest.raises(DataError, match="Column 'b' used in training is missing"):
        enc.transform(pd.DataFrame({"x": [1.0]}))
    with pytest.raises(DataError, match="'x' has missing values in 1 row"):
        enc.transform(pd.DataFrame({"x": [np.nan], "b": [0]}))
    with pytest.raises(DataError, match="'b' was binary"):
        enc.transform(pd.DataFrame({"x": [1.0], "b": [2]}))


@pytest.mark.parametrize("mode, thresholds", [("binary", "midpoints"), ("binary", "quantiles"),
                                              ("scaled", "midpoints"), ("onehot", "quantiles"),
                                              ("binary", "values"), ("onehot", "values")])
def test_encoder_json_round_trip(mode, thresholds):
    ds = load_dataset("uci/teaching-assistant-evaluation")
    mixed = from_dataframe(pd.concat([ds.features, ds.target.rename("t")], axis=1).assign(
        colour=np.where(ds.target.to_numpy() == "medium", "red", "blue")), "t", categorical=["semester_regular"])
    enc = FeatureEncoder(mode, thresholds, max_thresholds=5).fit(mixed)
    again = FeatureEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))
    assert again.columns_ == enc.columns_ and again.groups_ == enc.groups_ and again.kinds_ == enc.kinds_
    assert np.array_equal(again.transform(mixed), enc.transform(mixed))
    assert again.transform(mixed).dtype == enc.transform(mixed).dtype


def test_encoder_rejects_bad_options():
    with pytest.raises(ValueError, match="mode"):
        FeatureEncoder(mode="ordinal")
    with pytest.raises(ValueError, match="max_thresholds"):
        FeatureEncoder(max_thresholds=0)


# ---------------------------------------------------------------- splits


def test_split_sizes_disjoint_and_covering():
    ds = load_dataset("uci/iris")
    ds = Dataset(ds.name, ds.features.assign(row=np.arange(ds.n_rows)), ds.target, {**ds.kinds, "row": "numeric"})
    train, val, test = train_val_test_split(ds, (0.6, 0.2, 0.2), seed=3)
    assert (train.n_rows, val.n_rows, test.n_rows) == (90, 30, 30)
    rows = [set(part.features["row"]) for part in (train, val, test)]
    assert not (rows[0] & rows[1] or rows[0] & rows[2] or rows[1] & rows[2])
    assert set.union(*rows) == set(range(150))
    for part in (train, val, test):  # stratified: iris has 50 rows per class
        assert part.target.value_counts().tolist() == [part.n_rows // 3] * 3


def test_split_is_deterministic_by_seed():
    ds = load_dataset("flowoct/monk1")
    first = train_val_test_split(ds, seed=7)
    second = train_val_test_split(ds, seed=7)
    other = train_val_test_split(ds, seed=8)
    for a, b in zip(first, second):
        assert a.features.equals(b.features) and a.target.equals(b.target)
    assert not first[0].features.equals(other[0].features)


def test_split_zero_validation_and_rare_class():
    df = pd.DataFrame({"x": np.arange(20.0), "t": [0] * 19 + [1]})
    train, val, test = train_val_test_split(from_dataframe(df, "t"), (0.75, 0.0, 0.25))
    assert (train.n_rows, val.n_rows, test.n_rows) == (15, 0, 5)
    assert list(val.features.columns) == ["x"]


def test_split_without_test_rows_trains_on_every_row():
    """(1, 0, 0): in-sample, every row trains; (0.75, 0.25, 0): no test rows."""
    iris = load_dataset("uci/iris")
    train, val, test = train_val_test_split(iris, (1.0, 0.0, 0.0))
    assert (train.n_rows, val.n_rows, test.n_rows) == (150, 0, 0)
    train, val, test = train_val_test_split(iris, (0.75, 0.25, 0.0), seed=3)
    assert (train.n_rows, val.n_rows, test.n_rows) == (112, 38, 0)


@pytest.mark.parametrize("fractions", [(0.5, 0.5, 0.5), (0.0, 0.5, 0.5), (0.5, 0.6, -0.1), (1.0, -0.2, 0.2),
                                       (0.5, 0.5)])
def test_split_rejects_bad_fractions(fractions):
    with pytest.raises(DataError, match="fractions"):
        train_val_test_split(load_dataset("uci/iris"), fractions)


def test_provenance_file_lists_every_dataset():
    from importlib.resources import files
    text = (files("odtk.datasets") / "DATASETS.md").read_text(encoding="utf-8")
    missing = [info.name for info in list_datasets() if f"| `{info.name}` | {info.n_rows} |" not in text]
    assert missing == []


def test_onehot_mode_gives_one_column_per_value_and_bin_and_names_subsets():
    frame = pd.DataFrame({"age": [18, 25, 33, 41, 58, 60, 72, 80], "colour": list("rgbrgbrg"),
                          "member": [0, 1, 0, 1, 1, 0, 0, 1]})
    enc = FeatureEncoder("onehot", max_thresholds=3).fit(frame)
    X = enc.transform(frame)
    assert X.dtype == np.int8 and len(enc.groups_["age"]) == 4 and len(enc.groups_["member"]) == 2
    for columns in enc.groups_.values():  # exactly one 1 per row and group
        assert (X[:, columns].sum(axis=1) == 1).all()
    age, thresholds = enc.groups_["age"], enc.params_["age"]
    assert enc.subset_text(age[:2]) == f"age <= {thresholds[1]:.6g}"
    assert enc.subset_text(age[2:]) == f"age > {thresholds[1]:.6g}"
    assert enc.subset_text(age[1:3]) == f"{thresholds[0]:.6g} < age <= {thresholds[2]:.6g}"
    assert enc.subset_text(enc.groups_["colour"][:2]) == "colour in {b, g}"
    assert enc.subset_text(enc.groups_["member"][1:]) == "member = 1"
    with pytest.warns(OdtkWarning, match="purple"):
        unseen = enc.transform(pd.DataFrame({"age": [200], "colour": ["purple"], "member": [1]}))
    assert unseen[0, age[-1]] == 1 and unseen[0, enc.groups_["colour"]].sum() == 0
