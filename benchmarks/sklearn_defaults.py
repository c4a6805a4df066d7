"""odtk's estimators with their default parameters on scikit-learn's bundled datasets, beside
scikit-learn's CART, STreeD (``pystreed``) and DL8.5 (``pydl8.5``).

Breast cancer (569 rows, 30 numeric features, 2 classes), wine (178, 13, 3) and iris (150, 4,
3), each split 75 / 25 stratified (seed 0). Every odtk estimator runs with its defaults at
depth 2 (``OptimalTreeClassifier``'s default depth) plus ``time_limit`` for the MILPs: every
tree model (FlowOCT, BendersOCT, OCT, BinOCT, the CP search), ``OptimalDiagramClassifier``
(skeleton ``1-2-4-8``) and ``CategoricalTreeClassifier`` (binary targets only: breast cancer).
CART is ``DecisionTreeClassifier(max_depth=2)`` on the raw features; STreeD and DL8.5 are
given the binary features odtk's default encoding makes (about ten quantile thresholds per
feature plus CART's), as neither binarises numeric features the same way by itself.

Columns: training and test accuracy, wall seconds of ``fit``, and the status (``optimal`` when
the bound met the objective). ``CHECK`` lines (exit status 1) flag a tree model of depth 2
less accurate on the training data than CART: the default encoding keeps CART's thresholds and
the MILPs start from CART's or the CP search's tree, so that must not happen.

    python benchmarks/sklearn_defaults.py [--time-limit 60] [--datasets breast_cancer wine iris]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import sklearn.datasets
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from odtk import CategoricalTreeClassifier, OptimalDiagramClassifier, OptimalTreeClassifier

DEPTH = 2
TREE_MODELS = ["flowoct", "benders", "oct", "binoct", "cp"]


def peers(encoded_train: Any, y_train: Any) -> dict[str, Callable[[], Any]]:
    """Fitted-on-call peer classifiers (on odtk's binary features)."""
    from pydl85 import DL85Classifier
    from pystreed import STreeDClassifier

    def dl85() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return DL85Classifier(max_depth=DEPTH).fit(encoded_train, y_train)

    return {"pystreed": lambda: STreeDClassifier(max_depth=DEPTH).fit(encoded_train, y_train),
            "pydl8.5": dl85}


def row(name: str, fit: Callable[[], Any], train: tuple, test: tuple) -> dict[str, Any]:
    """Fit, time and score one classifier."""
    start = time.perf_counter()
    fitted = fit()
    seconds = time.perf_counter() - start
    result = getattr(fitted, "result_", None)
    return {"model": name, "train": fitted.score(*train), "test": fitted.score(*test),
            "seconds": seconds, "status": result.termination if result is not None else ""}


def run(dataset: str, time_limit: float) -> pd.DataFrame:
    X, y = getattr(sklearn.datasets, f"load_{dataset}")(return_X_y=True, as_frame=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    train, test = (X_train, y_train), (X_test, y_test)
    rows = [row("sklearn CART", lambda: DecisionTreeClassifier(max_depth=DEPTH, random_state=0).fit(*train),
                train, test)]
    for model in TREE_MODELS:
        limit = {} if model == "cp" else {"time_limit": time_limit}
        rows.append(row(f"odtk {model}",
                        lambda model=model, limit=limit: OptimalTreeClassifier(model=model, **limit).fit(*train),
                        train, test))
    rows.append(row("odtk odd 1-2-4-8", lambda: OptimalDiagramClassifier(time_limit=time_limit).fit(*train),
                    train, test))
    if y.nunique() == 2:
        rows.append(row("odtk categorical", lambda: CategoricalTreeClassifier(time_limit=time_limit).fit(*train),
                        train, test))
    encoder = OptimalTreeClassifier(model="cp").fit(*train).model_.encoder
    encoded_train, encoded_test = encoder.transform(X_train), encoder.transform(X_test)
    for name, fit in peers(encoded_train, y_train).items():
        rows.append(row(name, fit, (encoded_train, y_train), (encoded_test, y_test)))
    return pd.DataFrame(rows).assign(dataset=dataset)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per MILP fit (default 60)")
    parser.add_argument("--datasets", nargs="+", default=["breast_cancer", "wine", "iris"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    failures = 0
    for dataset in args.datasets:
        table = run(dataset, args.time_limit)
        print(table.to_string(index=False, formatters={"train": "{:.3f}".format, "test": "{:.3f}".format,
                                                        "seconds": "{:.1f}".format}), flush=True)
        cart = table.loc[table.model == "sklearn CART", "train"].iloc[0]
        for _, worse in table[table.model.str.startswith("odtk") & ~table.model.str.contains("odd|categorical")
                              & (table.train < cart - 1e-12)].iterrows():
            print(f"CHECK {dataset}: {worse.model} training accuracy {worse.train:.3f} below CART's {cart:.3f}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
